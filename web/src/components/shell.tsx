/**
 * The signed-in layout: top bar (brand, search, user menu), navigation (a sidebar on wide screens,
 * a menu on phones) and the current page.
 */
import { Link, Outlet, useMatches, useNavigate, useRouterState } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { Button as AriaButton, Menu, MenuItem, MenuTrigger, Popover, Separator } from 'react-aria-components';
import { HealthBanners } from '../pages/health/health-banners.js';
import { HOME_PATH } from '../router.js';
import { type Me, useSignOut } from '../session.js';
import { CommandPalette } from './command-palette.js';
import { ErrorBoundary } from './error-boundary.js';
import { focusLost } from './focus.js';
import { Icon } from './icons.js';
import { isWithin, NAV_ITEMS, NAV_SECTIONS } from './nav.js';
import { TierBadge } from './tier-badge.js';
import { AppDialog } from './ui/dialog.js';
import { notifyError } from './ui/toast.js';
import { type UnreadCounts, useUnreadCounts } from './unread.js';
import { WorkspaceSwitcher } from './workspace-switcher.js';

export function Shell({ me }: { me: Me }) {
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const matches = useMatches();
  const leaf = matches[matches.length - 1];
  const adminOnly = matches.some((m) => m.staticData?.adminOnly);
  const isAdmin = me.role === 'admin';
  const [menuOpen, setMenuOpen] = useState(false);
  const unread = useUnreadCounts(me, pathname);

  // Move focus to the page when the user goes to another section, so screen readers announce it.
  const mainRef = useRef<HTMLElement>(null);
  const section = pathname.split('/')[1] ?? '';
  const lastSection = useRef(section);
  useEffect(() => {
    if (lastSection.current === section) return;
    lastSection.current = section;
    setMenuOpen(false);
    mainRef.current?.focus({ preventScroll: true });
  }, [section]);
  // Within a section (a record from the list, the list from a record's breadcrumb, a closed panel) the element
  // that had the focus has usually gone with the old page, leaving it on the document: once the new page is
  // rendered (the leaf match, not the URL, which changes first) main takes it. A page that put the focus
  // somewhere itself (its effects run before this one) keeps it; a navigation link that was followed hands it on.
  const shownPath = leaf?.pathname;
  const lastShownPath = useRef(shownPath);
  useEffect(() => {
    if (lastShownPath.current === shownPath) return;
    lastShownPath.current = shownPath;
    if (focusLost() || document.activeElement?.closest('.sidebar')) mainRef.current?.focus({ preventScroll: true });
  }, [shownPath]);

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <AriaButton
          className="icon-button menu-button"
          // The counts are inside the drawer: the button says there is something to read.
          aria-label={unread.total > 0 ? `Menu, ${unread.total} unread` : 'Menu'}
          onPress={() => setMenuOpen(true)}
          data-testid="nav-menu-button"
        >
          <Icon name="menu" />
          {unread.total > 0 ? (
            <span className="menu-badge" aria-hidden="true" data-testid="menu-unread">
              {unread.total > 99 ? '99+' : unread.total}
            </span>
          ) : null}
        </AriaButton>
        <Link to={HOME_PATH} className="brand" aria-label="Atrium home">
          <span className="brand-mark" aria-hidden="true">
            A
          </span>
          <span className="brand-name">Atrium</span>
        </Link>
        <div className="topbar-workspace">
          <span className="workspace-name" data-testid="workspace-name">
            {me.workspace.name}
          </span>
          <TierBadge tier={me.workspace.tier} testId="workspace-tier" />
        </div>
        <div className="topbar-spacer" />
        <CommandPalette />
        <UserMenu me={me} />
      </header>
      <div className="layout">
        <nav className="sidebar" aria-label="Main navigation">
          <NavLinks me={me} pathname={pathname} unread={unread} />
        </nav>
        <AppDialog
          title="Navigation"
          variant="drawer"
          isOpen={menuOpen}
          onOpenChange={setMenuOpen}
          size="small"
          testId="nav-menu"
        >
          <div className="drawer-workspace">
            <span className="workspace-name">{me.workspace.name}</span>
            <TierBadge tier={me.workspace.tier} />
          </div>
          <nav aria-label="Main navigation (menu)">
            <NavLinks me={me} pathname={pathname} unread={unread} onNavigate={() => setMenuOpen(false)} />
          </nav>
        </AppDialog>
        <main id="main" className="main" ref={mainRef} tabIndex={-1}>
          <HealthBanners />
          <ErrorBoundary resetKey={pathname}>
            {adminOnly && !isAdmin ? <AdminOnlyNotice title={leaf?.staticData?.title ?? 'Admin'} /> : <Outlet />}
          </ErrorBoundary>
        </main>
      </div>
    </div>
  );
}

