/** The delivery attempts of one endpoint, newest first, with Replay per event. */
import { useEffect, useId, useRef, useState } from 'react';
import { EmptyState, ErrorNotice, Loading, LoadMore, SuccessNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { DeliveryDetailDialog } from './delivery-detail.js';
import { answerWords, eventWords, failureWords, idSuffix } from './event-words.js';
import { type Endpoint, formatDateTime, useDeliveries, useReplay } from './webhooks-api.js';

const ATTEMPTS = ['attempt', 'attempts'] as const;

export function DeliveryLog({
  endpoint,
  reveal = false,
  onRevealed,
}: {
  endpoint: Endpoint;
  /** Bring the log into view and give its heading the focus (its endpoint's link was just followed). */
  reveal?: boolean;
  onRevealed?: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (!reveal) return;
    heading.current?.closest('section')?.scrollIntoView({ block: 'start' });
    heading.current?.focus({ preventScroll: true });
    onRevealed?.();
  }, [reveal, onRevealed]);
  const filterId = useId();
  const [status, setStatus] = useState('');
  const log = useDeliveries(endpoint.id, status);
  const replay = useReplay();
  const [replayed, setReplayed] = useState<{ eventId: string; eventType: string } | null>(null);
  const [openId, setOpenId] = useState<string | null>(null);

  const items = log.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <section className="card" aria-labelledby={`${filterId}-title`} data-testid="delivery-log">
      <DeliveryDetailDialog endpointId={endpoint.id} deliveryId={openId} onClose={() => setOpenId(null)} />
      <div className="toolbar toolbar-spread">
        <h2 id={`${filterId}-title`} tabIndex={-1} ref={heading}>
          Deliveries to <span className="cell-mono">{endpoint.url}</span>
        </h2>
        <div className="toolbar-group">
          <label htmlFor={filterId}>Show</label>
          <select
            id={filterId}
            value={status}
            onChange={(e) => setStatus(e.target.value)}
            data-testid="delivery-filter"
          >
            <option value="">All attempts</option>
            <option value="success">Succeeded</option>
            <option value="fail">Failed</option>
          </select>
          <Button variant="secondary" size="small" onPress={() => log.refetch()}>
            Refresh
          </Button>
        </div>
      </div>
      {replayed ? (
        <SuccessNotice onDismiss={() => setReplayed(null)}>
          “{eventWords(replayed.eventType)}” ({replayed.eventId}) is being sent again, with a fresh set of retries.
        </SuccessNotice>
      ) : null}
      {replay.error ? <ErrorNotice error={replay.error} title="Could not replay" /> : null}
      {log.isPending ? <Loading label="Loading deliveries…" /> : null}
      {log.isError ? <ErrorNotice error={log.error} onRetry={() => log.refetch()} /> : null}
      {log.isSuccess && items.length === 0 ? (
        <EmptyState title="No delivery attempts yet">
          Attempts appear here as events are sent to this endpoint.
        </EmptyState>
      ) : null}
      {items.length > 0 ? (
        <div className="table-wrap" aria-busy={log.isFetching}>
          <table className="table stack-table delivery-table">
            <thead>
              <tr>
                <th scope="col">Attempted</th>
                <th scope="col">Event</th>
                <th scope="col">Result</th>
                <th scope="col">Error</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={a.id} data-testid="delivery-row" data-event-id={a.eventId} data-outcome={a.outcome}>
                  <td data-label="Attempted">
                    <span className="nowrap">{formatDateTime(a.attemptedAt)}</span>
                    <div className="muted">Attempt {a.attempt}</div>
                  </td>
                  <td data-label="Event">
                    {eventWords(a.eventType)}
                    <div className="muted event-code break">
                      <code>{a.eventType}</code> <span className="cell-mono">{a.eventId}</span>
                    </div>
                  </td>
                  <td data-label="Result">
                    <span
                      className={`badge ${a.outcome === 'success' ? 'badge-ok' : 'badge-fail'}`}
                      data-testid="delivery-outcome"
                    >
                      {a.outcome === 'success' ? 'Delivered' : 'Failed'}
                    </span>
                    <div className="muted">
                      <span data-testid="delivery-status">{a.status === null ? 'No answer' : `HTTP ${a.status}`}</span>{' '}
                      · {a.durationMs} ms
                    </div>
                    {a.nextAttemptAt ? <div className="muted">retry {formatDateTime(a.nextAttemptAt)}</div> : null}
                  </td>
                  <td className="cell-error" data-label="Error" data-testid="delivery-error">
                    {a.outcome === 'success' ? (
                      '—'
                    ) : (
                      <>
                        <div>{failureWords(a.error) ?? answerWords(a.status)}</div>
                        {a.error ? <div className="muted">{a.error}</div> : null}
                      </>
                    )}
                  </td>
                  <td className="cell-actions">
                    <div className="row-actions">
                      <Button
                        variant="secondary"
                        size="small"
                        onPress={() => setOpenId(a.id)}
                        data-testid="delivery-details"
                        aria-label={`Details of attempt ${a.attempt} of “${eventWords(a.eventType)}” (event ${idSuffix(a.eventId)})`}
                      >
                        Details
                      </Button>
                      <Button
                        variant="secondary"
                        size="small"
                        isDisabled={replay.isPending}
                        onPress={() =>
                          replay.mutate(
                            { endpointId: endpoint.id, eventId: a.eventId },
                            { onSuccess: () => setReplayed({ eventId: a.eventId, eventType: a.eventType }) },
                          )
                        }
                        data-testid="replay"
                        aria-label={`Replay “${eventWords(a.eventType)}” (event ${idSuffix(a.eventId)})`}
                      >
                        Replay
                      </Button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <LoadMore query={log} noun={ATTEMPTS} />
        </div>
      ) : null}
    </section>
  );
}
