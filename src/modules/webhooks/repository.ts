import { and, desc, eq, inArray, lt, ne, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { TIERS } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { textArray } from '../../platform/db/lists.js';
import { preparedRows, queryRows } from '../../platform/db/tenant.js';
import type { DomainEvent } from '../../platform/events/events.js';
import {
  cancelJobs,
  insertJobsSql,
  JOBS_CHANNEL,
  type LoadingJob,
  type SettledRecord,
} from '../../platform/jobs/index.js';
import { domainEvents } from '../../platform/platform-tables.js';
import { hasFeature } from '../../platform/tiers.js';
import { inboxItems, webhookAttempts, webhookDeliveries, webhookEndpoints, webhookFailureMails } from './tables.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
export type InboxRow = typeof inboxItems.$inferSelect;

/** Events every enabled endpoint receives whatever its filter (contract §7.2). */
export const ALWAYS_DELIVERED = new Set<string>(['break_glass.invoked']);

/** The tiers that have outbound webhooks, as an SQL list for `tier IN (…)`. */
const ENTITLED_TIERS = sql.join(
  TIERS.filter((tier) => hasFeature(tier, 'outbound_webhooks')).map((tier) => sql`${tier}`),
  sql`, `,
);

/**
 * Delivery runs as platform/jobs type `webhooks.deliver`: one job per delivery budget (payload
 * {endpointId, eventId}, concurrency key = endpoint id, dedupe key = endpoint:event). The delivery
 * row keeps the budget of 6 attempts; the job's own attempt limit only guards against a delivery
 * that keeps killing its worker.
 */
export const DELIVERY_JOB = { type: 'webhooks.deliver', maxAttempts: 50 } as const;

/** A delivery job's payload. */
export const deliveryPayloadSchema = z.object({ endpointId: z.string().min(1), eventId: z.string().min(1) });
export type DeliveryPayload = z.infer<typeof deliveryPayloadSchema>;

/** Queues one delivery job per row of `rows` (columns workspace_id, endpoint_id, event_id) and wakes the workers. */
const enqueueDeliveries = (rows: SQL) => sql`
  jobs_added AS (${insertJobsSql(
    DELIVERY_JOB,
    sql`SELECT r.workspace_id, jsonb_build_object('endpointId', r.endpoint_id, 'eventId', r.event_id),
               r.endpoint_id || ':' || r.event_id, r.endpoint_id
          FROM (${rows}) r`,
  )})
  SELECT pg_notify(${JOBS_CHANNEL}, ${DELIVERY_JOB.type}) WHERE EXISTS (SELECT 1 FROM jobs_added)`;

/** SQL over a concurrency key (an endpoint id): whether its deliveries may go now (enabled, entitled tier). */
export const endpointAcceptsDeliveries = (key: SQL) => sql`EXISTS (
  SELECT 1 FROM webhook_endpoints e JOIN workspaces w ON w.id = e.workspace_id
   WHERE e.id = ${key} AND e.enabled AND w.tier IN (${ENTITLED_TIERS}))`;

// ---- endpoints (tenant transactions) ----

export async function insertEndpoint(tx: Tx, row: typeof webhookEndpoints.$inferInsert): Promise<EndpointRow> {
  const [created] = await tx.insert(webhookEndpoints).values(row).returning();
  return created;
}

export async function listEndpoints(tx: Tx, workspaceId: string): Promise<EndpointRow[]> {
  return tx
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.workspaceId, workspaceId))
    .orderBy(desc(webhookEndpoints.id));
}

export async function findEndpoint(tx: Tx, workspaceId: string, id: string): Promise<EndpointRow | undefined> {
  const [row] = await tx
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)));
  return row;
}

/**
 * The endpoint, its row locked until the transaction ends (FOR NO KEY UPDATE: deliveries of it can still be
 * added meanwhile), so a read-then-write of it (a secret rotation) runs after any other one in progress.
 */
export async function lockEndpoint(tx: Tx, workspaceId: string, id: string): Promise<EndpointRow | undefined> {
  const [row] = await tx
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)))
    .for('no key update');
  return row;
}