/** The unread badge a navigation item carries: patients' conversations on Inbox, staff threads on Messages. */
const badgeOf = (to: string, unread: UnreadCounts) =>
  to === '/inbox' ? unread.inbox : to === '/messages' ? unread.messages : 0;

function NavLinks({
  me,
  pathname,
  unread,
  onNavigate,
}: {
  me: Me;
  pathname: string;
  unread: UnreadCounts;
  onNavigate?: () => void;
}) {
  const isAdmin = me.role === 'admin';
  return (
    <>
      <WorkspaceSwitcher me={me} />
      {NAV_SECTIONS.map((navSection) => {
        const items = NAV_ITEMS.filter((item) => item.section === navSection.id && (!item.adminOnly || isAdmin));
        if (items.length === 0) return null;
        return (
          <div className="nav-section" key={navSection.id}>
            <h2 className="nav-heading">{navSection.label}</h2>
            <ul>
              {items.map((item) => {
                const active = isWithin(item.to, pathname);
                const badge = badgeOf(item.to, unread);
                return (
                  <li key={item.to}>
                    <Link
                      to={item.to}
                      className={`nav-link${active ? ' active' : ''}`}
                      aria-current={active ? 'page' : undefined}
                      onClick={onNavigate}
                      data-testid={`nav-${item.to.replace(/^\//, '').replace(/\//g, '-')}`}
                    >
                      <Icon name={item.icon} />
                      <span className="nav-label">{item.label}</span>
                      {badge ? (
                        <span className="nav-badge" data-testid="unread-badge">
                          {badge > 99 ? '99+' : badge}
                          <span className="visually-hidden"> unread</span>
                        </span>
                      ) : null}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </div>
        );
      })}
    </>
  );
}

function UserMenu({ me }: { me: Me }) {
  const signOut = useSignOut();
  const navigate = useNavigate();
  return (
    <MenuTrigger>
      <AriaButton className="user-button" data-testid="user-menu" aria-label={`Account: ${me.user.name}`}>
        <span className="avatar" aria-hidden="true">
          {initials(me.user.name)}
        </span>
        <span className="user-name" data-testid="user-name">
          {me.user.name}
        </span>
      </AriaButton>
      <Popover className="popover" placement="bottom end">
        <Menu
          className="menu"
          aria-label="Account"
          onAction={(key) => {
            if (key === 'sign-out') signOut.mutate(undefined, { onError: (error) => notifyError(error) });
            if (key === 'account') void navigate({ to: '/account' });
          }}
        >
          <MenuItem className="menu-header" isDisabled textValue={me.user.name}>
            <span className="menu-title">{me.user.name}</span>
            <span className="muted">
              {me.user.email} · {me.role === 'admin' ? 'Admin' : 'Member'}
            </span>
          </MenuItem>
          <Separator className="menu-separator" />
          <MenuItem className="menu-item" id="account" data-testid="menu-account">
            Account, password and API tokens
          </MenuItem>
          <MenuItem className="menu-item" id="sign-out" data-testid="sign-out">
            Sign out
          </MenuItem>
        </Menu>
      </Popover>
    </MenuTrigger>
  );
}

function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  return ((parts[0]?.[0] ?? '') + (parts.length > 1 ? (parts[parts.length - 1]?.[0] ?? '') : '')).toUpperCase() || '?';
}

function AdminOnlyNotice({ title }: { title: string }) {
  return (
    <section className="page">
      <h1>{title}</h1>
      <div className="notice notice-info" data-testid="admin-only">
        <p>Only workspace admins can open this page. Ask an admin of this workspace if you need access.</p>
      </div>
    </section>
  );
}
