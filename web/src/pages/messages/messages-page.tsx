/** Messages: thread list with unread badges beside the open thread (`/messages/:threadId`), live over SSE. */

import { Link, useNavigate } from '@tanstack/react-router';
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { useDebounced } from '../../components/use-debounced.js';
import type { Me } from '../../session.js';
import { previewText } from './message-body.js';
import { formatTime, snippetParts, useMessageSearch, useThreads } from './messages-api.js';
import { NewThreadDialog } from './new-thread-dialog.js';
import { FreeTierBanner, ThreadView } from './thread-view.js';
import './messages.css';

function ThreadList({ activeId, me }: { activeId?: string; me: Me }) {
  const threads = useThreads();
  if (threads.isPending) return <Loading label="Loading conversations…" />;
  if (threads.isError) return <ErrorNotice error={threads.error} onRetry={() => threads.refetch()} />;
  if (threads.data.items.length === 0) {
    return (
      <EmptyState title="No conversations yet">
        {me.workspace.tier === 'free' ? 'Messages colleagues send you appear here.' : 'Start one with New message.'}
      </EmptyState>
    );
  }
  return (
    <ul className="thread-list" data-testid="thread-list">
      {threads.data.items.map((t) => (
        <li key={t.id}>
          <Link
            to="/messages/$threadId"
            params={{ threadId: t.id }}
            className={`thread-item ${t.id === activeId ? 'active' : ''} ${t.unreadCount > 0 ? 'unread' : ''}`}
            aria-current={t.id === activeId ? 'page' : undefined}
            data-testid="thread-item"
            data-thread-id={t.id}
          >
            <span className="thread-item-top">
              <span className="thread-item-title">{t.title}</span>
              {t.unreadCount > 0 ? (
                <span className="unread-badge" data-testid="unread-badge">
                  {t.unreadCount}
                  <span className="visually-hidden"> unread</span>
                </span>
              ) : null}
            </span>
            {t.lastMessage ? (
              <span className="thread-item-preview muted">
                {t.lastMessage.senderId === me.user.id ? 'You: ' : ''}
                {previewText(t.lastMessage.body, t.lastMessage.mentions)}
              </span>
            ) : null}
            <span className="thread-item-time muted">{formatTime(t.updatedAt)}</span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

/** Admins: every message of the workspace matching the words, each opening its thread. */
function SearchResults({ q, activeId, me }: { q: string; activeId?: string; me: Me }) {
  const search = useMessageSearch(q);
  if (search.isPending) return <Loading label="Searching…" />;
  if (search.isError) return <ErrorNotice error={search.error} onRetry={() => search.refetch()} />;
  if (search.data.items.length === 0) return <EmptyState title="No messages match">Try other words.</EmptyState>;
  // Only the best matches are shown (of the newest 300 that match): say so, and how to reach the others.
  const partial = search.data.truncated || search.data.nextCursor !== null;
  return (
    <>
      {partial ? (
        <p className="muted search-note" data-testid="search-partial">
          {search.data.truncated
            ? 'Showing the best matches among the newest 300 messages that match. Add words or a "quoted phrase" to find older ones.'
            : `Showing the best ${search.data.items.length} matches. Add words or a "quoted phrase" to narrow the search.`}
        </p>
      ) : null}
      <ul className="thread-list" data-testid="search-results">
        {search.data.items.map((hit) =>
          // A conversation the admin is not in cannot be opened: the message itself is shown (the search is audited).
          !hit.thread.participants.some((p) => p.userId === me.user.id) ? (
            <li key={hit.message.id}>
              <div className="thread-item" data-testid="search-hit" data-readonly="true">
                <span className="thread-item-top">
                  <span className="thread-item-title">{hit.thread.title}</span>
                </span>
                <span className="thread-item-preview">{previewText(hit.message.body, hit.message.mentions)}</span>
                <span className="thread-item-time muted">
                  {formatTime(hit.message.createdAt)} · a conversation you are not in
                </span>
              </div>
            </li>
          ) : (
            <li key={hit.message.id}>
              <Link
                to="/messages/$threadId"
                params={{ threadId: hit.thread.id }}
                search={{ q }}
                className={`thread-item ${hit.thread.id === activeId ? 'active' : ''}`}
                data-testid="search-hit"
              >
                <span className="thread-item-top">
                  <span className="thread-item-title">{hit.thread.title}</span>
                </span>
                <span className="thread-item-preview muted">
                  {snippetParts(hit.snippet).map((part, i) =>
                    // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one snippet never reorder
                    part.match ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>,
                  )}
                </span>
                <span className="thread-item-time muted">{formatTime(hit.message.createdAt)}</span>
              </Link>
            </li>
          ),
        )}
      </ul>
    </>
  );
}

/**
 * New message → the thread it sent into. From /messages the thread opens on another route, in a new
 * MessagesPage, so the hand-over waits here for that page (which takes it when it starts) as well as in state.
 */
let handOver: { threadId: string; at: number } | null = null;

/**
 * `searchText`: the admin's search, from the URL (`?q=`). The page is a new one on each route (/messages,
 * /messages/:threadId), so the search lives in the URL: opening a hit, and Back, keep it and its results.
 */
export function MessagesPage({ me, threadId, searchText }: { me: Me; threadId?: string; searchText?: string }) {
  const [search, setSearch] = useState(searchText ?? '');
  const q = useDebounced(search.trim(), 300);
  // Each pause in typing goes into the URL, replacing the entry (typing adds no history). Only a new pause:
  // when the URL changes from outside, the box follows it (below), not the other way round.
  const written = useRef<string | null>(null);
  const paused = useRef(q);
  const navigate = useNavigate();
  useEffect(() => {
    if (q === paused.current) return;
    paused.current = q;
    if (q === (searchText ?? '')) return;
    written.current = q;
    const search = q ? { q } : {};
    if (threadId) void navigate({ to: '/messages/$threadId', params: { threadId }, search, replace: true });
    else void navigate({ to: '/messages', search, replace: true });
  }, [q, searchText, threadId, navigate]);
  // The URL changed from outside (Back, the Messages link): the box follows it (not when we wrote it).
  useEffect(() => {
    if ((searchText ?? '') !== written.current) setSearch(searchText ?? '');
  }, [searchText]);
  const searchId = useId();
  const [composing, setComposing] = useState(false);
  // The thread New message just sent into: its composer takes the focus and says Sent once it is on the page.
  const [arrival, setArrival] = useState(() => handOver);
  useEffect(() => {
    handOver = null;
  }, []);
  const clearArrival = useCallback(() => {
    handOver = null;
    setArrival(null);
  }, []);
  const canSend = me.workspace.tier !== 'free';
  return (
    <section className="page messages-page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Messages</h1>
          <p className="muted">Direct and group conversations with your colleagues.</p>
        </div>
        {canSend ? (
          <Button onPress={() => setComposing(true)} data-testid="new-message">
            New message
          </Button>
        ) : null}
      </header>
      {!canSend && !threadId ? <FreeTierBanner /> : null}
      <div className={`messages-layout card${threadId ? ' has-thread' : ''}`}>
        <aside className="messages-sidebar" aria-label="Conversations">
          {me.role === 'admin' ? (
            <div className="toolbar">
              <label htmlFor={searchId} className="visually-hidden">
                Search all messages
              </label>
              <input
                id={searchId}
                type="search"
                className="search-input"
                placeholder="Search all messages"
                value={search}
                maxLength={200}
                onChange={(e) => setSearch(e.target.value)}
                data-testid="message-search"
              />
            </div>
          ) : null}
          {q ? <SearchResults q={q} activeId={threadId} me={me} /> : <ThreadList activeId={threadId} me={me} />}
        </aside>
        <div className="messages-main">
          {threadId ? (
            <Link
              to="/messages"
              search={q ? { q } : {}}
              className="button button-ghost button-small thread-back"
              data-testid="thread-back"
            >
              ← All conversations
            </Link>
          ) : null}
          {threadId ? (
            <ThreadView
              key={threadId}
              threadId={threadId}
              me={me}
              canSend={canSend}
              arrival={arrival?.threadId === threadId ? arrival.at : undefined}
              onArrivalShown={clearArrival}
            />
          ) : (
            <EmptyState title="Choose a conversation">Pick one on the left, or start a new one.</EmptyState>
          )}
        </div>
      </div>
      {composing ? (
        <NewThreadDialog
          me={me}
          onClose={() => setComposing(false)}
          onCreated={(id) => {
            handOver = { threadId: id, at: Date.now() };
            setArrival(handOver);
            setComposing(false);
            void navigate({ to: '/messages/$threadId', params: { threadId: id }, search: q ? { q } : {} });
          }}
        />
      ) : null}
    </section>
  );
}
