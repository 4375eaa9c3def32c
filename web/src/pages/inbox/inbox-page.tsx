/**
 * Inbox: patients' messages from every connected channel (WhatsApp, Telegram, SMS, Messenger,
 * Instagram, Viber) in one list with unread counts, the open conversation beside it with delivery
 * statuses and a reply box, live over SSE. A contact can be linked to a patient record.
 */
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, type RefObject, useEffect, useId, useMemo, useRef, useState } from 'react';
import { ApiError, describeError } from '../../api.js';
import { focusLost } from '../../components/focus.js';
import { PlanNotice } from '../../components/plan-notice.js';
import { EmptyState, ErrorNotice, Loading, LoadMore } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { useTouchFirst } from '../../components/use-phone.js';
import type { Me } from '../../session.js';
import { formatTime } from '../messages/messages-api.js';
import { formatDate, fullName, patientNameQuery } from '../patients/patients-api.js';
import { ChannelBadge } from './channel-badge.js';
import { ChannelsDialog } from './channels-dialog.js';
import {
  CHANNEL_LABEL,
  CHANNEL_LIST,
  type Channel,
  type Conversation,
  contactDetail,
  contactName,
  explainFailure,
  type InboxMessage,
  lastReplyFailed,
  loadedItems,
  STATUS_LABEL,
  useConnections,
  useConversation,
  useConversationMessages,
  useConversations,
  useInboxEvents,
  useMarkConversationRead,
  useReply,
} from './inbox-api.js';
import { LinkPatientDialog } from './link-patient-dialog.js';
import { MessageContent } from './message-content.js';
import '../messages/messages.css';
import { sending, useDraft } from '../../drafts.js';
import './inbox.css';

