/**
 * The page table. To add a page: create `pages/<name>/<name>-page.tsx`, then point its entry
 * here at it (replacing the ComingSoonPage). The sidebar is generated from the `nav` members.
 */
import type { ReactNode } from 'react';
import type { IconName } from './components/icons.js';
import { ComingSoonPage } from './pages/coming-soon/coming-soon-page.js';
import { MarketplacePage } from './pages/marketplace/marketplace-page.js';
import { MessagesPage } from './pages/messages/messages-page.js';
import { PatientsPage } from './pages/patients/patients-page.js';
import { WebhooksPage } from './pages/webhooks/webhooks-page.js';
import { matchPath, type RouteParams } from './router.js';
import type { Me } from './session.js';

export interface RouteContext {
  me: Me;
  params: RouteParams;
}

export type NavSection = 'main' | 'admin';

export interface AppRoute {
  /** A path pattern; `:name` segments become params. First match wins, so list specific paths first. */
  path: string;
  /** Document title (and the default page heading). */
  title: string;
  /** Present for routes listed in the sidebar; the entry is active on this path and below it. */
  nav?: { label: string; section: NavSection; icon: IconName };
  /** Only workspace admins see it in the sidebar; others get an explanation instead of the page. */
  adminOnly?: boolean;
  render: (context: RouteContext) => ReactNode;
}

/** Where `/` and sign-in land. */
export const HOME_PATH = '/patients';

export const NAV_SECTIONS: { id: NavSection; label: string }[] = [
  { id: 'main', label: 'Workspace' },
  { id: 'admin', label: 'Admin' },
];

export const routes: AppRoute[] = [
  {
    path: '/calendar',
    title: 'Calendar',
    nav: { label: 'Calendar', section: 'main', icon: 'calendar' },
    render: () => (
      <ComingSoonPage title="Calendar">
        Appointments from your connected Google and Microsoft calendars, with video links and patient context.
      </ComingSoonPage>
    ),
  },
  {
    path: '/messages/:threadId',
    title: 'Messages',
    render: ({ me, params }) => <MessagesPage me={me} threadId={params.threadId} />,
  },
  {
    path: '/messages',
    title: 'Messages',
    nav: { label: 'Messages', section: 'main', icon: 'messages' },
    render: ({ me }) => <MessagesPage me={me} />,
  },
  {
    path: '/marketplace',
    title: 'Marketplace',
    nav: { label: 'Marketplace', section: 'main', icon: 'marketplace' },
    render: ({ me }) => <MarketplacePage me={me} />,
  },
  { path: '/patients/new', title: 'New patient', render: () => <PatientsPage panel={{ mode: 'create' }} /> },
  {
    path: '/patients/:patientId',
    title: 'Edit patient',
    render: ({ params }) => <PatientsPage panel={{ mode: 'edit', patientId: params.patientId }} />,
  },
  {
    path: '/patients',
    title: 'Patients',
    nav: { label: 'Patients', section: 'main', icon: 'patients' },
    render: () => <PatientsPage />,
  },
  {
    path: '/admin/webhooks/:endpointId',
    title: 'Webhook deliveries',
    adminOnly: true,
    render: ({ params }) => <WebhooksPage endpointId={params.endpointId} />,
  },
  {
    path: '/admin/webhooks',
    title: 'Webhooks',
    nav: { label: 'Webhooks', section: 'admin', icon: 'webhooks' },
    adminOnly: true,
    render: () => <WebhooksPage />,
  },
  {
    path: '/admin/health',
    title: 'Health',
    nav: { label: 'Health', section: 'admin', icon: 'health' },
    adminOnly: true,
    render: () => (
      <ComingSoonPage title="Health">The status of every integration this workspace depends on.</ComingSoonPage>
    ),
  },
];

export function resolveRoute(pathname: string): { route: AppRoute; params: RouteParams } | null {
  for (const route of routes) {
    const params = matchPath(route.path, pathname);
    if (params) return { route, params };
  }
  return null;
}
