/**
 * Unread counts outside the pages that hold them: patients' Inbox conversations and staff Messages,
 * for the navigation, the phone's menu button and the tab's title; and a toast when a patient's
 * message arrives while the front desk is on another page. The Inbox count is live (the inbox's
 * shared event stream); Messages refresh on their own interval.
 */
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { CHANNEL_LABEL, type UnreadSummary, useInboxEvents, useUnreadSummary } from '../pages/inbox/inbox-api.js';
import { useThreads } from '../pages/messages/messages-api.js';
import type { Me } from '../session.js';
import { isWithin } from './nav.js';
import { notifyInfo } from './ui/toast.js';

export interface UnreadCounts {
  inbox: number;
  messages: number;
  total: number;
}

const sum = (items: { unreadCount: number }[] | undefined) =>
  (items ?? []).reduce((total, item) => total + item.unreadCount, 0);

/** The signed-in shell's unread counts; announces new patient messages while the Inbox is not open. */
export function useUnreadCounts(me: Me, pathname: string): UnreadCounts {
  const inboxOn = me.workspace.tier !== 'free';
  useInboxEvents(me.workspace.id, inboxOn);
  // Counts only: the badge on every page reads no patient's name or words (and writes no audit row).
  const summary = useUnreadSummary({ enabled: inboxOn });
  const threads = useThreads();
  const items = inboxOn ? summary.data?.items : undefined;
  useNewMessageToasts(items, isWithin('/inbox', pathname));
  const inbox = inboxOn ? (summary.data?.total ?? 0) : 0;
  const messages = sum(threads.data?.items);
  const total = inbox + messages;
  useEffect(() => {
    setTitleUnread(total);
    return () => setTitleUnread(0);
  }, [total]);
  return { inbox, messages, total };
}

/**
 * A polite toast per conversation whose unread count grew (not on the first load). It names the
 * channel, not the person: who wrote is read in the Inbox, where reading it is recorded.
 */
function useNewMessageToasts(conversations: UnreadSummary['items'] | undefined, onInbox: boolean) {
  const navigate = useNavigate();
  const seen = useRef<Map<string, number> | null>(null);
  useEffect(() => {
    // No data (first load, or a workspace switch reset the cache): start counting afresh.
    if (!conversations) {
      seen.current = null;
      return;
    }
    const before = seen.current;
    seen.current = new Map(conversations.map((c) => [c.conversationId, c.unreadCount]));
    if (!before || onInbox) return;
    // Only patients' messages count as unread, so a grown count is a new message from them.
    const grown = conversations.filter((c) => c.unreadCount > (before.get(c.conversationId) ?? 0));
    for (const c of grown.slice(0, 3)) {
      notifyInfo(`New patient message on ${CHANNEL_LABEL[c.channel]}`, {
        // One toast per conversation: a second message replaces it instead of stacking.
        id: `inbox-${c.conversationId}`,
        action: { label: 'Open', onClick: () => void navigate({ to: '/inbox', search: { c: c.conversationId } }) },
      });
    }
  }, [conversations, onInbox, navigate]);
}

// ---------------------------------------------------------------- the tab's title

let titleUnread = 0;
const titleListeners = new Set<() => void>();

function setTitleUnread(count: number) {
  if (count === titleUnread) return;
  titleUnread = count;
  for (const listener of titleListeners) listener();
}

/** The unread count the tab's title shows ("(3) Calendar · Clinic · Atrium"), set by the shell. */
export function useTitleUnread(): number {
  return useSyncExternalStore(
    (listener) => {
      titleListeners.add(listener);
      return () => titleListeners.delete(listener);
    },
    () => titleUnread,
  );
}

/** A title with the unread count in front, as mail and chat apps show it in the tab. */
export const withUnread = (title: string, unread: number) =>
  unread > 0 ? `(${unread > 99 ? '99+' : unread}) ${title}` : title;
