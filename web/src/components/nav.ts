/** The navigation, generated from this list (sidebar on wide screens, a menu on phones). */
import type { IconName } from './icons.js';

export type NavSection = 'main' | 'admin';

export interface NavItem {
  to:
    | '/patients'
    | '/calendar'
    | '/messages'
    | '/mail'
    | '/inbox'
    | '/marketplace'
    | '/admin/members'
    | '/admin/tokens'
    | '/admin/audit'
    | '/admin/webhooks'
    | '/admin/settings'
    | '/admin/health';
  label: string;
  section: NavSection;
  icon: IconName;
  adminOnly?: boolean;
}

export const NAV_SECTIONS: { id: NavSection; label: string }[] = [
  { id: 'main', label: 'Workspace' },
  { id: 'admin', label: 'Admin' },
];

export const NAV_ITEMS: NavItem[] = [
  { to: '/patients', label: 'Patients', section: 'main', icon: 'patients' },
  { to: '/calendar', label: 'Calendar', section: 'main', icon: 'calendar' },
  { to: '/inbox', label: 'Inbox', section: 'main', icon: 'inbox' },
  { to: '/messages', label: 'Messages', section: 'main', icon: 'messages' },
  { to: '/mail', label: 'Mail', section: 'main', icon: 'mail' },
  { to: '/marketplace', label: 'Marketplace', section: 'main', icon: 'marketplace' },
  { to: '/admin/members', label: 'Members', section: 'admin', icon: 'members', adminOnly: true },
  { to: '/admin/tokens', label: 'API tokens', section: 'admin', icon: 'key', adminOnly: true },
  { to: '/admin/audit', label: 'Audit log', section: 'admin', icon: 'audit', adminOnly: true },
  { to: '/admin/webhooks', label: 'Webhooks', section: 'admin', icon: 'webhooks', adminOnly: true },
  { to: '/admin/health', label: 'Health', section: 'admin', icon: 'health', adminOnly: true },
  { to: '/admin/settings', label: 'Settings', section: 'admin', icon: 'settings', adminOnly: true },
];

/** True when `pathname` is `base` or below it (`/patients` is active on `/patients/pat_1`). */
export function isWithin(base: string, pathname: string): boolean {
  return pathname === base || pathname.startsWith(`${base.replace(/\/$/, '')}/`);
}
