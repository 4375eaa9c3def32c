import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../db/columns.js';

export const JOB_STATUSES = ['queued', 'running', 'done', 'dead', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Durable background jobs (platform/jobs). A row with a workspace_id is a tenant row (RLS: a tenant
 * transaction sees and enqueues only its own); workers claim across tenants as the system role.
 */
export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    type: text('type').notNull(),
    /** Null for platform jobs that belong to no workspace. */
    workspaceId: text('workspace_id'),
    payload: jsonb('payload').$type<unknown>().notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull().default('queued'),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    runAt: ts('run_at').notNull().defaultNow(),
    /** While running: the claim expires here unless the worker's heartbeat moves it on. */
    leaseUntil: ts('lease_until'),
    /** The claim token of the worker holding the job; results are written only under it. */
    claimedBy: text('claimed_by'),
    lastError: text('last_error'),
    /** Enqueuing again with the same key while a job is queued or running adds nothing. */
    dedupeKey: text('dedupe_key'),
    /** Groups jobs under their type's `maxConcurrentPerKey` cap (e.g. one webhook endpoint). */
    concurrencyKey: text('concurrency_key'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // Keyless due jobs, per type (keyed ones are found per key through jobs_key_due_idx).
    index('jobs_due_idx').on(t.type, t.runAt).where(sql`status = 'queued' AND concurrency_key IS NULL`),
    index('jobs_lease_idx').on(t.leaseUntil).where(sql`status = 'running'`),
    index('jobs_finished_idx').on(t.updatedAt).where(sql`status IN ('done', 'dead', 'cancelled')`),
    index('jobs_workspace_idx').on(t.workspaceId, t.type),
    // The keyed claim: due jobs of one key, and the running ones it counts against the cap.
    index('jobs_key_due_idx')
      .on(t.type, t.concurrencyKey, t.runAt)
      .where(sql`status = 'queued' AND concurrency_key IS NOT NULL`),
    index('jobs_key_running_idx')
      .on(t.type, t.concurrencyKey)
      .where(sql`status = 'running' AND concurrency_key IS NOT NULL`),
    uniqueIndex('jobs_dedupe_idx')
      .on(sql`coalesce(workspace_id, '')`, t.type, t.dedupeKey)
      .where(sql`dedupe_key IS NOT NULL AND status IN ('queued', 'running')`),
  ],
);
