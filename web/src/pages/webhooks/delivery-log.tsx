/** The delivery attempts of one endpoint, grouped by event (newest first), with one Replay per event. */
import { useEffect, useId, useRef, useState } from 'react';
import { EmptyState, ErrorNotice, Loading, LoadMore, SuccessNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { DeliveryDetailDialog } from './delivery-detail.js';
import { answerWords, eventWords, failureWords, idSuffix } from './event-words.js';
import { type Attempt, type Endpoint, formatDateTime, useDeliveries, useReplay } from './webhooks-api.js';

const ATTEMPTS = ['attempt', 'attempts'] as const;

/**
 * The attempts loaded so far, one group per event (its attempts newest first), the event with the newest attempt
 * first: a retried event reads as one item, not as rows interleaved with other events'.
 */
function byEvent(attempts: Attempt[]): { eventId: string; attempts: Attempt[] }[] {
  const groups = new Map<string, Attempt[]>();
  for (const a of attempts) {
    const group = groups.get(a.eventId);
    if (group) group.push(a);
    else groups.set(a.eventId, [a]);
  }
  return [...groups].map(([eventId, list]) => ({ eventId, attempts: list }));
}

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
                <th scope="col">Result</th>
                <th scope="col">Error</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            {byEvent(items).map((group) => {
              const [latest] = group.attempts;
              const name = `“${eventWords(latest.eventType)}” (event ${idSuffix(latest.eventId)})`;
              const delivered = group.attempts.some((a) => a.outcome === 'success');
              const waiting = latest.nextAttemptAt !== null;
              return (
                <tbody key={group.eventId} data-testid="delivery-event" data-event-id={group.eventId}>
                  <tr className="delivery-event-head">
                    <th scope="rowgroup" colSpan={3}>
                      <span className="delivery-event-name">{eventWords(latest.eventType)}</span>{' '}
                      <span className={`badge ${delivered ? 'badge-ok' : waiting ? 'badge-muted' : 'badge-fail'}`}>
                        {delivered ? 'Delivered' : waiting ? 'Retrying' : 'Not delivered'}
                      </span>
                      <span className="muted nowrap">
                        {' '}
                        · {group.attempts.length} {group.attempts.length === 1 ? 'attempt' : 'attempts'}
                      </span>
                      <div className="muted event-code break">
                        <code>{latest.eventType}</code> <span className="cell-mono">{latest.eventId}</span>
                      </div>
                    </th>
                    <td className="cell-actions">
                      <div className="row-actions">
                        <Button
                          variant="secondary"
                          size="small"
                          isDisabled={replay.isPending}
                          onPress={() =>
                            replay.mutate(
                              { endpointId: endpoint.id, eventId: latest.eventId },
                              {
                                onSuccess: () => setReplayed({ eventId: latest.eventId, eventType: latest.eventType }),
                              },
                            )
                          }
                          data-testid="replay"
                          aria-label={`Replay ${name}`}
                        >
                          Replay
                        </Button>
                      </div>
                    </td>
                  </tr>
                  {group.attempts.map((a) => (
                    <tr key={a.id} data-testid="delivery-row" data-event-id={a.eventId} data-outcome={a.outcome}>
                      <td data-label="Attempted">
                        <span className="nowrap">{formatDateTime(a.attemptedAt)}</span>
                        <div className="muted">Attempt {a.attempt}</div>
                      </td>
                      <td data-label="Result">
                        <span
                          className={`badge ${a.outcome === 'success' ? 'badge-ok' : 'badge-fail'}`}
                          data-testid="delivery-outcome"
                        >
                          {a.outcome === 'success' ? 'Delivered' : 'Failed'}
                        </span>
                        <div className="muted">
                          <span data-testid="delivery-status">
                            {a.status === null ? 'No answer' : `HTTP ${a.status}`}
                          </span>{' '}
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
                            aria-label={`Details of attempt ${a.attempt} of ${name}`}
                          >
                            Details
                          </Button>
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              );
            })}
          </table>
          <LoadMore query={log} noun={ATTEMPTS} />
        </div>
      ) : null}
    </section>
  );
}
