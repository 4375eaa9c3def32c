/**
 * The workspace inbox: what exhausted its retries (webhook events, with a Replay to their endpoint; mail; rooms).
 * An item is open until an admin replays its event or resolves it; the list shows the open ones unless asked.
 */

import { Link } from '@tanstack/react-router';
import { useId, useRef, useState } from 'react';
import { focusLost } from '../../components/focus.js';
import { EmptyState, ErrorNotice, Loading, LoadMore, SuccessNotice } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { answerWords, eventWords, failureWords, idSuffix } from './event-words.js';
import {
  type BulkOutcome,
  type Endpoint,
  formatDateTime,
  type InboxFilter,
  type InboxItem,
  useBulkInbox,
  useInbox,
  useReopenInboxItem,
  useReplay,
  useResolveInboxItem,
} from './webhooks-api.js';

const ITEMS = ['item', 'items'] as const;

/** An item's name for its buttons, told apart from its neighbours': "“New patient” of Nov 27, 9:50 AM (event …3rqy)". */
function itemName(item: InboxItem): string {
  const which = item.eventId ? `event ${idSuffix(item.eventId)}` : `item ${idSuffix(item.id)}`;
  return `“${eventWords(item.eventType, item.kind)}” of ${formatDateTime(item.createdAt)} (${which})`;
}

/** What an inbox item that is not a webhook delivery is about, in the Endpoint column's place. */
const NOT_A_DELIVERY: Record<string, string> = {
  'mail.undeliverable': 'Mail (not delivered)',
  'telehealth.room_failed': 'Video room',
  'health.incident_opened': 'Health incident',
  'health.incident_resolved': 'Health incident',
};

const EMPTY: Record<InboxFilter, { title: string; text?: string }> = {
  open: { title: 'Nothing needs attention', text: 'Items you replay or resolve are under Handled.' },
  handled: { title: 'Nothing handled yet', text: 'Items you replay or resolve appear here.' },
  all: { title: 'Nothing has failed' },
};

/** Replayed or resolved: by whom (when known) and when. */
function Handled({ item }: { item: InboxItem }) {
  const replayed = item.state === 'replayed';
  return (
    <div className="inbox-handled">
      <span className={`badge ${replayed ? 'badge-ok' : 'badge-muted'}`} data-testid="inbox-state">
        {replayed ? 'Replayed' : 'Resolved'}
      </span>
      <div className="muted" data-testid="inbox-handled-by">
        {item.handledByName ? `by ${item.handledByName}, ` : item.handledBy ? 'by a former member, ' : ''}
        {formatDateTime(item.handledAt)}
      </div>
    </div>
  );
}