export async function updateEndpoint(
  tx: Tx,
  workspaceId: string,
  id: string,
  patch: Partial<typeof webhookEndpoints.$inferInsert>,
): Promise<EndpointRow | undefined> {
  const [row] = await tx
    .update(webhookEndpoints)
    .set({ ...patch, updatedAt: new Date() })
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

/** Deletes the endpoint and cancels its pending deliveries (attempt rows stay for the record). */
export async function deleteEndpoint(tx: Tx, workspaceId: string, id: string): Promise<boolean> {
  const deleted = await tx
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)))
    .returning({ id: webhookEndpoints.id });
  if (deleted.length === 0) return false;
  await cancelJobs(tx, DELIVERY_JOB, sql`workspace_id = ${workspaceId} AND concurrency_key = ${id}`);
  await tx
    .delete(webhookFailureMails)
    .where(and(eq(webhookFailureMails.workspaceId, workspaceId), eq(webhookFailureMails.endpointId, id)));
  await tx
    .update(webhookDeliveries)
    .set({ state: 'cancelled', updatedAt: new Date() })
    .where(
      and(
        eq(webhookDeliveries.workspaceId, workspaceId),
        eq(webhookDeliveries.endpointId, id),
        eq(webhookDeliveries.state, 'pending'),
      ),
    );
  return true;
}

// ---- delivery log, replay, inbox (tenant transactions) ----

export async function listAttempts(
  tx: Tx,
  workspaceId: string,
  endpointId: string,
  opts: { limit: number; before?: string; status?: string },
): Promise<AttemptRow[]> {
  const status = opts.status;
  const statusFilter =
    status === undefined
      ? undefined
      : status === 'success' || status === 'fail'
        ? eq(webhookAttempts.outcome, status)
        : eq(webhookAttempts.status, Number(status));
  return tx
    .select()
    .from(webhookAttempts)
    .where(
      and(
        eq(webhookAttempts.workspaceId, workspaceId),
        eq(webhookAttempts.endpointId, endpointId),
        opts.before ? lt(webhookAttempts.id, opts.before) : undefined,
        statusFilter,
      ),
    )
    .orderBy(desc(webhookAttempts.id))
    .limit(opts.limit + 1);
}

/** One attempt with its event (to rebuild the exact request body), or undefined when it is not this endpoint's. */
export async function findAttemptWithEvent(tx: Tx, workspaceId: string, endpointId: string, attemptId: string) {
  const [row] = await tx
    .select({ attempt: webhookAttempts, event: domainEvents })
    .from(webhookAttempts)
    .leftJoin(
      domainEvents,
      and(eq(domainEvents.workspaceId, webhookAttempts.workspaceId), eq(domainEvents.id, webhookAttempts.eventId)),
    )
    .where(
      and(
        eq(webhookAttempts.workspaceId, workspaceId),
        eq(webhookAttempts.endpointId, endpointId),
        eq(webhookAttempts.id, attemptId),
      ),
    );
  return row;
}

/**
 * Queues the event again for the endpoint with a fresh retry budget (a new job; one still queued or
 * running for it is cancelled, so an attempt in flight cannot settle the replay); false when it
 * never went there.
 */
export async function resetDelivery(tx: Tx, workspaceId: string, endpointId: string, eventId: string) {
  const rows = await tx
    .update(webhookDeliveries)
    .set({
      state: 'pending',
      attempts: 0,
      nextAttemptAt: sql`now()`,
      updatedAt: new Date(),
    })
    .where(
      and(
        eq(webhookDeliveries.workspaceId, workspaceId),
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.eventId, eventId),
      ),
    )
    .returning({ eventId: webhookDeliveries.eventId });
  if (rows.length === 0) return false;
  await cancelJobs(tx, DELIVERY_JOB, sql`workspace_id = ${workspaceId} AND dedupe_key = ${`${endpointId}:${eventId}`}`);
  await tx.execute(
    sql`WITH ${enqueueDeliveries(sql`SELECT ${workspaceId}::text AS workspace_id, ${endpointId}::text AS endpoint_id, ${eventId}::text AS event_id`)}`,
  );
  return true;
}

/** Which inbox items a list shows: the open ones, the handled ones (replayed or resolved), or all. */
export type InboxFilter = 'open' | 'handled' | 'all';

export async function listInbox(
  tx: Tx,
  workspaceId: string,
  opts: { limit: number; before?: string; state: InboxFilter },
) {
  return tx
    .select()
    .from(inboxItems)
    .where(
      and(
        eq(inboxItems.workspaceId, workspaceId),
        opts.before ? lt(inboxItems.id, opts.before) : undefined,
        // A literal, not a parameter: the partial index inbox_items_open_idx serves it.
        opts.state === 'open' ? sql`${inboxItems.state} = 'open'` : undefined,
        opts.state === 'handled' ? ne(inboxItems.state, 'open') : undefined,
      ),
    )
    .orderBy(desc(inboxItems.id))
    .limit(opts.limit + 1);
}

