/**
 * The root of every page: public pages (invitation, password reset) render on their own; every
 * other path needs a session: signed out → the sign-in page on that same path (deep links survive),
 * signed in → the shell around the page.
 */
import { Outlet, useMatches } from '@tanstack/react-router';
import { useEffect } from 'react';
import { Toaster } from 'sonner';
import { MeContext } from '../me-context.js';
import { SignInPage } from '../pages/sign-in/sign-in-page.js';
import { useMe } from '../session.js';
import { Shell } from './shell.js';
import { FullPageError, FullPageLoading } from './status.js';
import { useTitleUnread, withUnread } from './unread.js';
import { usePhone } from './use-phone.js';
import { useWorkspaceChange, WorkspaceChangedNotice } from './workspace-changed.js';

export function RootLayout() {
  const matches = useMatches();
  const phone = usePhone();
  const leaf = matches[matches.length - 1];
  const isPublic = matches.some((m) => m.staticData?.public);
  const title = leaf?.staticData?.title ?? 'Not found';
  const me = useMe();
  // The session moved to another workspace under this tab (a switch in another tab): nothing of the old one stays.
  const workspaceChange = useWorkspaceChange();
  // Unread patient and staff messages, counted by the signed-in shell, lead the title of a background tab.
  const unread = useTitleUnread();

  useEffect(() => {
    const workspace = me.data?.workspace.name;
    document.title =
      workspace && !isPublic ? withUnread(`${title} · ${workspace} · Atrium`, unread) : `${title} · Atrium`;
  }, [title, me.data?.workspace.name, isPublic, unread]);

  let content: React.ReactNode;
  if (isPublic) {
    content = (
      <MeContext.Provider value={me.data ?? null}>
        <Outlet />
      </MeContext.Provider>
    );
  } else if (workspaceChange) {
    content = <WorkspaceChangedNotice change={workspaceChange} />;
  } else if (me.data) {
    content = (
      <MeContext.Provider value={me.data}>
        <Shell me={me.data} />
      </MeContext.Provider>
    );
  } else if (me.data === null) {
    content = <SignInPage />;
  } else if (me.isError) {
    content = <FullPageError error={me.error} onRetry={() => me.refetch()} />;
  } else {
    content = <FullPageLoading label="Loading Atrium…" />;
  }
  return (
    <>
      {content}
      {/* Bottom left on a wide screen: clear of the reply boxes and Send buttons at the bottom right and of the
          page's own actions at the top; on a phone at the top, clear of the composer at the bottom. */}
      <Toaster
        position={phone ? 'top-center' : 'bottom-left'}
        richColors
        closeButton
        toastOptions={{ className: 'toast' }}
      />
    </>
  );
}
