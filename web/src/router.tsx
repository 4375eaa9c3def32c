/**
 * The page table, on TanStack Router (typed params, code-based routes). To add a page: add a route
 * below with `staticData.title` (and `adminOnly` / `public` when they apply), add it to `routeTree`,
 * and, if it belongs in the navigation, to `NAV_ITEMS` in `components/nav.ts`.
 */
import type { QueryClient } from '@tanstack/react-query';
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Navigate,
} from '@tanstack/react-router';
import { z } from 'zod';
import { RootLayout } from './components/root-layout.js';
import { useCurrentMe, useOptionalMe } from './me-context.js';
import { AccountPage } from './pages/account/account-page.js';
import { AuditPage } from './pages/admin/audit-page.js';
import { MembersPage } from './pages/admin/members-page.js';
import { SettingsPage } from './pages/admin/settings-page.js';
import { AdminTokensPage } from './pages/admin/tokens-page.js';
import { CHANNEL_LIST, type Channel } from './pages/inbox/inbox-api.js';
import { InboxPage } from './pages/inbox/inbox-page.js';
import { MailPage } from './pages/mail/mail-page.js';
import { MarketplacePage } from './pages/marketplace/marketplace-page.js';
import { MessagesPage } from './pages/messages/messages-page.js';
import { NotFoundPage } from './pages/not-found/not-found-page.js';
import { PatientRecordPage, RECORD_TABS, type RecordTab } from './pages/patients/patient-record-page.js';
import { PatientsPage } from './pages/patients/patients-page.js';
import { AcceptInvitationPage } from './pages/public/accept-invitation-page.js';
import { ResetPasswordPage } from './pages/public/reset-password-page.js';
import { WebhooksPage } from './pages/webhooks/webhooks-page.js';
import { queryClient } from './query-client.js';

declare module '@tanstack/react-router' {
  interface StaticDataRouteOption {
    /** Document title and default heading. */
    title?: string;
    /** Only workspace admins may open it; others get an explanation instead of the page. */
    adminOnly?: boolean;
    /** Rendered without a session (invitation and password-reset links). */
    public?: boolean;
  }
  interface Register {
    router: typeof router;
  }
}

// The pages with a heavy library of their own come as chunks of their own, fetched when the page is first
// opened (or a link to it hovered: `defaultPreload: 'intent'`): the calendar's FullCalendar, the health
// pages' uPlot. Everything else is in the first bundle. Each route's loader waits for its chunk, so the
// page never renders half-loaded.
const CalendarPage = lazyRouteComponent(() => import('./pages/calendar/calendar-page.js'), 'CalendarPage');
const HealthPage = lazyRouteComponent(() => import('./pages/health/health-page.js'), 'HealthPage');
const StatusPage = lazyRouteComponent(() => import('./pages/health/status-page.js'), 'StatusPage');

/** Where `/` and sign-in land (a provider lands on today's schedule instead: see indexRoute). */
export const HOME_PATH = '/patients';

export const rootRoute = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  component: RootLayout,
  notFoundComponent: NotFoundPage,
});

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  // A provider's day starts with their schedule: today in the day view. Everyone else starts at Patients.
  component: function Home() {
    const me = useOptionalMe();
    return me?.isProvider ? (
      <Navigate to="/calendar" search={{ view: 'day' }} replace />
    ) : (
      <Navigate to={HOME_PATH} replace />
    );
  },
});

const calendarSearch = z.object({
  date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
  view: z.enum(['week', 'day']).optional(),
  scope: z.literal('organization').optional(),
  patient: z.string().min(1).max(100).optional(),
  /** Set by the provider's redirect back after connecting an account: confirmed once, then dropped. */
  connected: z.enum(['google', 'microsoft']).optional(),
});

const calendarRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/calendar',
  staticData: { title: 'Calendar' },
  validateSearch: (search: Record<string, unknown>) => {
    const parsed = calendarSearch.safeParse(search);
    return parsed.success ? parsed.data : {};
  },
  loader: () => CalendarPage.preload?.(),
  component: function CalendarRoute() {
    return <CalendarPage {...calendarRoute.useSearch()} />;
  },
});

const mailRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/mail',
  staticData: { title: 'Mail' },
  component: MailPage,
});

/** An admin's message search (`?q=`): kept in the URL, so opening a hit (another route) and Back keep it. */
const messagesSearch = (search: Record<string, unknown>): { q?: string } =>
  typeof search.q === 'string' && search.q.trim() ? { q: search.q.slice(0, 200) } : {};

const messagesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/messages',
  staticData: { title: 'Messages' },
  validateSearch: messagesSearch,
  component: function MessagesRoute() {
    return <MessagesPage me={useCurrentMe()} searchText={messagesRoute.useSearch().q} />;
  },
});

export const messageThreadRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/messages/$threadId',
  staticData: { title: 'Messages' },
  validateSearch: messagesSearch,
  component: function MessageThreadRoute() {
    const { threadId } = messageThreadRoute.useParams();
    const { q } = messageThreadRoute.useSearch();
    return <MessagesPage me={useCurrentMe()} threadId={threadId} searchText={q} />;
  },
});

const inboxRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/inbox',
  staticData: { title: 'Inbox' },
  validateSearch: (search: Record<string, unknown>): { c?: string; channel?: Channel } => ({
    c: typeof search.c === 'string' && search.c.length <= 100 ? search.c : undefined,
    channel: CHANNEL_LIST.includes(search.channel as Channel) ? (search.channel as Channel) : undefined,
  }),
  component: function InboxRoute() {
    const { c, channel } = inboxRoute.useSearch();
    return <InboxPage me={useCurrentMe()} conversationId={c} channel={channel} />;
  },
});

const marketplaceRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/marketplace',
  staticData: { title: 'Marketplace' },
  component: function MarketplaceRoute() {
    return <MarketplacePage me={useCurrentMe()} />;
  },
});

const patientsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/patients',
  staticData: { title: 'Patients' },
  // The search is kept in the URL: Back from a record finds the list as it was.
  validateSearch: (search: Record<string, unknown>): { q?: string } =>
    typeof search.q === 'string' && search.q.trim() ? { q: search.q.slice(0, 200) } : {},
  component: () => <PatientsPage />,
});

const newPatientRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/patients/new',
  staticData: { title: 'New patient' },
  component: () => <PatientsPage panel={{ mode: 'create' }} />,
});

export const patientRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/patients/$patientId',
  staticData: { title: 'Patient' },
  validateSearch: (search: Record<string, unknown>): { tab?: RecordTab } => ({
    tab: RECORD_TABS.includes(search.tab as RecordTab) ? (search.tab as RecordTab) : undefined,
  }),
  component: function PatientRoute() {
    const { patientId } = patientRoute.useParams();
    const { tab } = patientRoute.useSearch();
    return <PatientRecordPage patientId={patientId} tab={tab ?? 'demographics'} />;
  },
});

// One page for the endpoint list and an endpoint's log (its child routes render nothing of their own): opening an
// endpoint does not remount it, so a signing secret it shows once stays on screen until the admin dismisses it.
const webhooksRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/webhooks',
  staticData: { title: 'Webhooks', adminOnly: true },
  component: WebhooksPage,
});

const webhooksIndexRoute = createRoute({
  getParentRoute: () => webhooksRoute,
  path: '/',
  staticData: { title: 'Webhooks', adminOnly: true },
});

export const webhookEndpointRoute = createRoute({
  getParentRoute: () => webhooksRoute,
  path: '$endpointId',
  staticData: { title: 'Webhook deliveries', adminOnly: true },
});

const healthRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/health',
  staticData: { title: 'Health', adminOnly: true },
  loader: () => HealthPage.preload?.(),
  component: HealthPage,
});

const membersRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/members',
  staticData: { title: 'Members', adminOnly: true },
  component: () => <MembersPage />,
});

const adminTokensRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/tokens',
  staticData: { title: 'API tokens', adminOnly: true },
  component: () => <AdminTokensPage />,
});

const auditSearch = z.object({
  kind: z.string().max(40).optional(),
  actorUserId: z.string().max(100).optional(),
  patientId: z.string().max(100).optional(),
  from: z.string().max(40).optional(),
  to: z.string().max(40).optional(),
});

export const auditRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/audit',
  staticData: { title: 'Audit log', adminOnly: true },
  validateSearch: (search: Record<string, unknown>) => {
    const parsed = auditSearch.safeParse(search);
    return parsed.success ? parsed.data : {};
  },
  component: function AuditRoute() {
    return <AuditPage filter={auditRoute.useSearch()} />;
  },
});

const settingsRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/settings',
  staticData: { title: 'Workspace settings', adminOnly: true },
  component: () => <SettingsPage />,
});

const accountRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/account',
  staticData: { title: 'Your account' },
  component: () => <AccountPage />,
});

const tokenSearch = (search: Record<string, unknown>): { token?: string } => ({
  token: typeof search.token === 'string' ? search.token.slice(0, 200) : undefined,
});

export const acceptInvitationRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/accept-invitation',
  staticData: { title: 'Accept invitation', public: true },
  validateSearch: tokenSearch,
  component: function AcceptInvitationRoute() {
    return <AcceptInvitationPage token={acceptInvitationRoute.useSearch().token ?? ''} />;
  },
});

export const resetPasswordRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/reset-password',
  staticData: { title: 'Reset password', public: true },
  validateSearch: tokenSearch,
  component: function ResetPasswordRoute() {
    return <ResetPasswordPage token={resetPasswordRoute.useSearch().token ?? ''} />;
  },
});

const statusRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/status',
  staticData: { title: 'Status', public: true },
  loader: () => StatusPage.preload?.(),
  component: StatusPage,
});

const routeTree = rootRoute.addChildren([
  statusRoute,
  membersRoute,
  adminTokensRoute,
  auditRoute,
  accountRoute,
  settingsRoute,
  acceptInvitationRoute,
  resetPasswordRoute,
  indexRoute,
  calendarRoute,
  messagesRoute,
  messageThreadRoute,
  mailRoute,
  inboxRoute,
  marketplaceRoute,
  patientsRoute,
  newPatientRoute,
  patientRoute,
  webhooksRoute.addChildren([webhooksIndexRoute, webhookEndpointRoute]),
  healthRoute,
]);

export const router = createRouter({
  routeTree,
  context: { queryClient },
  defaultPreload: 'intent',
  // Data comes from TanStack Query, which already caches; loaders only warm it.
  defaultPreloadStaleTime: 0,
  scrollRestoration: true,
});