export async function findInboxItem(tx: Tx, workspaceId: string, id: string): Promise<InboxRow | undefined> {
  const [row] = await tx
    .select()
    .from(inboxItems)
    .where(and(eq(inboxItems.workspaceId, workspaceId), eq(inboxItems.id, id)));
  return row;
}

/**
 * Marks open inbox items handled, now, by `userId`: one item by id (`resolved`), or every open dead letter of an
 * event to an endpoint (`replayed`). Returns the items changed (none when they were already handled).
 */
export async function handleInboxItems(
  tx: Tx,
  workspaceId: string,
  which: { id: string } | { endpointId: string; eventId: string },
  state: 'replayed' | 'resolved',
  userId: string | null,
): Promise<InboxRow[]> {
  return tx
    .update(inboxItems)
    .set({ state, handledAt: sql`now()`, handledBy: userId })
    .where(
      and(
        eq(inboxItems.workspaceId, workspaceId),
        // A replay of the event also takes its resolved items (they could otherwise be reopened as if the event
        // still waited); an item is resolved only while open.
        'id' in which || state !== 'replayed'
          ? sql`${inboxItems.state} = 'open'`
          : sql`${inboxItems.state} IN ('open', 'resolved')`,
        'id' in which
          ? eq(inboxItems.id, which.id)
          : and(
              eq(inboxItems.kind, 'webhook.dead_lettered'),
              eq(inboxItems.endpointId, which.endpointId),
              eq(inboxItems.eventId, which.eventId),
            ),
      ),
    )
    .returning();
}

/** The open items of these kinds about `eventType`, resolved now by the system (no one: `handledBy` null). */
export async function settleInboxItems(tx: Tx, workspaceId: string, eventType: string, kinds: string[]): Promise<void> {
  await tx
    .update(inboxItems)
    .set({ state: 'resolved', handledAt: sql`now()`, handledBy: null })
    .where(
      and(
        eq(inboxItems.workspaceId, workspaceId),
        eq(inboxItems.eventType, eventType),
        inArray(inboxItems.kind, kinds),
        sql`${inboxItems.state} = 'open'`,
      ),
    );
}

/** A resolved item back to open (its handling forgotten); none when it is not resolved. */
export async function reopenInboxItem(tx: Tx, workspaceId: string, id: string): Promise<InboxRow | undefined> {
  const [row] = await tx
    .update(inboxItems)
    .set({ state: 'open', handledAt: null, handledBy: null })
    .where(and(eq(inboxItems.workspaceId, workspaceId), eq(inboxItems.id, id), sql`${inboxItems.state} = 'resolved'`))
    .returning();
  return row;
}

// ---- fan-out (inside the publishing transaction) ----

/**
 * One pending delivery, and its job, per matching enabled endpoint, in the transaction that publishes
 * the events, so the deliveries exist exactly when the change committed. Each workspace's events go
 * in one statement; workspaces below the entitled tier get none.
 */
export async function insertDeliveriesFor(tx: Tx, events: DomainEvent[]): Promise<void> {
  const byWorkspace = new Map<string, DomainEvent[]>();
  for (const event of events) {
    if (event.type === 'webhook.test') {
      // A test event goes to the one endpoint it names, whatever that endpoint's event filter (§7.1).
      await tx.execute(sql`
        WITH added AS (
          INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type, next_attempt_at)
          SELECT e.workspace_id, e.id, ${event.id}, ${event.type}, now()
            FROM webhook_endpoints e
           WHERE e.workspace_id = ${event.workspaceId} AND e.id = ${String(event.data.endpointId)}
          ON CONFLICT DO NOTHING
          RETURNING workspace_id, endpoint_id, event_id
        ), ${enqueueDeliveries(sql`SELECT workspace_id, endpoint_id, event_id FROM added`)}`);
    } else byWorkspace.set(event.workspaceId, [...(byWorkspace.get(event.workspaceId) ?? []), event]);
  }
  // The events of a workspace in one statement, however many (one JSON parameter).
  for (const [workspaceId, batch] of byWorkspace) {
    const input = JSON.stringify(batch.map((e) => ({ id: e.id, type: e.type })));
    await tx.execute(sql`
      WITH added AS (
      INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type, next_attempt_at)
      SELECT e.workspace_id, e.id, v.id, v.type, now()
        FROM webhook_endpoints e
        JOIN workspaces w ON w.id = e.workspace_id
       CROSS JOIN jsonb_to_recordset(${input}::jsonb) AS v(id text, type text)
       WHERE e.workspace_id = ${workspaceId} AND e.enabled
         AND w.tier IN (${ENTITLED_TIERS})
         AND (v.type IN (${sql.join(
           [...ALWAYS_DELIVERED].map((t) => sql`${t}`),
           sql`, `,
         )}) OR '*' = ANY(e.events) OR v.type = ANY(e.events))
      ON CONFLICT DO NOTHING
      RETURNING workspace_id, endpoint_id, event_id
      ), ${enqueueDeliveries(sql`SELECT workspace_id, endpoint_id, event_id FROM added`)}`);
  }
}

