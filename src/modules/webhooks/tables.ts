import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** A workspace's webhook endpoint. Secrets are stored encrypted (AES-256-GCM, bound to workspace and id). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    url: text('url').notNull(),
    description: text('description'),
    /** Event types delivered; `*` means all. break_glass.invoked is delivered whatever this says. */
    events: text('events').array().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    secretEnc: text('secret_enc').notNull(),
    /** The secret before the last rotation; it still signs until previousSecretExpiresAt. */
    previousSecretEnc: text('previous_secret_enc'),
    previousSecretExpiresAt: ts('previous_secret_expires_at'),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

/**
 * Delivery state of one event to one endpoint, written by the fan-out in the same transaction as
 * the event, together with its `webhooks.deliver` job (platform/jobs claims, leases and fences it).
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    workspaceId: text('workspace_id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    state: text('state', { enum: ['pending', 'delivered', 'dead', 'cancelled'] })
      .notNull()
      .default('pending'),
    /** Attempts made in the current retry budget (a replay resets it). */
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.endpointId, t.eventId] })],
);

/** One row per HTTP attempt: the delivery log admins browse. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    attempt: integer('attempt').notNull(),
    outcome: text('outcome', { enum: ['success', 'fail'] }).notNull(),
    status: integer('status'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    attemptedAt: ts('attempted_at').notNull(),
    /** When the event was due for this attempt (lets operators see how late retries fire). */
    scheduledAt: ts('scheduled_at'),
    nextAttemptAt: ts('next_attempt_at'),
    /** The exchange, for the delivery detail view (§7.1); null for attempts recorded before it was kept. */
    requestUrl: text('request_url'),
    requestHeaders: jsonb('request_headers').$type<Record<string, string>>(),
    responseHeaders: jsonb('response_headers').$type<Record<string, string>>(),
    /** The receiver's answer, cut at 4 KiB. */
    responseBody: text('response_body'),
    responseTruncated: boolean('response_truncated').notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('webhook_attempts_endpoint_idx').on(t.workspaceId, t.endpointId, t.id),
  ],
);

/** The workspace inbox: things admins must look at (dead-lettered webhook events, undeliverable mail, incidents). */
export const inboxItems = pgTable(
  'inbox_items',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    kind: text('kind').notNull(),
    endpointId: text('endpoint_id'),
    eventId: text('event_id'),
    eventType: text('event_type'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /**
     * `open` until an admin handles it: `replayed` (its event was replayed to its endpoint) or `resolved`
     * (dismissed without a replay). When and by whom in handledAt / handledBy (migration 0041).
     */
    state: text('state', { enum: ['open', 'replayed', 'resolved'] })
      .notNull()
      .default('open'),
    handledAt: ts('handled_at'),
    handledBy: text('handled_by'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    // The page's default view: the open items, newest first.
    index('inbox_items_open_idx').on(t.workspaceId, t.id).where(sql`state = 'open'`),
  ],
);

/**
 * When each admin (by e-mail address) was last e-mailed about an endpoint's dead letters, and how many were held
 * back since: at most one such e-mail per endpoint and admin per hour, the next one summing up the rest. In the
 * database, so the window holds across restarts and instances (migration 0042).
 */
export const webhookFailureMails = pgTable(
  'webhook_failure_mails',
  {
    workspaceId: text('workspace_id').notNull(),
    endpointId: text('endpoint_id').notNull(),
    /** The admin's address, lower-cased. */
    recipient: text('recipient').notNull(),
    /** Null until the first e-mail. */
    lastSentAt: ts('last_sent_at'),
    /** Dead letters of this endpoint since lastSentAt that this admin was not e-mailed about. */
    held: integer('held').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.endpointId, t.recipient] })],
);