export function InboxList({
  endpoints,
  onOpenEndpoint,
}: {
  endpoints: Endpoint[];
  /** An endpoint's link was followed (its log comes into view). */
  onOpenEndpoint: (endpointId: string) => void;
}) {
  const filterId = useId();
  const [filter, setFilter] = useState<InboxFilter>('open');
  const inbox = useInbox(filter);
  const replay = useReplay();
  const resolve = useResolveInboxItem();
  const reopen = useReopenInboxItem();
  const [done, setDone] = useState<{ action: 'replayed' | 'resolved' | 'reopened'; item: InboxItem } | null>(null);
  const items = inbox.data?.pages.flatMap((p) => p.items) ?? [];
  const bulk = useBulkInbox();
  const [bulkDone, setBulkDone] = useState<BulkOutcome | null>(null);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const openItems = items.filter((i) => i.state === 'open');
  // Only what is still shown and open counts (another admin may have handled some meanwhile).
  const chosen = openItems.filter((i) => selected.has(i.id));
  const select = (ids: string[], on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      for (const id of ids) {
        if (on) next.add(id);
        else next.delete(id);
      }
      return next;
    });
  const selectAll = useRef<HTMLInputElement>(null);
  const endpointOf = (id: string | null) => endpoints.find((e) => e.id === id);
  const busy = (item: InboxItem) =>
    (replay.isPending && replay.variables?.eventId === item.eventId) ||
    (resolve.isPending && resolve.variables === item.id) ||
    (reopen.isPending && reopen.variables === item.id);
  const empty = EMPTY[filter];
  const heading = useRef<HTMLHeadingElement>(null);
  const canReplay = (item: InboxItem) => !!(endpointOf(item.endpointId) && item.eventId);
  const replayable = chosen.filter(canReplay);
  const runBulk = (action: BulkOutcome['action'], list: InboxItem[]) => {
    setBulkDone(null);
    setDone(null);
    bulk.mutate(
      { action, items: list },
      {
        onSuccess: (outcome) => {
          setBulkDone(outcome);
          setSelected(new Set());
          // Its buttons went with the selection: the "Select all" box, else the section's heading.
          setTimeout(() => {
            if (focusLost()) (selectAll.current ?? heading.current)?.focus();
          }, 50);
        },
      },
    );
  };
  const rowsRef = useRef<HTMLTableSectionElement>(null);
  /**
   * After an item left the list (replayed, resolved, reopened): when the focus went with it, the same button of
   * the item now in its place (the one before it for the last), else the section's heading, rather than the page.
   */
  const refocus = (index: number, testId: string) =>
    setTimeout(() => {
      if (!focusLost()) return;
      const rows = [...(rowsRef.current?.querySelectorAll<HTMLElement>('[data-testid="inbox-row"]') ?? [])];
      // The rows after it first, then those before it (nearest first).
      const order = [...rows.slice(index), ...rows.slice(0, index).reverse()];
      const same = order.map((r) => r.querySelector<HTMLElement>(`[data-testid="${testId}"]`)).find(Boolean);
      (same ?? order[0]?.querySelector<HTMLElement>('button') ?? heading.current)?.focus();
    }, 50);

  return (
    <section className="card" aria-labelledby="inbox-title" data-testid="inbox">
      <div className="toolbar toolbar-spread">
        <h2 id="inbox-title" tabIndex={-1} ref={heading}>
          Needs attention
        </h2>
        <div className="toolbar-group">
          <label htmlFor={filterId}>Show</label>
          <select
            id={filterId}
            value={filter}
            onChange={(e) => setFilter(e.target.value as InboxFilter)}
            data-testid="inbox-filter"
          >
            <option value="open">Open</option>
            <option value="handled">Handled</option>
            <option value="all">All</option>
          </select>
        </div>
      </div>
      <p className="muted card-intro">
        What failed every retry: events your endpoints did not take, e-mail the mail server would not accept, video
        rooms that could not be made, and outages of a service Atrium uses. Replay sends an event again; Resolve closes
        an item that needs nothing more (Reopen undoes it). Both move it to Handled.
      </p>
      {done ? (
        <SuccessNotice onDismiss={() => setDone(null)}>
          “{eventWords(done.item.eventType, done.item.kind)}” of {formatDateTime(done.item.createdAt)}{' '}
          {done.action === 'replayed'
            ? 'is being sent again; it moved to Handled.'
            : done.action === 'resolved'
              ? 'is resolved; it moved to Handled.'
              : 'is open again.'}
        </SuccessNotice>
      ) : null}
      {bulkDone && bulkDone.done > 0 ? (
        <SuccessNotice onDismiss={() => setBulkDone(null)}>
          {bulkDone.action === 'resolve'
            ? `${bulkDone.done} ${bulkDone.done === 1 ? 'item' : 'items'} resolved; ${bulkDone.done === 1 ? 'it' : 'they'} moved to Handled.`
            : `${bulkDone.done} ${bulkDone.done === 1 ? 'event is' : 'events are'} being sent again; their items moved to Handled.`}
        </SuccessNotice>
      ) : null}
      {bulkDone && bulkDone.failed.length > 0 ? (
        <ErrorNotice
          error={bulkDone.failed[0].error}
          title={`${bulkDone.failed.length} could not be ${bulkDone.action === 'resolve' ? 'resolved' : 'replayed'} (they stay open)`}
        />
      ) : null}
      {replay.error ? <ErrorNotice error={replay.error} title="Could not replay" /> : null}
      {resolve.error ? <ErrorNotice error={resolve.error} title="Could not resolve" /> : null}
      {reopen.error ? <ErrorNotice error={reopen.error} title="Could not reopen" /> : null}
      {inbox.isPending ? <Loading label="Loading…" /> : null}
      {inbox.isError ? <ErrorNotice error={inbox.error} onRetry={() => inbox.refetch()} /> : null}
      {inbox.isSuccess && items.length === 0 ? <EmptyState title={empty.title}>{empty.text}</EmptyState> : null}
      {openItems.length > 1 ? (
        <div className="bulk-bar" data-testid="inbox-bulk">
          <label className="bulk-select-all">
            <input
              type="checkbox"
              ref={selectAll}
              checked={chosen.length === openItems.length}
              onChange={(e) =>
                select(
                  openItems.map((i) => i.id),
                  e.target.checked,
                )
              }
              data-testid="inbox-select-all"
            />
            Select all {openItems.length} open items shown
          </label>
          {replayable.length > 0 ? (
            <Button
              variant="secondary"
              size="small"
              isPending={bulk.isPending && bulk.variables?.action === 'replay'}
              onPress={() => runBulk('replay', replayable)}
              data-testid="inbox-replay-selected"
            >
              Replay {replayable.length} selected
            </Button>
          ) : null}
          {chosen.length > 0 ? (
            <Button
              variant="secondary"
              size="small"
              isPending={bulk.isPending && bulk.variables?.action === 'resolve'}
              onPress={() => runBulk('resolve', chosen)}
              data-testid="inbox-resolve-selected"
            >
              Resolve {chosen.length} selected
            </Button>
          ) : null}
        </div>
      ) : null}
      {items.length > 0 ? (
        <div className="table-wrap" aria-busy={inbox.isFetching}>
          <table className="table stack-table inbox-table">
            <thead>
              <tr>
                <th scope="col">
                  <span className="visually-hidden">Select</span>
                </th>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Last status</th>
                <th scope="col">
                  <span className="visually-hidden">State and actions</span>
                </th>
              </tr>
            </thead>
            <tbody ref={rowsRef}>
              {items.map((item, index) => {
                const endpoint = endpointOf(item.endpointId);
                const url = endpoint?.url;
                return (
                  <tr
                    key={item.id}
                    data-testid="inbox-row"
                    data-event-id={item.eventId ?? ''}
                    data-state={item.state}
                    className={item.state === 'open' ? undefined : 'inbox-row-handled'}
                  >
                    <td className="cell-select" data-label="Select">
                      {item.state === 'open' ? (
                        <input
                          type="checkbox"
                          checked={selected.has(item.id)}
                          onChange={(e) => select([item.id], e.target.checked)}
                          aria-label={`Select ${itemName(item)}`}
                          data-testid="inbox-select"
                        />
                      ) : null}
                    </td>
                    <td className="nowrap" data-label="When">
                      {formatDateTime(item.createdAt)}
                    </td>
                    <td data-label="Event">
                      <span data-testid="inbox-what">{eventWords(item.eventType, item.kind)}</span>
                      <div className="muted event-code break">
                        {item.eventType ? <code>{item.eventType}</code> : null}{' '}
                        <span className="cell-mono">{item.eventId}</span>
                      </div>
                    </td>
                    <td data-label="Endpoint" className="break">
                      {endpoint?.description ? <div>{endpoint.description}</div> : null}
                      {url && item.endpointId ? (
                        <Link
                          to="/admin/webhooks/$endpointId"
                          params={{ endpointId: item.endpointId }}
                          className="endpoint-link"
                          resetScroll={false}
                          onClick={() => item.endpointId && onOpenEndpoint(item.endpointId)}
                        >
                          {url}
                        </Link>
                      ) : NOT_A_DELIVERY[item.kind] ? (
                        <span data-testid="inbox-about">{NOT_A_DELIVERY[item.kind]}</span>
                      ) : (
                        <span className="muted">deleted endpoint</span>
                      )}
                    </td>
                    <td data-label="Last status" data-testid="inbox-last-status">
                      {item.kind === 'webhook.dead_lettered' ? (
                        <>
                          <div>
                            {answerWords(item.lastStatus)}
                            {failureWords(item.lastError) ? `: ${failureWords(item.lastError)}` : null}
                          </div>
                          {item.lastError ? <div className="muted cell-error">{item.lastError}</div> : null}
                        </>
                      ) : (
                        <div className="cell-error">{item.lastError ?? '—'}</div>
                      )}
                    </td>
                    <td className="cell-actions" data-label="State">
                      {item.state !== 'open' ? (
                        <div className="row-actions">
                          <Handled item={item} />
                          {item.state === 'resolved' ? (
                            <Button
                              variant="secondary"
                              size="small"
                              isDisabled={busy(item)}
                              onPress={() =>
                                reopen.mutate(item.id, {
                                  onSuccess: () => {
                                    setDone({ action: 'reopened', item });
                                    refocus(index, 'inbox-reopen');
                                  },
                                })
                              }
                              data-testid="inbox-reopen"
                              aria-label={`Reopen ${itemName(item)}`}
                            >
                              Reopen
                            </Button>
                          ) : null}
                        </div>
                      ) : (
                        <div className="row-actions">
                          {url && item.endpointId && item.eventId ? (
                            <Button
                              variant="secondary"
                              size="small"
                              isDisabled={busy(item)}
                              onPress={() =>
                                replay.mutate(
                                  { endpointId: item.endpointId!, eventId: item.eventId! },
                                  {
                                    onSuccess: () => {
                                      setDone({ action: 'replayed', item });
                                      refocus(index, 'inbox-replay');
                                    },
                                  },
                                )
                              }
                              data-testid="inbox-replay"
                              aria-label={`Replay ${itemName(item)}`}
                            >
                              Replay
                            </Button>
                          ) : null}
                          <Button
                            variant="secondary"
                            size="small"
                            isDisabled={busy(item)}
                            onPress={() =>
                              resolve.mutate(item.id, {
                                onSuccess: () => {
                                  setDone({ action: 'resolved', item });
                                  refocus(index, 'inbox-resolve');
                                },
                              })
                            }
                            data-testid="inbox-resolve"
                            aria-label={`Resolve ${itemName(item)}`}
                          >
                            Resolve
                          </Button>
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <LoadMore query={inbox} noun={ITEMS} />
        </div>
      ) : null}
    </section>
  );
}