// ---- delivery jobs (system transactions: the job worker serves every workspace) ----

/** What a delivery job loads with its claim: the delivery, its event and its endpoint. */
export interface ClaimedDelivery {
  workspace_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** Attempt number within the current retry budget (1 = first). */
  attempts: number;
  scheduled_at: Date | string;
  data: Record<string, unknown>;
  event_created_at: Date | string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | string | null;
}

/**
 * The claimed jobs' deliveries with their events and endpoints, in one statement. A delivery no longer
 * pending (delivered, cancelled, dead) is left out: its job has nothing to do.
 */
export async function loadDeliveries(
  tx: Tx,
  jobs: LoadingJob<DeliveryPayload>[],
): Promise<Map<string, ClaimedDelivery>> {
  const input = JSON.stringify(
    jobs.map((j) => ({
      job_id: j.id,
      workspace_id: j.workspaceId,
      endpoint_id: j.payload.endpointId,
      event_id: j.payload.eventId,
    })),
  );
  const rows = await preparedRows<ClaimedDelivery & { job_id: string }>(
    tx,
    sql`
    SELECT v.job_id, d.workspace_id, d.endpoint_id, d.event_id, d.event_type, d.attempts + 1 AS attempts,
           d.next_attempt_at AS scheduled_at, ev.data, ev.created_at AS event_created_at,
           e.url, e.secret_enc, e.previous_secret_enc, e.previous_secret_expires_at
      FROM jsonb_to_recordset(${input}::jsonb) AS v(job_id text, workspace_id text, endpoint_id text, event_id text)
      -- LIMIT 1 keeps these as per-row primary-key lookups whatever the (often stale) statistics say.
     CROSS JOIN LATERAL (SELECT x.workspace_id, x.endpoint_id, x.event_id, x.event_type, x.attempts, x.next_attempt_at
                           FROM webhook_deliveries x
                          WHERE x.workspace_id = v.workspace_id AND x.endpoint_id = v.endpoint_id
                            AND x.event_id = v.event_id AND x.state = 'pending' LIMIT 1) d
     CROSS JOIN LATERAL (SELECT x.data, x.created_at FROM domain_events x
                          WHERE x.workspace_id = d.workspace_id AND x.id = d.event_id LIMIT 1) ev
     CROSS JOIN LATERAL (SELECT y.url, y.secret_enc, y.previous_secret_enc, y.previous_secret_expires_at
                           FROM webhook_endpoints y
                          WHERE y.workspace_id = d.workspace_id AND y.id = d.endpoint_id LIMIT 1) e`,
  );
  return new Map(rows.map(({ job_id, ...row }) => [job_id, row]));
}

export interface AttemptResult {
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  attemptId: string;
  outcome: 'success' | 'fail';
  status: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
  scheduledAt: Date;
  /** After a failure: seconds until the retry, or null when the retry budget is spent (dead-letter). */
  retryInSeconds: number | null;
  /** What was sent and what came back (§7.1 delivery detail); the request body is the event itself. */
  exchange?: {
    url: string;
    requestHeaders: Record<string, string>;
    responseHeaders: Record<string, string> | null;
    responseBody: string | null;
    responseTruncated: boolean;
  };
}

/**
 * Applies a batch of attempt results in one statement: the attempt rows for the log, and the new
 * delivery state only where the job's claim still held (`held`: a replay or a take-over after an
 * expired lease fences a stale result out, though its attempt is still logged).
 */
