import { and, desc, eq, lt, sql } from 'drizzle-orm';
import { TIERS } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { queryRows } from '../../platform/db/tenant.js';
import type { DomainEvent } from '../../platform/events/events.js';
import { domainEvents } from '../../platform/platform-tables.js';
import { hasFeature } from '../../platform/tiers.js';
import { inboxItems, webhookAttempts, webhookDeliveries, webhookEndpoints } from './tables.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;
export type InboxRow = typeof inboxItems.$inferSelect;

/** Events every enabled endpoint receives whatever its filter (contract §7.2). */
export const ALWAYS_DELIVERED = new Set<string>(['break_glass.invoked']);

const ENTITLED_TIERS = TIERS.filter((tier) => hasFeature(tier, 'outbound_webhooks'));

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
  await tx
    .update(webhookDeliveries)
    .set({ state: 'cancelled', lockedUntil: null, leaseToken: null, updatedAt: new Date() })
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

/** Queues the event again for the endpoint with a fresh retry budget; false when it never went there. */
export async function resetDelivery(tx: Tx, workspaceId: string, endpointId: string, eventId: string) {
  const rows = await tx
    .update(webhookDeliveries)
    .set({
      state: 'pending',
      attempts: 0,
      nextAttemptAt: sql`now()`,
      lockedUntil: null,
      leaseToken: null,
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
  return rows.length > 0;
}

export async function listInbox(tx: Tx, workspaceId: string, opts: { limit: number; before?: string }) {
  return tx
    .select()
    .from(inboxItems)
    .where(and(eq(inboxItems.workspaceId, workspaceId), opts.before ? lt(inboxItems.id, opts.before) : undefined))
    .orderBy(desc(inboxItems.id))
    .limit(opts.limit + 1);
}

// ---- fan-out (inside the publishing transaction) ----

/**
 * One pending delivery per matching enabled endpoint, in the transaction that publishes the event,
 * so the delivery exists exactly when the change committed. Workspaces below the entitled tier get none.
 */
/** Delivery rows for every enabled endpoint whose filter takes the event; events of one workspace. */
export async function insertDeliveriesFor(tx: Tx, events: DomainEvent[]): Promise<void> {
  const byWorkspace = new Map<string, DomainEvent[]>();
  for (const event of events) {
    if (event.type === 'webhook.test') {
      // A test event goes to the one endpoint it names, whatever that endpoint's event filter (§7.1).
      await tx.execute(sql`
        INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type, next_attempt_at)
        SELECT e.workspace_id, e.id, ${event.id}, ${event.type}, now()
          FROM webhook_endpoints e
         WHERE e.workspace_id = ${event.workspaceId} AND e.id = ${String(event.data.endpointId)}
        ON CONFLICT DO NOTHING`);
    } else byWorkspace.set(event.workspaceId, [...(byWorkspace.get(event.workspaceId) ?? []), event]);
  }
  // The events of a workspace in one statement, however many (one JSON parameter).
  for (const [workspaceId, batch] of byWorkspace) {
    const input = JSON.stringify(batch.map((e) => ({ id: e.id, type: e.type })));
    await tx.execute(sql`
      INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type, next_attempt_at)
      SELECT e.workspace_id, e.id, v.id, v.type, now()
        FROM webhook_endpoints e
        JOIN workspaces w ON w.id = e.workspace_id
       CROSS JOIN jsonb_to_recordset(${input}::jsonb) AS v(id text, type text)
       WHERE e.workspace_id = ${workspaceId} AND e.enabled
         AND w.tier IN (${sql.join(
           ENTITLED_TIERS.map((tier) => sql`${tier}`),
           sql`, `,
         )})
         AND (v.type IN (${sql.join(
           [...ALWAYS_DELIVERED].map((t) => sql`${t}`),
           sql`, `,
         )}) OR '*' = ANY(e.events) OR v.type = ANY(e.events))
      ON CONFLICT DO NOTHING`);
  }
}

// ---- worker (system transactions: the worker serves every workspace) ----

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
 * Claims due deliveries under a lease. SKIP LOCKED lets several instances claim side by side;
 * an endpoint gets at most `perEndpoint` leased deliveries, so a slow one cannot hog the workers.
 * A crashed worker's lease simply runs out and the row becomes due again.
 */
export async function claimDueDeliveries(
  tx: Tx,
  opts: {
    limit: number;
    perEndpoint: number;
    leaseMs: number;
    leaseToken: string;
    /** Deliveries a process may have in flight: busy endpoints share them fairly. */
    maxInFlight?: number;
  },
): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const maxInFlight = opts.maxInFlight ?? opts.perEndpoint * 1000;
  return queryRows<ClaimedDelivery>(
    tx,
    sql`
    WITH endpoints AS (
      SELECT e.workspace_id, e.id,
             -- Leased rows only (settling clears locked_until), through the small partial index on
             -- endpoint_id (endpoint ids are unique across workspaces).
             (SELECT count(*) FROM webhook_deliveries f
               WHERE f.endpoint_id = e.id AND f.locked_until IS NOT NULL AND f.locked_until > now())::int AS in_flight,
             EXISTS (SELECT 1 FROM webhook_deliveries x
                      WHERE x.endpoint_id = e.id AND x.state = 'pending' AND x.next_attempt_at <= now()) AS has_due
        FROM webhook_endpoints e
        -- A workspace that dropped below the entitled tier gets no more deliveries (they wait, not lost).
        JOIN workspaces w ON w.id = e.workspace_id
       WHERE e.enabled AND w.tier IN (${sql.join(
         ENTITLED_TIERS.map((tier) => sql`${tier}`),
         sql`, `,
       )})
    ),
    -- Fair share: with N busy endpoints each may hold at most maxInFlight / (N + 1) (and never more
    -- than perEndpoint). The extra share stays free for an endpoint that becomes busy next, so a few
    -- slow endpoints cannot take every slot, even while the others are momentarily idle.
    candidates AS (
      SELECT workspace_id, id, in_flight,
             least(${opts.perEndpoint}::int,
                   greatest(1, ${maxInFlight}::int / (1 + count(*) FILTER (WHERE has_due OR in_flight > 0) OVER ()))
             ) AS cap
        FROM endpoints
       WHERE has_due
       ORDER BY random()
    ),
    picked AS (
      SELECT d.row_id
        FROM candidates c
       CROSS JOIN LATERAL (
         SELECT x.ctid AS row_id
           FROM webhook_deliveries x
          WHERE x.endpoint_id = c.id AND x.workspace_id = c.workspace_id AND x.state = 'pending'
            AND x.next_attempt_at <= now() AND (x.locked_until IS NULL OR x.locked_until <= now())
          ORDER BY x.next_attempt_at
          LIMIT greatest(0, c.cap - c.in_flight)
          FOR UPDATE SKIP LOCKED
       ) d
       LIMIT ${opts.limit}::int
    ),
    -- The rows are locked by this transaction, so their ctid is stable: a TID join avoids a
    -- misestimated plan over the primary key once the table holds many rows.
    claimed AS (
      UPDATE webhook_deliveries d
         SET locked_until = now() + make_interval(secs => ${opts.leaseMs / 1000}::float8),
             lease_token = ${opts.leaseToken}, updated_at = now()
        FROM picked p
       WHERE d.ctid = p.row_id
      -- The attempt counts once its result is recorded: a claim lost in a crash uses up no retry.
      RETURNING d.workspace_id, d.endpoint_id, d.event_id, d.event_type, d.attempts + 1 AS attempts, d.next_attempt_at
    )
    SELECT c.workspace_id, c.endpoint_id, c.event_id, c.event_type, c.attempts,
           c.next_attempt_at AS scheduled_at, ev.data, ev.created_at AS event_created_at,
           e.url, e.secret_enc, e.previous_secret_enc, e.previous_secret_expires_at
      FROM claimed c
      -- LIMIT 1 keeps these as per-row primary-key lookups whatever the (often stale) statistics say.
     CROSS JOIN LATERAL (SELECT x.data, x.created_at FROM domain_events x
                          WHERE x.workspace_id = c.workspace_id AND x.id = c.event_id LIMIT 1) ev
     CROSS JOIN LATERAL (SELECT y.url, y.secret_enc, y.previous_secret_enc, y.previous_secret_expires_at
                           FROM webhook_endpoints y
                          WHERE y.workspace_id = c.workspace_id AND y.id = c.endpoint_id LIMIT 1) e`,
  );
}

export interface AttemptResult {
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  leaseToken: string;
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

interface SettledRow {
  workspace_id: string;
  endpoint_id: string;
  event_id: string;
  state: 'pending' | 'delivered' | 'dead';
  next_attempt_at: Date | string;
}

/**
 * Applies a batch of attempt results in one transaction: the attempt rows for the log, and the
 * new delivery state — only where our lease still holds (a replay or a re-claim after an expired
 * lease fences stale results out). Returns the deliveries that were dead-lettered.
 */
export async function recordAttempts(tx: Tx, results: AttemptResult[]): Promise<SettledRow[]> {
  if (results.length === 0) return [];
  // The whole batch as one JSON parameter: a batch of hundreds of results costs one bound value
  // (building thousands of parameters was the worker's largest CPU cost), and one statement.
  const input = JSON.stringify(
    results.map((r) => ({
      workspace_id: r.workspaceId,
      endpoint_id: r.endpointId,
      event_id: r.eventId,
      token: r.leaseToken,
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
  return queryRows<SettledRow>(
    tx,
    sql`
    WITH v AS (
      SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS x(
        workspace_id text, endpoint_id text, event_id text, token text, state text, retry_in float8, status int,
        error text, id text, event_type text, attempt int, outcome text, duration_ms int, attempted_at timestamptz,
        scheduled_at timestamptz, request_url text, request_headers jsonb, response_headers jsonb,
        response_body text, response_truncated boolean)
    ), settled AS (
      UPDATE webhook_deliveries d
         SET state = v.state, attempts = d.attempts + 1,
             next_attempt_at = CASE WHEN v.retry_in IS NULL THEN d.next_attempt_at
                                    ELSE now() + make_interval(secs => v.retry_in) END,
             locked_until = NULL, lease_token = NULL, last_status = v.status, last_error = v.error, updated_at = now()
        FROM v
       WHERE d.workspace_id = v.workspace_id AND d.endpoint_id = v.endpoint_id AND d.event_id = v.event_id
         AND d.lease_token = v.token AND d.state = 'pending'
      RETURNING d.workspace_id, d.endpoint_id, d.event_id, d.state, d.next_attempt_at
    ), logged AS (
      -- Every attempt is logged, also one whose result was fenced out (its lease had passed on).
      INSERT INTO webhook_attempts (workspace_id, id, endpoint_id, event_id, event_type, attempt, outcome, status,
                                    error, duration_ms, attempted_at, scheduled_at, next_attempt_at, request_url,
                                    request_headers, response_headers, response_body, response_truncated)
      SELECT v.workspace_id, v.id, v.endpoint_id, v.event_id, v.event_type, v.attempt, v.outcome, v.status,
             v.error, v.duration_ms, v.attempted_at, v.scheduled_at,
             CASE WHEN s.state = 'pending' THEN s.next_attempt_at END, v.request_url,
             v.request_headers, v.response_headers, v.response_body, v.response_truncated
        FROM v LEFT JOIN settled s
          ON s.workspace_id = v.workspace_id AND s.endpoint_id = v.endpoint_id AND s.event_id = v.event_id
    )
    SELECT workspace_id, endpoint_id, event_id, state, next_attempt_at FROM settled WHERE state = 'dead'`,
  );
}

export async function insertInboxItem(tx: Tx, row: typeof inboxItems.$inferInsert): Promise<void> {
  await tx.insert(inboxItems).values(row);
}

/**
 * When the next pending delivery (or expiring lease) falls due in the future: the worker sets a
 * timer for it so retries fire on time. Rows already due are handled by wakes and polling.
 */
export async function nextDueAt(tx: Tx): Promise<Date | null> {
  const [row] = await queryRows<{ at: Date | string | null }>(
    tx,
    sql`SELECT min(due) AS at FROM (
          SELECT greatest(d.next_attempt_at, coalesce(d.locked_until, d.next_attempt_at)) AS due
            FROM webhook_deliveries d
            JOIN webhook_endpoints e ON e.workspace_id = d.workspace_id AND e.id = d.endpoint_id
           WHERE d.state = 'pending' AND e.enabled) pending
         WHERE due > now()`,
  );
  return row?.at ? new Date(row.at) : null;
}
