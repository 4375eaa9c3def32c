import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from './db/columns.js';

/** Append-only audit trail (UPDATE/DELETE are refused by a trigger). */
export const auditLog = pgTable(
  'audit_log',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    kind: text('kind').notNull(),
    at: ts('at').notNull().defaultNow(),
    actorUserId: text('actor_user_id'),
    requestId: text('request_id'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('audit_kind_idx').on(t.workspaceId, t.kind, t.id),
    // GET /audit?patientId=: the rows about one patient, newest first.
    index('audit_patient_idx').on(t.workspaceId, sql`(data->>'patientId')`, t.id),
    // GET /audit?actorUserId= and ?from=&to=.
    index('audit_actor_idx').on(t.workspaceId, t.actorUserId, t.id),
    index('audit_at_idx').on(t.workspaceId, t.at, t.id),
  ],
);

/** Transactional outbox of domain events. */
export const domainEvents = pgTable(
  'domain_events',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  // Only the primary key: readers look events up by id (a workspace_id-prefixed index beside it
  // misleads the planner on the webhook claim join while statistics are stale).
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

/** One row per periodic job: whoever moves `leaseUntil` forward runs that interval. */
export const schedulerLeases = pgTable('scheduler_leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  leaseUntil: ts('lease_until').notNull(),
  lastRunAt: ts('last_run_at'),
});

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    workspaceId: text('workspace_id').notNull(),
    userId: text('user_id').notNull(),
    key: text('key').notNull(),
    route: text('route').notNull(),
    requestHash: text('request_hash').notNull(),
    /**
     * Which claim of the key this is: new when a request claims it or takes a stale claim over. Freeing the key,
     * recording the answer and marking it committed require it, so they never touch a later request's claim.
     * Null only on rows claimed before migration 0048.
     */
    claimId: text('claim_id'),
    /**
     * pending: claimed; committed: a write of the request committed, its answer not yet recorded (with
     * `statusCode` set: the request ended on an answer not kept, a 5xx, and will not record one); done.
     */
    state: text('state', { enum: ['pending', 'committed', 'done'] }).notNull(),
    statusCode: integer('status_code'),
    responseBody: text('response_body'),
    responseType: text('response_type'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId, t.route, t.key] })],
);

/** Mailbox of the mail emulator (what "was sent" when no SMTP server is configured). */
export const emulatorMail = pgTable(
  'emulator_mail',
  {
    id: text('id').primaryKey(),
    from: text('from').notNull(),
    to: jsonb('to').$type<string[]>().notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    html: text('html'),
    attachments: jsonb('attachments').$type<{ filename: string; contentType: string; content: string }[]>().notNull(),
    raw: text('raw').notNull(),
    sentAt: ts('sent_at').notNull().defaultNow(),
  },
  (t) => [index('emulator_mail_sent_idx').on(t.sentAt)],
);

/**
 * State of the calendar emulators (google, microsoft, zoom): one JSON document per account, so a
 * restart of the product keeps the calendars it showed (contract §11). Not tenant data.
 */
export const emulatorState = pgTable(
  'emulator_state',
  {
    emulator: text('emulator').notNull(),
    key: text('key').notNull(),
    data: jsonb('data').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.emulator, t.key] })],
);

/** Counts flushed by the instances (platform data, no tenant): one row per source and flush. */
export const inboundAcceptance = pgTable(
  'inbound_acceptance',
  {
    id: text('id').primaryKey(),
    source: text('source').notNull(),
    accepted: integer('accepted').notNull(),
    refused: integer('refused').notNull(),
    /** The client networks the refusals came from, as keyed `networkKey` hashes (no address is kept). */
    refusedFrom: text('refused_from').array().notNull().default(sql`'{}'::text[]`),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [index('inbound_acceptance_source_idx').on(t.source, t.at)],
);
