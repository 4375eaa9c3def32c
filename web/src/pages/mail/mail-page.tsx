/**
 * Mail: what arrived at the workspace's inbound address (lab results, referrals, and guests'
 * answers to calendar invitations, which update the event by themselves). List and reading pane.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
// The server's own answer type (type-only: nothing of the server is bundled).
import type { MailMessage } from '../../../../src/modules/mail/service.js';
import { api, type Page } from '../../api.js';
import { formatInstant } from '../../clinic-time.js';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import './mail.css';
import { CopyButton } from '../../components/ui/copy-button.js';

const when = (iso: string) => formatInstant(new Date(iso), { dateStyle: 'medium', timeStyle: 'short' });

const LABELS: Record<string, string> = { REPLY: 'Invitation reply', REQUEST: 'Invitation', CANCEL: 'Cancellation' };

export function MailPage() {
  const address = useQuery({
    queryKey: ['mail', 'address'],
    queryFn: () => api.get<{ address: string }>('/mail/address'),
  });
  const messages = useQuery({
    queryKey: ['mail', 'messages'],
    queryFn: () => api.get<Page<MailMessage>>('/mail/messages', { limit: 100 }),
    refetchInterval: 15_000,
  });
  const [openId, setOpenId] = useState<string | null>(null);
  const open = messages.data?.items.find((m) => m.id === openId);

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Mail</h1>
          <p className="muted">
            What arrives at your workspace’s own mail address: give it to labs and partners who send you mail, and
            calendar invitations use it for guests’ replies (those update their events by themselves).
          </p>
          <p className="mail-address-row">
            <strong className="mail-address" data-testid="mail-address">
              {address.data?.address ?? '…'}
            </strong>
            {address.data ? (
              <CopyButton text={address.data.address} label="mail address" testId="copy-mail-address" />
            ) : null}
          </p>
        </div>
      </header>
      {messages.isPending ? <Loading label="Loading mail…" /> : null}
      {messages.isError ? <ErrorNotice error={messages.error} onRetry={() => messages.refetch()} /> : null}
      {messages.isSuccess && messages.data.items.length === 0 ? (
        <EmptyState title="No mail yet">Messages sent to the address above show up here.</EmptyState>
      ) : null}
      {messages.isSuccess && messages.data.items.length > 0 ? (
        <div className="mail-layout">
          <ul className="card mail-list" data-testid="mail-list">
            {messages.data.items.map((m) => (
              <li key={m.id}>
                <button
                  type="button"
                  className={m.id === openId ? 'mail-row mail-row-open' : 'mail-row'}
                  onClick={() => setOpenId(m.id)}
                  aria-current={m.id === openId ? 'true' : undefined}
                  data-testid="mail-row"
                >
                  <span className="mail-from">{m.from}</span>
                  <span className="mail-subject">{m.subject || '(no subject)'}</span>
                  <span className="muted mail-when">
                    {when(m.receivedAt)}
                    {m.spam?.label === 'spam' ? (
                      <span className="mail-tag mail-tag-spam" data-testid="mail-spam">
                        Spam
                      </span>
                    ) : null}
                    {m.calendarMethod ? (
                      <span className="mail-tag">{LABELS[m.calendarMethod] ?? 'Calendar'}</span>
                    ) : null}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          <article className="card mail-read" aria-live="polite" data-testid="mail-read">
            {open ? (
              <>
                <h2>{open.subject || '(no subject)'}</h2>
                <p className="muted">
                  From {open.from} · {when(open.receivedAt)}
                </p>
                {open.spam?.label === 'spam' ? (
                  <p className="notice notice-error" role="note">
                    The spam filter skill marked this message as spam ({Math.round(open.spam.probability * 100)}%
                    likely). Don’t open links or attachments you weren’t expecting.
                  </p>
                ) : null}
                <pre className="mail-text">{open.text}</pre>
              </>
            ) : (
              <p className="muted">Choose a message to read it.</p>
            )}
          </article>
        </div>
      ) : null}
    </section>
  );
}
