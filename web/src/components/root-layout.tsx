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

/**
 * Sonner holds a toast (its timer paused) while the pointer is over it, and a touch screen sends the mouse events of
 * a tap (mouseover, mouseout, mousemove) with no mouseleave after them: a toast once tapped stayed until something
 * else was tapped. Those mouse events are kept from the toasts when the last pointer was a finger or a pen (a real
 * mouse moves as a "mouse" pointer first), so a tap holds a toast only while the finger is down.
 */
function useTouchDoesNotHoldToasts() {
  useEffect(() => {
    let pointerType = 'mouse';
    const notePointer = (event: PointerEvent) => {
      pointerType = event.pointerType;
    };
    const inToasts = (node: EventTarget | null) => node instanceof Element && node.closest('[data-sonner-toaster]');
    // React makes its mouseenter of the element the mouse came to out of the mouseout of the one it left.
    const fromTouch = (event: MouseEvent) => {
      if (pointerType !== 'mouse' && (inToasts(event.target) || inToasts(event.relatedTarget))) event.stopPropagation();
    };
    const pointerEvents = ['pointerover', 'pointermove', 'pointerdown'] as const;
    const mouseEvents = ['mouseover', 'mouseout', 'mousemove'] as const;
    for (const type of pointerEvents) window.addEventListener(type, notePointer, true);
    for (const type of mouseEvents) window.addEventListener(type, fromTouch, true);
    return () => {
      for (const type of pointerEvents) window.removeEventListener(type, notePointer, true);
      for (const type of mouseEvents) window.removeEventListener(type, fromTouch, true);
    };
  }, []);
}

export function RootLayout() {
  const matches = useMatches();
  const phone = usePhone();
  useTouchDoesNotHoldToasts();
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
          page's own actions at the top. On a phone at the bottom, 16 px up: at the top it lay over the top bar (a tap
          on Menu or Search met the toast, its close button right on Menu) and would lie over the menu drawer's
          first items; nothing is fixed at the bottom of a phone's page (the message boxes scroll with the page). */}
      <Toaster
        position={phone ? 'bottom-center' : 'bottom-left'}
        richColors
        closeButton
        toastOptions={{ className: 'toast' }}
      />
    </>
  );
}
