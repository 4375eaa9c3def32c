/** The signed-in layout: top bar (workspace, switcher, user), sidebar navigation, and the current page. */
import { type ReactNode, useEffect, useRef } from 'react';
import { NotFoundPage } from '../pages/not-found/not-found-page.js';
import { isWithin, Link, navigate, usePathname } from '../router.js';
import { HOME_PATH, NAV_SECTIONS, resolveRoute, routes } from '../routes.js';
import { type Me, useSignOut } from '../session.js';
import { ErrorBoundary } from './error-boundary.js';
import { Icon } from './icons.js';
import { ErrorNotice } from './status.js';
import { TierBadge } from './tier-badge.js';
import { WorkspaceSwitcher } from './workspace-switcher.js';

export function Shell({ me }: { me: Me }) {
  const pathname = usePathname();
  const resolved = resolveRoute(pathname);
  const isAdmin = me.role === 'admin';
  const title = resolved?.route.title ?? 'Not found';

  useEffect(() => {
    if (pathname === '/' || pathname === '') navigate(HOME_PATH, { replace: true });
  }, [pathname]);

  useEffect(() => {
    document.title = `${title} · ${me.workspace.name} · Atrium`;
  }, [title, me.workspace.name]);

  // Move focus to the page when the user goes to another section, so screen readers announce it.
  const mainRef = useRef<HTMLElement>(null);
  const section = pathname.split('/')[1] ?? '';
  const lastSection = useRef(section);
  useEffect(() => {
    if (lastSection.current === section) return;
    lastSection.current = section;
    mainRef.current?.focus({ preventScroll: true });
  }, [section]);

  let content: ReactNode;
  if (!resolved) content = pathname === '/' ? null : <NotFoundPage />;
  else if (resolved.route.adminOnly && !isAdmin) content = <AdminOnlyNotice title={resolved.route.title} />;
  else content = resolved.route.render({ me, params: resolved.params });

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
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
        <WorkspaceSwitcher me={me} />
        <UserMenu me={me} />
      </header>
      <div className="layout">
        <nav className="sidebar" aria-label="Main navigation">
          {NAV_SECTIONS.map((section) => {
            const items = routes.filter((r) => r.nav?.section === section.id && (!r.adminOnly || isAdmin));
            if (items.length === 0) return null;
            return (
              <div className="nav-section" key={section.id}>
                <h2 className="nav-heading">{section.label}</h2>
                <ul>
                  {items.map((route) => {
                    const active = isWithin(route.path, pathname);
                    return (
                      <li key={route.path}>
                        <Link
                          to={route.path}
                          className={`nav-link${active ? ' active' : ''}`}
                          aria-current={active ? 'page' : undefined}
                          data-testid={`nav-${route.path.replace(/^\//, '').replace(/\//g, '-')}`}
                        >
                          {route.nav ? <Icon name={route.nav.icon} /> : null}
                          {route.nav?.label}
                        </Link>
                      </li>
                    );
                  })}
                </ul>
              </div>
            );
          })}
        </nav>
        <main id="main" className="main" ref={mainRef} tabIndex={-1}>
          <ErrorBoundary resetKey={pathname}>{content}</ErrorBoundary>
        </main>
      </div>
    </div>
  );
}

function UserMenu({ me }: { me: Me }) {
  const signOut = useSignOut();
  return (
    <div className="topbar-user">
      <span className="user-name" data-testid="user-name" title={me.user.email}>
        {me.user.name}
      </span>
      <span className="role-label">{me.role === 'admin' ? 'Admin' : 'Member'}</span>
      <button
        type="button"
        className="button button-secondary button-small"
        onClick={() => signOut.mutate()}
        disabled={signOut.isPending}
        data-testid="sign-out"
      >
        {signOut.isPending ? 'Signing out…' : 'Sign out'}
      </button>
      {signOut.isError ? <ErrorNotice error={signOut.error} testId="sign-out-error" /> : null}
    </div>
  );
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