function ConversationList({
  conversations,
  activeId,
  channel,
}: {
  conversations: Conversation[];
  activeId?: string;
  channel?: Channel;
}) {
  return (
    <ul className="thread-list" data-testid="conversation-list">
      {conversations.map((c) => {
        const detail = contactDetail(c.contact);
        const failed = lastReplyFailed(c);
        return (
          <li key={c.id}>
            <Link
              to="/inbox"
              search={{ c: c.id, channel }}
              className={`thread-item ${c.id === activeId ? 'active' : ''} ${c.unreadCount > 0 ? 'unread' : ''}`}
              aria-current={c.id === activeId ? 'page' : undefined}
              data-conversation-id={c.id}
              data-testid="conversation-item"
            >
              <span className="thread-item-top">
                <span className="thread-item-title">{contactName(c.contact)}</span>
                {c.unreadCount > 0 ? (
                  <span className="unread-badge" data-testid="conversation-unread">
                    {c.unreadCount}
                    <span className="visually-hidden"> unread</span>
                  </span>
                ) : null}
              </span>
              <span className="inbox-item-meta">
                <ChannelBadge channel={c.channel} />
                {failed ? (
                  <span className="failed-mark" data-testid="conversation-failed">
                    Not delivered
                  </span>
                ) : null}
                {c.lastMessage ? (
                  <span className="thread-item-preview muted">
                    {c.lastMessage.direction === 'out' ? 'You: ' : ''}
                    {c.lastMessage.text}
                  </span>
                ) : null}
              </span>
              <span className="thread-item-time muted">
                {detail ? (
                  <>
                    <span data-testid="contact-detail">{detail}</span> ·{' '}
                  </>
                ) : null}
                {formatTime(c.lastMessage?.at ?? c.updatedAt)}
              </span>
            </Link>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * A reply that did not reach the patient: plain words and Retry (the same text sent again, as a new
 * message; this one stays failed), with the provider's own words one click away.
 */
function FailedReply({
  message,
  channel,
  retried,
  pending,
  onRetry,
}: {
  message: InboxMessage;
  channel: Channel;
  retried: boolean;
  pending: boolean;
  onRetry: () => void;
}) {
  // A refusal that sending again cannot fix (the patient blocked the clinic, the number cannot receive it):
  // no Retry, the words say what to do instead.
  const { summary, retryable } = explainFailure(message.error, channel);
  return (
    <div className="message-failure" data-testid="message-failure">
      <p className="message-failure-text" data-testid="message-status">
        <strong>Not delivered</strong> — {summary}
        {retried ? ' Sent again below.' : ''}
      </p>
      {retried || !retryable ? null : (
        <Button variant="secondary" size="small" isDisabled={pending} onPress={onRetry} data-testid="message-retry">
          Retry
        </Button>
      )}
      {message.error ? (
        <details className="message-failure-details">
          <summary>Details</summary>
          <p data-testid="message-error">{message.error}</p>
        </details>
      ) : null}
    </div>
  );
}

/**
 * *Load older messages* above a thread, as the Messages page has it: pending, never disabled, while the page
 * loads (a disabled button drops the keyboard focus to the page); once the oldest message is there the button
 * goes, and the focus it had moves to the messages.
 */
function LoadOlderMessages({
  messages,
  list,
}: {
  messages: ReturnType<typeof useConversationMessages>;
  list: RefObject<HTMLOListElement | null>;
}) {
  const asked = useRef(false);
  const { hasNextPage, isFetchingNextPage } = messages;
  useEffect(() => {
    if (!asked.current || isFetchingNextPage) return;
    asked.current = false;
    if (!hasNextPage && focusLost()) list.current?.focus({ preventScroll: true });
  }, [hasNextPage, isFetchingNextPage, list]);
  if (!hasNextPage) return null;
  return (
    <Button
      variant="secondary"
      className="load-older"
      isPending={isFetchingNextPage}
      onPress={() => {
        if (isFetchingNextPage) return;
        asked.current = true;
        void messages.fetchNextPage();
      }}
      data-testid="load-older-messages"
    >
      {isFetchingNextPage ? 'Loading…' : 'Load older messages'}
    </Button>
  );
}

const noWords = (text: string) => text.trim() === '';

function ConversationView({ conversation }: { conversation: Conversation }) {
  const messages = useConversationMessages(conversation.id);
  const reply = useReply(conversation.id);
  const markRead = useMarkConversationRead();
  const linked = conversation.contact.patientId ?? undefined;
  const patient = useQuery({ ...patientNameQuery(linked ?? ''), enabled: Boolean(linked) }).data;
  // A half-written reply waits for the person's return from another conversation.
  const draftKey = `inbox:${conversation.id}`;
  const [text, setText] = useDraft<string>(draftKey, '', noWords);
  const [linking, setLinking] = useState(false);
  // The outcome of the last send worth reading out where the send was made: one that did not go through,
  // or a Retry that did.
  const [notice, setNotice] = useState<{ text: string; problem: boolean } | null>(null);
  const bottom = useRef<HTMLDivElement>(null);
  const field = useRef<HTMLTextAreaElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const fieldId = useId();
  const touchFirst = useTouchFirst();
  // Opened where the list gives way to the thread (a phone), the focus would be lost with the hidden list
  // item: it goes to the conversation's heading, from where the thread and its actions follow.
  useEffect(() => {
    if (focusLost()) heading.current?.focus({ preventScroll: true });
  }, []);
  // Pages come newest first; the thread reads oldest first.
  const ordered = useMemo(() => loadedItems(messages.data).reverse(), [messages.data]);
  const newest = ordered[ordered.length - 1]?.id;
  const list = useRef<HTMLOListElement>(null);

  // Opening a conversation (or a new message arriving while it is open) marks it read for the whole clinic,
  // but only while someone can see it: a conversation left open in a background tab (or a minimised window)
  // keeps its new messages unread until the tab is looked at again (as the direct messages' thread does).
  const markReadMutate = markRead.mutate;
  const unread = conversation.unreadCount;
  useEffect(() => {
    if (unread === 0) return;
    const markIfSeen = () => {
      if (document.visibilityState !== 'hidden') markReadMutate(conversation.id);
    };
    markIfSeen();
    document.addEventListener('visibilitychange', markIfSeen);
    window.addEventListener('focus', markIfSeen);
    return () => {
      document.removeEventListener('visibilitychange', markIfSeen);
      window.removeEventListener('focus', markIfSeen);
    };
  }, [conversation.id, unread, markReadMutate]);
  // To the newest message when one arrives (not when older ones are loaded above).
  useEffect(() => {
    if (newest) bottom.current?.scrollIntoView({ block: 'end' });
  }, [newest]);

  // The mutation's promise, not its per-call callbacks: those do not run once the person has opened another
  // conversation, and the outcome must still reach the kept draft.
  const sendText = (body: string, options: { onSent?: () => void; onFailed?: () => void; retry?: boolean } = {}) => {
    setNotice(null);
    reply.mutateAsync(body).then(
      (message) => {
        options.onSent?.();
        if (message.status === 'failed') {
          const failure = explainFailure(message.error, conversation.channel);
          setNotice({
            text: `Not delivered — ${failure.summary}${failure.retryable ? ' Retry is on the message.' : ''}`,
            problem: true,
          });
        } else setNotice({ text: options.retry ? 'Sent again.' : 'Sent.', problem: false });
      },
      () => options.onFailed?.(),
    );
  };
  const send = (e: FormEvent) => {
    e.preventDefault();
    const body = text.trim();
    if (!body || reply.isPending) return;
    // Sent with the button, the focus comes back to the reply box (the button is disabled while the
    // box is empty, which would drop the focus to the page).
    field.current?.focus();
    // The kept draft goes with the send (an opening of this conversation meanwhile shows an empty box, not words
    // already on their way), and comes back if the server did not take the reply.
    const draft = sending(draftKey, text);
    sendText(body, { onSent: () => setText(''), onFailed: draft.failed });
  };
  const detail = contactDetail(conversation.contact);

  return (
    <div className="thread-view" data-testid="conversation-view">
      <header className="thread-header inbox-thread-header">
        <div>
          <h2 ref={heading} tabIndex={-1} data-testid="conversation-heading">
            {contactName(conversation.contact)}
          </h2>
          <p className="muted inbox-contact-line">
            <ChannelBadge channel={conversation.channel} />
            {detail ? <span data-testid="contact-detail"> {detail}</span> : null}
          </p>
        </div>
        <div className="inbox-patient">
          {conversation.contact.patientId ? (
            <Link
              to="/patients/$patientId"
              params={{ patientId: conversation.contact.patientId }}
              className="patient-chip"
              data-testid="linked-patient"
            >
              {patient ? fullName(patient) : 'Patient record'}
              {/* Two patients may share a name: the birth date tells which one the contact is linked to. */}
              {patient?.dateOfBirth ? (
                <span className="patient-chip-detail" data-testid="linked-patient-born">
                  {' '}
                  · born {formatDate(patient.dateOfBirth)}
                </span>
              ) : null}
            </Link>
          ) : null}
          <Button variant="secondary" size="small" onPress={() => setLinking(true)} data-testid="link-patient">
            {conversation.contact.patientId ? 'Change' : 'Link to patient'}
          </Button>
        </div>
      </header>
      <div className="message-scroll">
        {messages.isPending ? <Loading label="Loading messages…" /> : null}
        {messages.isError ? <ErrorNotice error={messages.error} onRetry={() => messages.refetch()} /> : null}
        <LoadOlderMessages messages={messages} list={list} />
        <ol ref={list} tabIndex={-1} className="message-list" aria-label="Messages" data-testid="inbox-messages">
          {ordered.map((m, index) => (
            <li
              key={m.id}
              className={`message ${m.direction === 'out' ? 'message-mine' : ''}${m.status === 'failed' ? ' message-undelivered' : ''}`}
              data-testid="inbox-message"
              data-direction={m.direction}
            >
              <MessageContent message={m} />
              <p className="message-meta">
                <span>{formatTime(m.at)}</span>
                {m.direction === 'out' && m.status !== 'failed' ? (
                  <span data-testid="message-status">{STATUS_LABEL[m.status]}</span>
                ) : null}
              </p>
              {m.direction === 'out' && m.status === 'failed' ? (
                <FailedReply
                  message={m}
                  channel={conversation.channel}
                  // Sent again already (the same words went out after it): no second Retry.
                  retried={ordered.slice(index + 1).some((o) => o.direction === 'out' && o.text === m.text)}
                  pending={reply.isPending}
                  onRetry={() => {
                    // The Retry button goes once the words are sent again: the focus waits in the reply box,
                    // where the outcome is read out.
                    field.current?.focus();
                    sendText(m.text, { retry: true });
                  }}
                />
              ) : null}
            </li>
          ))}
        </ol>
        <div ref={bottom} />
      </div>
      <form className="composer" onSubmit={send} data-testid="inbox-composer">
        <label htmlFor={fieldId} className="visually-hidden">
          Reply to {contactName(conversation.contact)}
        </label>
        <textarea
          ref={field}
          id={fieldId}
          rows={2}
          maxLength={4000}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            if (notice && !notice.problem) setNotice(null);
          }}
          onKeyDown={(e) => {
            // A phone's keyboard has no Shift+Enter: there Enter makes a new line and the Send button sends.
            if (e.key === 'Enter' && !e.shiftKey && !touchFirst) send(e);
          }}
          placeholder={`Reply on ${CHANNEL_LABEL[conversation.channel]}…`}
          data-testid="inbox-reply"
        />
        <div className="composer-actions">
          <span
            className={reply.isError || notice?.problem ? 'composer-problem' : 'muted'}
            role="status"
            data-testid="inbox-send-status"
          >
            {reply.isError
              ? describeError(reply.error)
              : (notice?.text ?? (touchFirst ? '' : 'Enter sends · Shift+Enter for a new line'))}
          </span>
          <Button type="submit" isDisabled={!text.trim() || reply.isPending} data-testid="inbox-send">
            {reply.isPending ? 'Sending…' : 'Send'}
          </Button>
        </div>
      </form>
      {linking ? <LinkPatientDialog conversation={conversation} onClose={() => setLinking(false)} /> : null}
    </div>
  );
}

const CONVERSATIONS = ['conversation', 'conversations'] as const;

export function InboxPage({ me, conversationId, channel }: { me: Me; conversationId?: string; channel?: Channel }) {
  // A plan without channels gets a notice, not a 403 or a stream that keeps reconnecting.
  const hasChannels = me.workspace.tier !== 'free';
  const conversations = useConversations({ channel }, { enabled: hasChannels });
  // The shell holds the same stream on every page (unread counts); this page shares it.
  const stream = useInboxEvents(me.workspace.id, hasChannels);
  const navigate = useNavigate();
  const [managing, setManaging] = useState(false);
  const isAdmin = me.role === 'admin';
  // Admins know what is connected: the filters offer those channels (and any an older conversation came from).
  const connections = useConnections(hasChannels && isAdmin);
  const loaded = useMemo(() => loadedItems(conversations.data), [conversations.data]);
  const connectedChannels = connections.data?.items.map((c) => c.channel);
  const noneConnected = connections.isSuccess && connections.data.items.length === 0;
  const offered = connectedChannels
    ? CHANNEL_LIST.filter((c) => c === channel || connectedChannels.includes(c) || loaded.some((x) => x.channel === c))
    : CHANNEL_LIST;
  const listed = loaded.find((c) => c.id === conversationId);
  // A link to a conversation not among the pages loaded (older, or on another channel than the filter's):
  // it is read by id.
  const single = useConversation(conversationId, {
    enabled: hasChannels && conversations.isFetched && !listed,
  });
  const active = listed ?? (conversationId && single.data?.id === conversationId ? single.data : undefined);
  const missing = single.error instanceof ApiError && single.error.status === 404;
  // Back from a thread to the list (a phone): the focus goes to the conversation just left, not the page.
  const left = useRef(conversationId);
  useEffect(() => {
    const previous = left.current;
    left.current = conversationId;
    if (!previous || conversationId || !focusLost()) return;
    document.querySelector<HTMLElement>(`[data-conversation-id="${CSS.escape(previous)}"]`)?.focus();
  }, [conversationId]);
  const setChannel = (next?: Channel) => void navigate({ to: '/inbox', search: { channel: next } });

  if (!hasChannels) {
    return (
      <section className="page" aria-labelledby="page-title">
        <header className="page-header">
          <h1 id="page-title">Inbox</h1>
        </header>
        <PlanNotice
          feature="inbound_channels"
          title="Patients’ messages come with the Standard plan"
          testId="inbox-free"
        >
          The Inbox brings patients’ WhatsApp, Telegram, SMS, Messenger, Instagram and Viber messages into one list,
          where your team reads and answers them.
        </PlanNotice>
      </section>
    );
  }

  return (
    <section className="page messages-page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Inbox</h1>
          <p className="muted">
            Patients’ messages from every connected channel.{' '}
            <span className={`stream-state stream-${stream}`} data-testid="inbox-stream">
              {stream === 'live' ? 'Live' : stream === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
            </span>
          </p>
        </div>
        {isAdmin ? (
          <Button variant="secondary" onPress={() => setManaging(true)} data-testid="manage-channels">
            Channels
          </Button>
        ) : null}
      </header>
      <fieldset className="inbox-filters">
        <legend className="visually-hidden">Filter by channel</legend>
        <button type="button" className="filter-chip" aria-pressed={!channel} onClick={() => setChannel(undefined)}>
          All
        </button>
        {offered.map((c) => (
          <button
            key={c}
            type="button"
            className="filter-chip"
            aria-pressed={channel === c}
            onClick={() => setChannel(c)}
            data-testid={`filter-${c}`}
          >
            {CHANNEL_LABEL[c]}
          </button>
        ))}
      </fieldset>
      <div className={`messages-layout card${conversationId ? ' has-thread' : ''}`}>
        <aside className="messages-sidebar" aria-label="Conversations">
          {conversations.isPending ? <Loading label="Loading conversations…" /> : null}
          {conversations.isError ? (
            <ErrorNotice error={conversations.error} onRetry={() => conversations.refetch()} />
          ) : null}
          {conversations.isSuccess && loaded.length === 0 ? (
            noneConnected && !channel ? (
              <EmptyState
                title="No channel connected yet"
                action={
                  <Button onPress={() => setManaging(true)} data-testid="connect-first-channel">
                    Connect a channel
                  </Button>
                }
              >
                Connect the apps your patients write from (WhatsApp, Telegram, SMS…); their messages arrive here.
              </EmptyState>
            ) : (
              <EmptyState title="No conversations yet">
                {channel
                  ? `Nothing on ${CHANNEL_LABEL[channel]} yet.`
                  : isAdmin
                    ? 'Messages patients send to your channels show up here.'
                    : 'Messages patients send to the clinic show up here once an admin connects its channels.'}
              </EmptyState>
            )
          ) : null}
          {conversations.data ? (
            <>
              <ConversationList conversations={loaded} activeId={conversationId} channel={channel} />
              <LoadMore query={conversations} noun={CONVERSATIONS} />
            </>
          ) : null}
        </aside>
        <div className="messages-main">
          {conversationId ? (
            <Link
              to="/inbox"
              search={{ channel }}
              className="button button-ghost button-small thread-back"
              data-testid="thread-back"
            >
              ← All conversations
            </Link>
          ) : null}
          {active ? (
            <ConversationView key={active.id} conversation={active} />
          ) : conversationId && missing ? (
            <EmptyState title="Conversation not found">
              The link may be wrong, or the conversation is in another workspace.
            </EmptyState>
          ) : conversationId && single.isError ? (
            <ErrorNotice error={single.error} onRetry={() => single.refetch()} />
          ) : conversationId && (conversations.isPending || single.isPending) ? (
            <Loading label="Loading conversation…" />
          ) : !conversationId && loaded.length > 0 ? (
            <EmptyState title="Choose a conversation">Pick one on the left to read and reply.</EmptyState>
          ) : null}
        </div>
      </div>
      {managing ? <ChannelsDialog onClose={() => setManaging(false)} /> : null}
    </section>
  );
}
