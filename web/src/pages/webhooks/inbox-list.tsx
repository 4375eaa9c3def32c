/** The workspace inbox: what exhausted its retries (webhook events, with a Replay to their endpoint; mail; rooms). */

import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { EmptyState, ErrorNotice, Loading, LoadMore, SuccessNotice } from '../../components/status.js';
import { type Endpoint, formatDateTime, useInbox, useReplay } from './webhooks-api.js';

const EVENTS = ['event', 'events'] as const;

/** What an inbox item that is not a webhook delivery is about, in the Endpoint column's place. */
const NOT_A_DELIVERY: Record<string, string> = {
  'mail.undeliverable': 'Mail (not delivered)',
  'telehealth.room_failed': 'Video room',
  'health.incident_opened': 'Health incident',
  'health.incident_resolved': 'Health incident',
};

export function InboxList({ endpoints }: { endpoints: Endpoint[] }) {
  const inbox = useInbox();
  const replay = useReplay();
  const [replayed, setReplayed] = useState<string | null>(null);
  const items = inbox.data?.pages.flatMap((p) => p.items) ?? [];
  const urlOf = (id: string | null) => endpoints.find((e) => e.id === id)?.url;

  return (
    <section className="card" aria-labelledby="inbox-title" data-testid="inbox">
      <div className="toolbar">
        <h2 id="inbox-title">Inbox</h2>
      </div>
      <p className="muted card-intro">
        What failed every retry: events to your endpoints (the workspace admins were e-mailed about each), mail the
        relay would not take, video rooms that could not be made, and health incidents.
      </p>
      {replayed ? (
        <SuccessNotice onDismiss={() => setReplayed(null)}>
          Event <code>{replayed}</code> is queued again.
        </SuccessNotice>
      ) : null}
      {replay.error ? <ErrorNotice error={replay.error} title="Could not replay" /> : null}
      {inbox.isPending ? <Loading label="Loading inbox…" /> : null}
      {inbox.isError ? <ErrorNotice error={inbox.error} onRetry={() => inbox.refetch()} /> : null}
      {inbox.isSuccess && items.length === 0 ? <EmptyState title="Nothing has failed" /> : null}
      {items.length > 0 ? (
        <div className="table-wrap">
          <table className="table stack-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Last status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((item) => {
                const url = urlOf(item.endpointId);
                return (
                  <tr key={item.id} data-testid="inbox-row" data-event-id={item.eventId ?? ''}>
                    <td className="nowrap" data-label="When">
                      {formatDateTime(item.createdAt)}
                    </td>
                    <td data-label="Event">
                      <code>{item.eventType}</code>
                      <div className="cell-mono muted">{item.eventId}</div>
                    </td>
                    <td data-label="Endpoint" className="break">
                      {url && item.endpointId ? (
                        <Link to="/admin/webhooks/$endpointId" params={{ endpointId: item.endpointId }}>
                          {url}
                        </Link>
                      ) : NOT_A_DELIVERY[item.kind] ? (
                        <span data-testid="inbox-about">{NOT_A_DELIVERY[item.kind]}</span>
                      ) : (
                        <span className="muted">deleted endpoint</span>
                      )}
                    </td>
                    <td data-label="Last status">
                      {item.lastStatus ?? '—'}
                      {item.lastError ? <div className="muted cell-error">{item.lastError}</div> : null}
                    </td>
                    <td className="cell-actions">
                      {url && item.endpointId && item.eventId ? (
                        <button
                          type="button"
                          className="button button-secondary button-small"
                          disabled={replay.isPending}
                          onClick={() =>
                            replay.mutate(
                              { endpointId: item.endpointId!, eventId: item.eventId! },
                              { onSuccess: () => setReplayed(item.eventId) },
                            )
                          }
                          data-testid="inbox-replay"
                        >
                          Replay
                        </button>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <LoadMore query={inbox} noun={EVENTS} />
        </div>
      ) : null}
    </section>
  );
}