export async function recordAttempts(tx: Tx, results: SettledRecord<AttemptResult>[]): Promise<void> {
  if (results.length === 0) return;
  // The whole batch as one JSON parameter: a batch of hundreds of results costs one bound value
  // (building thousands of parameters was the worker's largest CPU cost), and one statement.
  const input = JSON.stringify(
    results.map(({ value: r, held }) => ({
      workspace_id: r.workspaceId,
      endpoint_id: r.endpointId,
      event_id: r.eventId,
      held,
      state: r.outcome === 'success' ? 'delivered' : r.retryInSeconds === null ? 'dead' : 'pending',
      retry_in: r.retryInSeconds,
      status: r.status,
      error: r.error,
      id: r.attemptId,
      event_type: r.eventType,
      attempt: r.attempt,
      outcome: r.outcome,
      duration_ms: Math.round(r.durationMs),
      attempted_at: r.attemptedAt.toISOString(),
      scheduled_at: r.scheduledAt.toISOString(),
      request_url: r.exchange?.url ?? null,
      request_headers: r.exchange?.requestHeaders ?? null,
      response_headers: r.exchange?.responseHeaders ?? null,
      response_body: r.exchange?.responseBody ?? null,
      response_truncated: r.exchange?.responseTruncated ?? false,
    })),
  );
  await preparedRows(
    tx,
    sql`
    WITH v AS (
      SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS x(
        workspace_id text, endpoint_id text, event_id text, held boolean, state text, retry_in float8, status int,
        error text, id text, event_type text, attempt int, outcome text, duration_ms int, attempted_at timestamptz,
        scheduled_at timestamptz, request_url text, request_headers jsonb, response_headers jsonb,
        response_body text, response_truncated boolean)
    ), settled AS (
      UPDATE webhook_deliveries d
         SET state = v.state, attempts = d.attempts + 1,
             next_attempt_at = CASE WHEN v.retry_in IS NULL THEN d.next_attempt_at
                                    ELSE now() + make_interval(secs => v.retry_in) END,
             last_status = v.status, last_error = v.error, updated_at = now()
        FROM v
       WHERE d.workspace_id = v.workspace_id AND d.endpoint_id = v.endpoint_id AND d.event_id = v.event_id
         AND v.held AND d.state = 'pending'
      RETURNING d.workspace_id, d.endpoint_id, d.event_id, d.state, d.next_attempt_at
    )
      -- Every attempt is logged, also one whose result was fenced out (its lease had passed on).
      INSERT INTO webhook_attempts (workspace_id, id, endpoint_id, event_id, event_type, attempt, outcome, status,
                                    error, duration_ms, attempted_at, scheduled_at, next_attempt_at, request_url,
                                    request_headers, response_headers, response_body, response_truncated)
      SELECT v.workspace_id, v.id, v.endpoint_id, v.event_id, v.event_type, v.attempt, v.outcome, v.status,
             v.error, v.duration_ms, v.attempted_at, v.scheduled_at,
             CASE WHEN s.state = 'pending' THEN s.next_attempt_at END, v.request_url,
             v.request_headers, v.response_headers, v.response_body, v.response_truncated
        FROM v LEFT JOIN settled s
          ON s.workspace_id = v.workspace_id AND s.endpoint_id = v.endpoint_id AND s.event_id = v.event_id`,
  );
}

/**
 * Marks a delivery dead (its budget spent, or its job dead) and returns what the dead letter says;
 * undefined when it was settled otherwise meanwhile.
 */
export async function markDeliveryDead(
  tx: Tx,
  key: { workspaceId: string; endpointId: string; eventId: string },
  error: string,
) {
  const [row] = await queryRows<{
    event_type: string;
    attempts: number;
    last_status: number | null;
    last_error: string | null;
  }>(
    tx,
    sql`UPDATE webhook_deliveries SET state = 'dead', last_error = coalesce(last_error, ${error}), updated_at = now()
         WHERE workspace_id = ${key.workspaceId} AND endpoint_id = ${key.endpointId} AND event_id = ${key.eventId}
           AND state IN ('pending', 'dead')
        RETURNING event_type, attempts, last_status, last_error`,
  );
  return row;
}

export async function insertInboxItem(tx: Tx, row: typeof inboxItems.$inferInsert): Promise<void> {
  await tx.insert(inboxItems).values(row);
}

/** An admin to e-mail about an endpoint's dead letter now: when the last such e-mail went, and how many since. */
export interface FailureMailDue {
  recipient: string;
  /** Null for the first e-mail about this endpoint to this admin. */
  previousSentAt: Date | null;
  /** Dead letters of the endpoint since previousSentAt this admin was not e-mailed about. */
  held: number;
}

