/** One open thread: history (older pages on demand), live updates, "seen by", composer or the Free banner. */
import { useEffect, useMemo, useRef } from 'react';
import { PlanNotice } from '../../components/plan-notice.js';
import { ErrorNotice, Loading } from '../../components/status.js';
import type { Me } from '../../session.js';
import { Composer } from './composer.js';
import { MessageBody } from './message-body.js';
import { formatTime, useHistory, useMarkRead, useSendMessage, useThreadEvents } from './messages-api.js';

/** On a plan that only receives messages: in place of the composer, and above the list. */
export function FreeTierBanner() {
  return (
    <PlanNotice
      feature="direct_messages_send"
      title="Sending messages comes with the Standard plan"
      testId="free-tier-banner"
    >
      You can read the messages colleagues send you here, but not write one or start a conversation.
    </PlanNotice>
  );
}

/** "a", "a and b", "a, b and c" */
const inWords = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/** In place of the composer when everyone else in the thread was removed from the workspace (409 recipients_left). */
function EveryoneLeft({ names }: { names: string[] }) {
  return (
    <div className="notice notice-info" data-testid="thread-left">
      <p>
        {inWords(names)} {names.length === 1 ? 'is' : 'are'} no longer a member of this workspace, so no one would read
        a message here. The conversation stays for you to read.
      </p>
    </div>
  );
}

export function ThreadView({
  threadId,
  me,
  canSend,
  arrival,
  onArrivalShown,
}: {
  threadId: string;
  me: Me;
  canSend: boolean;
  /** A message was just sent here from New message: the composer takes the focus and says Sent (see Composer). */
  arrival?: number;
  onArrivalShown?: () => void;
}) {
  const history = useHistory(threadId);
  const send = useSendMessage();
  const markRead = useMarkRead(threadId);
  const bottom = useRef<HTMLDivElement>(null);
  const stream = useThreadEvents(threadId, () => {
    requestAnimationFrame(() => bottom.current?.scrollIntoView({ block: 'end' }));
  });

  const pages = history.data?.pages ?? [];
  const thread = pages[0]?.thread;
  const receipts = pages[0]?.receipts ?? [];
  const messages = useMemo(() => pages.flatMap((p) => p.items).reverse(), [pages]);
  const latest = messages[messages.length - 1];
  const mine = receipts.find((r) => r.userId === me.user.id);
  const names = new Map(thread?.participants.map((p) => [p.userId, p.name]) ?? []);
  const others = thread?.participants.filter((p) => p.userId !== me.user.id) ?? [];
  // Nobody else here is a member any more: the server would refuse a message (409 recipients_left).
  const everyoneLeft = others.length > 0 && others.every((p) => p.former);

  // Reading the open thread marks it read (receipts only move forward on the server).
  const markReadMutate = markRead.mutate;
  const markReadPending = markRead.isPending;
  useEffect(() => {
    if (!latest || markReadPending || document.visibilityState === 'hidden') return;
    if (mine?.lastReadMessageId === latest.id) return;
    const readIndex = messages.findIndex((m) => m.id === mine?.lastReadMessageId);
    if (readIndex >= messages.length - 1) return;
    markReadMutate(latest.id);
  }, [latest, mine?.lastReadMessageId, messages, markReadMutate, markReadPending]);

  useEffect(() => {
    if (history.isSuccess && pages.length === 1) bottom.current?.scrollIntoView({ block: 'end' });
  }, [history.isSuccess, pages.length]);

  if (history.isPending) return <Loading label="Loading conversation…" />;
  if (history.isError) return <ErrorNotice error={history.error} onRetry={() => history.refetch()} />;

  const indexOf = (id: string | null) => (id ? messages.findIndex((m) => m.id === id) : -1);
  const latestIndex = messages.length - 1;
  const seenBy = latest
    ? receipts
        .filter(
          (r) => r.userId !== latest.senderId && r.userId !== me.user.id && indexOf(r.lastReadMessageId) >= latestIndex,
        )
        .map((r) => names.get(r.userId) ?? r.userId)
    : [];

  return (
    <div className="thread-view" data-testid="thread-view">
      <header className="thread-header">
        <div>
          <h2 data-testid="thread-title">{thread?.title}</h2>
          <p className="muted" data-testid="thread-participants">
            {thread?.kind === 'group' ? `${thread.participants.length} people · ` : ''}
            {thread?.participants.map((p) => (p.former ? `${p.name} (no longer a member)` : p.name)).join(', ')}
          </p>
        </div>
        <span className={`stream-state stream-${stream}`} data-testid="stream-state">
          {stream === 'live' ? 'Live' : stream === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
        </span>
      </header>
      <div className="message-scroll">
        {history.hasNextPage ? (
          <button
            type="button"
            className="button button-secondary load-older"
            onClick={() => history.fetchNextPage()}
            disabled={history.isFetchingNextPage}
          >
            {history.isFetchingNextPage ? 'Loading…' : 'Load older messages'}
          </button>
        ) : null}
        <ol className="message-list" data-testid="message-list">
          {messages.map((m) => (
            <li
              key={m.id}
              className={`message ${m.senderId === me.user.id ? 'message-mine' : ''}`}
              data-testid="message"
              data-message-id={m.id}
            >
              <div className="message-meta">
                <span className="message-sender">
                  {m.senderId === me.user.id ? 'You' : (names.get(m.senderId) ?? 'Someone')}
                </span>
                <time dateTime={m.createdAt}>{formatTime(m.createdAt)}</time>
              </div>
              <MessageBody body={m.body} mentions={m.mentions} />
            </li>
          ))}
        </ol>
        {seenBy.length > 0 ? (
          <p className="seen-by muted" data-testid="seen-by">
            Seen by {seenBy.join(', ')}
          </p>
        ) : null}
        <div ref={bottom} />
      </div>
      {everyoneLeft ? (
        <EveryoneLeft names={others.map((p) => p.name)} />
      ) : canSend ? (
        <Composer
          pending={send.isPending}
          error={send.error}
          onSend={(body) => send.mutateAsync({ threadId, body })}
          arrival={arrival}
          onArrivalShown={onArrivalShown}
          draftKey={`thread:${threadId}`}
        />
      ) : (
        <FreeTierBanner />
      )}
    </div>
  );
}
