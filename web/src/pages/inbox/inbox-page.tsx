/**
 * Inbox: patients' messages from every connected channel (WhatsApp, Telegram, SMS, Messenger,
 * Instagram, Viber) in one list with unread counts, the open conversation beside it with delivery
 * statuses and a reply box, live over SSE. A contact can be linked to a patient record.
 */
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useEffect, useId, useMemo, useRef, useState } from 'react';
import { describeError } from '../../api.js';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { notifySuccess } from '../../components/ui/toast.js';
import type { Me } from '../../session.js';
import { formatTime } from '../messages/messages-api.js';
import { PatientPicker } from '../patients/patient-picker.js';
import { usePatientName } from '../patients/patients-api.js';
import { ChannelBadge } from './channel-badge.js';
import { ChannelsDialog } from './channels-dialog.js';
import {
  CHANNEL_LABEL,
  CHANNEL_LIST,
  type Channel,
  type Conversation,
  contactName,
  STATUS_LABEL,
  useConversationMessages,
  useConversations,
  useInboxEvents,
  useLinkContact,
  useMarkConversationRead,
  useReply,
} from './inbox-api.js';
import '../messages/messages.css';
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
      {conversations.map((c) => (
        <li key={c.id}>
          <Link
            to="/inbox"
            search={{ c: c.id, channel }}
            className={`thread-item ${c.id === activeId ? 'active' : ''} ${c.unreadCount > 0 ? 'unread' : ''}`}
            aria-current={c.id === activeId ? 'page' : undefined}
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
              {c.lastMessage ? <span className="thread-item-preview muted">{c.lastMessage.text}</span> : null}
            </span>
            <span className="thread-item-time muted">{formatTime(c.lastMessage?.at ?? c.updatedAt)}</span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

function LinkPatientDialog({ conversation, onClose }: { conversation: Conversation; onClose: () => void }) {
  const [patientId, setPatientId] = useState(conversation.contact.patientId ?? '');
  const link = useLinkContact();
  return (
    <AppDialog
      title="Link to a patient"
      isOpen
      onOpenChange={(open) => (!open ? onClose() : undefined)}
      testId="link-patient-dialog"
    >
      <p className="muted">
        {contactName(conversation.contact)} on {CHANNEL_LABEL[conversation.channel]}: their conversation then shows on
        the patient’s record. Linking is recorded in the audit log.
      </p>
      <PatientPicker
        patientId={patientId || undefined}
        onChange={setPatientId}
        testId="link-patient-picker"
        optionTestId="link-patient-option"
      />
      {link.isError ? (
        <p className="field-error" role="alert">
          {describeError(link.error)}
        </p>
      ) : null}
      <div className="form-actions">
        {conversation.contact.patientId ? (
          <Button
            variant="ghost"
            isDisabled={link.isPending}
            onPress={() =>
              link.mutate(
                { contactId: conversation.contact.id, patientId: null },
                {
                  onSuccess: () => {
                    notifySuccess('Unlinked', 'The conversation no longer shows on the patient record.');
                    onClose();
                  },
                },
              )
            }
            data-testid="unlink-patient"
          >
            Unlink
          </Button>
        ) : null}
        <Button variant="secondary" onPress={onClose}>
          Cancel
        </Button>
        <Button
          isDisabled={!patientId || link.isPending}
          onPress={() =>
            link.mutate(
              { contactId: conversation.contact.id, patientId },
              {
                onSuccess: () => {
                  notifySuccess('Linked to the patient record');
                  onClose();
                },
              },
            )
          }
          data-testid="link-patient-save"
        >
          Link
        </Button>
      </div>
    </AppDialog>
  );
}

function ConversationView({ conversation }: { conversation: Conversation }) {
  const messages = useConversationMessages(conversation.id);
  const reply = useReply(conversation.id);
  const markRead = useMarkConversationRead();
  const patient = usePatientName(conversation.contact.patientId ?? undefined);
  const [text, setText] = useState('');
  const [linking, setLinking] = useState(false);
  const bottom = useRef<HTMLDivElement>(null);
  const fieldId = useId();
  const ordered = useMemo(() => [...(messages.data?.items ?? [])].reverse(), [messages.data]);

  // Opening a conversation (or a new message arriving while it is open) marks it read.
  const markReadMutate = markRead.mutate;
  useEffect(() => {
    if (conversation.unreadCount > 0) markReadMutate(conversation.id);
  }, [conversation.id, conversation.unreadCount, markReadMutate]);
  useEffect(() => {
    if (ordered.length) bottom.current?.scrollIntoView({ block: 'end' });
  }, [ordered.length]);

  const send = (e: FormEvent) => {
    e.preventDefault();
    const body = text.trim();
    if (!body) return;
    reply.mutate(body, { onSuccess: () => setText('') });
  };

  return (
    <div className="thread-view" data-testid="conversation-view">
      <header className="thread-header inbox-thread-header">
        <div>
          <h2>{contactName(conversation.contact)}</h2>
          <p className="muted inbox-contact-line">
            <ChannelBadge channel={conversation.channel} />
            {conversation.contact.phone && conversation.contact.phone !== contactName(conversation.contact)
              ? ` ${conversation.contact.phone}`
              : null}
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
              {patient.name ?? 'Patient record'}
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
        <ol className="message-list" aria-label="Messages" data-testid="inbox-messages">
          {ordered.map((m) => (
            <li
              key={m.id}
              className={`message ${m.direction === 'out' ? 'message-mine' : ''}`}
              data-testid="inbox-message"
              data-direction={m.direction}
            >
              <p className="message-body">{m.text || (m.attachments[0] ? `[${m.attachments[0].type}]` : '')}</p>
              {m.attachments.length ? (
                <p className="message-meta">
                  {m.attachments.map((a) =>
                    a.url ? (
                      <a key={`${m.id}-${a.url}`} href={a.url} target="_blank" rel="noreferrer">
                        {a.name ?? a.type}
                      </a>
                    ) : (
                      <span key={`${m.id}-${a.name ?? a.type}`}>{a.name ?? a.type}</span>
                    ),
                  )}
                </p>
              ) : null}
              <p className="message-meta">
                <span>{formatTime(m.at)}</span>
                {m.direction === 'out' ? (
                  <span className={m.status === 'failed' ? 'message-failed' : undefined} data-testid="message-status">
                    {STATUS_LABEL[m.status]}
                    {m.error ? `: ${m.error}` : ''}
                  </span>
                ) : null}
              </p>
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
          id={fieldId}
          rows={2}
          maxLength={4000}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) send(e);
          }}
          placeholder={`Reply on ${CHANNEL_LABEL[conversation.channel]}…`}
          data-testid="inbox-reply"
        />
        <div className="composer-actions">
          <span className="muted">
            {reply.isError ? describeError(reply.error) : 'Enter sends · Shift+Enter for a new line'}
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

export function InboxPage({ me, conversationId, channel }: { me: Me; conversationId?: string; channel?: Channel }) {
  const conversations = useConversations({ channel });
  const stream = useInboxEvents();
  const navigate = useNavigate();
  const [managing, setManaging] = useState(false);
  const isAdmin = me.role === 'admin';
  const active = conversations.data?.items.find((c) => c.id === conversationId);
  const setChannel = (next?: Channel) => void navigate({ to: '/inbox', search: { channel: next } });

  if (me.workspace.tier === 'free') {
    return (
      <section className="page" aria-labelledby="page-title">
        <header className="page-header">
          <h1 id="page-title">Inbox</h1>
        </header>
        <div className="notice notice-info" data-testid="inbox-free">
          Patients’ WhatsApp, Telegram, SMS, Messenger, Instagram and Viber messages come with the Standard plan. Ask
          your workspace admin to upgrade.
        </div>
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
        {CHANNEL_LIST.map((c) => (
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
          {conversations.isSuccess && conversations.data.items.length === 0 ? (
            <EmptyState title="No conversations yet">
              {channel
                ? `Nothing on ${CHANNEL_LABEL[channel]} yet.`
                : 'Messages patients send to your channels show up here.'}
            </EmptyState>
          ) : null}
          {conversations.isSuccess ? (
            <ConversationList conversations={conversations.data.items} activeId={conversationId} channel={channel} />
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
          ) : conversationId && conversations.isSuccess ? (
            <EmptyState title="Conversation not found">It may be on another channel filter.</EmptyState>
          ) : !conversationId ? (
            <EmptyState title="Choose a conversation">Pick one on the left to read and reply.</EmptyState>
          ) : null}
        </div>
      </div>
      {managing ? <ChannelsDialog onClose={() => setManaging(false)} /> : null}
    </section>
  );
}