/**
 * For one dead letter of an endpoint: the recipients (lower-cased addresses) whose last e-mail about the endpoint
 * is older than `windowMs` (or who never had one) are due: their send is recorded now. The others are not, and
 * the dead letter is counted for their next e-mail. Rows are locked in address order, so concurrent dead letters of
 * one endpoint wait for each other and only one of them mails.
 */
export async function claimFailureMails(
  tx: Tx,
  workspaceId: string,
  endpointId: string,
  recipients: string[],
  windowMs: number,
): Promise<FailureMailDue[]> {
  const sorted = [...new Set(recipients)].sort();
  if (sorted.length === 0) return [];
  const list = sql`${textArray(sorted)}::text[]`;
  await tx.execute(sql`
    INSERT INTO webhook_failure_mails (workspace_id, endpoint_id, recipient)
    SELECT ${workspaceId}, ${endpointId}, r FROM unnest(${list}) AS r ORDER BY r
    ON CONFLICT DO NOTHING`);
  const rows = await queryRows<{ recipient: string; previous_sent_at: Date | string | null; held: number }>(
    tx,
    sql`
    WITH o AS (
      SELECT recipient, last_sent_at, held,
             last_sent_at IS NULL OR last_sent_at <= now() - make_interval(secs => ${windowMs / 1000}) AS due
        FROM webhook_failure_mails
       WHERE workspace_id = ${workspaceId} AND endpoint_id = ${endpointId} AND recipient = ANY(${list})
       ORDER BY recipient
         FOR UPDATE
    ), recorded AS (
      UPDATE webhook_failure_mails m
         SET last_sent_at = CASE WHEN o.due THEN now() ELSE m.last_sent_at END,
             held = CASE WHEN o.due THEN 0 ELSE m.held + 1 END
        FROM o
       WHERE m.workspace_id = ${workspaceId} AND m.endpoint_id = ${endpointId} AND m.recipient = o.recipient
      RETURNING m.recipient
    )
    SELECT recipient, last_sent_at AS previous_sent_at, held FROM o WHERE due ORDER BY recipient`,
  );
  return rows.map((r) => ({
    recipient: r.recipient,
    previousSentAt: r.previous_sent_at === null ? null : new Date(r.previous_sent_at),
    held: Number(r.held),
  }));
}

/** Dead letters held back from an admin's e-mail about an endpoint, now that the window after that e-mail ended. */
export interface HeldFailureMail extends FailureMailDue {
  workspaceId: string;
  endpointId: string;
  previousSentAt: Date;
}

/**
 * Every recipient whose window after an e-mail about an endpoint has ended with dead letters held back: their send
 * is recorded now (held back nothing, window starting again), in this transaction, so the caller's e-mails and the
 * record commit together. Rows another transaction holds (a dead letter being mailed) are skipped: that one mails
 * them. At most `limit` rows a call, oldest windows first.
 */
export async function claimHeldFailureMails(tx: Tx, windowMs: number, limit: number): Promise<HeldFailureMail[]> {
  const rows = await queryRows<{
    workspace_id: string;
    endpoint_id: string;
    recipient: string;
    previous_sent_at: Date | string;
    held: number;
  }>(
    tx,
    sql`
    WITH due AS (
      SELECT workspace_id, endpoint_id, recipient, last_sent_at, held
        FROM webhook_failure_mails
       WHERE held > 0 AND last_sent_at <= now() - make_interval(secs => ${windowMs / 1000})
       ORDER BY last_sent_at, workspace_id, endpoint_id, recipient
       LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
    ), recorded AS (
      UPDATE webhook_failure_mails m
         SET last_sent_at = now(), held = 0
        FROM due
       WHERE m.workspace_id = due.workspace_id AND m.endpoint_id = due.endpoint_id AND m.recipient = due.recipient
      RETURNING m.recipient
    )
    SELECT workspace_id, endpoint_id, recipient, last_sent_at AS previous_sent_at, held FROM due
     ORDER BY workspace_id, endpoint_id, recipient`,
  );
  return rows.map((r) => ({
    workspaceId: r.workspace_id,
    endpointId: r.endpoint_id,
    recipient: r.recipient,
    previousSentAt: new Date(r.previous_sent_at),
    held: Number(r.held),
  }));
}
