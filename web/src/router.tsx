/**
 * The page table, on TanStack Router (typed params, code-based routes). To add a page: add a route
 * below with `staticData.title` (and `adminOnly` / `public` when they apply), add it to `routeTree`,
 * and, if it belongs in the navigation, to `NAV_ITEMS` in `components/nav.ts`.
 */
import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, createRoute, createRouter, Navigate } from '@tanstack/react-router';
import { RootLayout } from './components/root-layout.js';
import { useCurrentMe } from './me-context.js';
import { ComingSoonPage } from './pages/coming-soon/coming-soon-page.js';
import { MarketplacePage } from './pages/marketplace/marketplace-page.js';
import { MessagesPage } from './pages/messages/messages-page.js';
import { NotFoundPage } from './pages/not-found/not-found-page.js';
import { PatientRecordPage, RECORD_TABS, type RecordTab } from './pages/patients/patient-record-page.js';
import { PatientsPage } from './pages/patients/patients-page.js';
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

/** Where `/` and sign-in land. */
export const HOME_PATH = '/patients';

export const rootRoute = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  component: RootLayout,
  notFoundComponent: NotFoundPage,
});

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  component: () => <Navigate to={HOME_PATH} replace />,
});

const calendarRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/calendar',
  staticData: { title: 'Calendar' },
  component: () => (
    <ComingSoonPage title="Calendar">
      Appointments from your connected Google and Microsoft calendars, with video links and patient context.
    </ComingSoonPage>
  ),
});

const messagesRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/messages',
  staticData: { title: 'Messages' },
  component: function MessagesRoute() {
    return <MessagesPage me={useCurrentMe()} />;
  },
});

export const messageThreadRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/messages/$threadId',
  staticData: { title: 'Messages' },
  component: function MessageThreadRoute() {
    const { threadId } = messageThreadRoute.useParams();
    return <MessagesPage me={useCurrentMe()} threadId={threadId} />;
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

const webhooksRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/webhooks',
  staticData: { title: 'Webhooks', adminOnly: true },
  component: () => <WebhooksPage />,
});

export const webhookEndpointRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/webhooks/$endpointId',
  staticData: { title: 'Webhook deliveries', adminOnly: true },
  component: function WebhookEndpointRoute() {
    const { endpointId } = webhookEndpointRoute.useParams();
    return <WebhooksPage endpointId={endpointId} />;
  },
});

const healthRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/admin/health',
  staticData: { title: 'Health', adminOnly: true },
  component: () => (
    <ComingSoonPage title="Health">The status of every integration this workspace depends on.</ComingSoonPage>
  ),
});

const routeTree = rootRoute.addChildren([
  indexRoute,
  calendarRoute,
  messagesRoute,
  messageThreadRoute,
  marketplaceRoute,
  patientsRoute,
  newPatientRoute,
  patientRoute,
  webhooksRoute,
  webhookEndpointRoute,
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
