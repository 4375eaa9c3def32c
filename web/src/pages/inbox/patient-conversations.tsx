/** A patient's conversations on the messaging channels (contacts linked to the record), newest first. */
import { Link } from '@tanstack/react-router';
import { EmptyState, ErrorNotice, Loading, LoadMore } from '../../components/status.js';
import { formatTime } from '../messages/messages-api.js';
import { ChannelBadge } from './channel-badge.js';
import {
  type Conversation,
  contactDetail,
  contactName,
  failureSummary,
  loadedItems,
  STATUS_LABEL,
  useConversationMessages,
  useConversations,
} from './inbox-api.js';
import { MessageContent } from './message-content.js';
import '../messages/messages.css';
import './inbox.css';

function Thread({ conversation }: { conversation: Conversation }) {
  const messages = useConversationMessages(conversation.id);
  // The newest 20 (of the first page); the whole thread is in the Inbox.
  const recent = [...(messages.data?.pages[0]?.items ?? [])].slice(0, 20).reverse();
  const detail = contactDetail(conversation.contact);
  return (
    <article className="card patient-conversation" data-testid="patient-conversation">
      <header className="inbox-thread-header">
        <div>
          <h3>
            <ChannelBadge channel={conversation.channel} /> {contactName(conversation.contact)}
          </h3>
          {detail ? (
            <p className="muted inbox-contact-line" data-testid="contact-detail">
              {detail}
            </p>
          ) : null}
        </div>
        <Link to="/inbox" search={{ c: conversation.id }} className="button button-secondary button-small">
          Open in Inbox
        </Link>
      </header>
      {messages.isPending ? <Loading label="Loading messages…" /> : null}
      <ol className="message-list" aria-label={`Messages with ${contactName(conversation.contact)}`}>
        {recent.map((m) => (
          <li key={m.id} className={`message ${m.direction === 'out' ? 'message-mine' : ''}`}>
            <MessageContent message={m} />
            <p className="message-meta">
              <span>{formatTime(m.at)}</span>
              {m.direction === 'out' ? (
                <span className={m.status === 'failed' ? 'message-failure-text' : undefined}>
                  {m.status === 'failed'
                    ? `Not delivered — ${failureSummary(m.error, conversation.channel)}`
                    : STATUS_LABEL[m.status]}
                </span>
              ) : null}
            </p>
          </li>
        ))}
      </ol>
    </article>
  );
}

const CONVERSATIONS = ['conversation', 'conversations'] as const;

export function PatientConversations({ patientId }: { patientId: string }) {
  const conversations = useConversations({ patientId });
  if (conversations.isPending) return <Loading label="Loading conversations…" />;
  if (conversations.isError) return <ErrorNotice error={conversations.error} onRetry={() => conversations.refetch()} />;
  const items = loadedItems(conversations.data);
  if (items.length === 0) {
    return (
      <EmptyState title="No linked conversations">
        Link a contact to this patient from the Inbox and their messages show here.
      </EmptyState>
    );
  }
  return (
    <div className="patient-conversations">
      {items.map((c) => (
        <Thread key={c.id} conversation={c} />
      ))}
      <LoadMore query={conversations} noun={CONVERSATIONS} />
    </div>
  );
}
