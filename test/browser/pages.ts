/**
 * Every page of the web app, for the accessibility and small-screen walk (a11y.test.ts). When you
 * add a page, add it here: `path` may use `:patientId` etc., filled from the fixture the walk creates.
 * `ready` is a test id (or text) that shows once the page has loaded its data.
 */
export interface PageEntry {
  name: string;
  path: string;
  ready: { testId: string } | { text: string } | { role: 'heading'; name: string };
  /** Shown without a session. */
  signedOut?: boolean;
}

export const PAGES: PageEntry[] = [
  { name: 'sign-in', path: '/', ready: { role: 'heading', name: 'Sign in' }, signedOut: true },
  { name: 'patients', path: '/patients', ready: { testId: 'patient-row' } },
  { name: 'new patient', path: '/patients/new', ready: { role: 'heading', name: 'New patient' } },
  { name: 'patient record', path: '/patients/:patientId', ready: { testId: 'patient-record' } },
  { name: 'patient appointments', path: '/patients/:patientId?tab=appointments', ready: { testId: 'appointment' } },
  { name: 'calendar', path: '/calendar', ready: { testId: 'connection' } },
  { name: 'calendar day', path: '/calendar?view=day', ready: { testId: 'tasks-sidebar' } },
  { name: 'messages', path: '/messages', ready: { testId: 'thread-list' } },
  { name: 'mail', path: '/mail', ready: { testId: 'mail-list' } },
  { name: 'inbox', path: '/inbox', ready: { testId: 'conversation-list' } },
  { name: 'marketplace', path: '/marketplace', ready: { testId: 'install-count' } },
  { name: 'webhooks', path: '/admin/webhooks', ready: { role: 'heading', name: 'Endpoints' } },
  { name: 'health', path: '/admin/health', ready: { testId: 'health-card' } },
  { name: 'status', path: '/status', ready: { testId: 'status-feature' }, signedOut: true },
  { name: 'members', path: '/admin/members', ready: { testId: 'members-table' } },
  { name: 'admin tokens', path: '/admin/tokens', ready: { role: 'heading', name: 'API tokens' } },
  { name: 'audit log', path: '/admin/audit', ready: { testId: 'audit-table' } },
  { name: 'workspace settings', path: '/admin/settings', ready: { testId: 'settings-form' } },
  { name: 'account', path: '/account', ready: { testId: 'password-form' } },
  {
    name: 'accept invitation',
    path: '/accept-invitation?token=not-a-real-token',
    ready: { testId: 'invitation-ended' },
    signedOut: true,
  },
  {
    name: 'reset password',
    path: '/reset-password?token=not-a-real-token',
    ready: { testId: 'reset-invalid' },
    signedOut: true,
  },
  { name: 'not found', path: '/no-such-page', ready: { testId: 'not-found' } },
];
