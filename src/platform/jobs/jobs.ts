import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { Tier } from '../context.js';
import type { Tx } from '../db/client.js';
import { queryRows } from '../db/tenant.js';
import { newId } from '../ids.js';
import type { AppDeps } from '../types.js';

/** NOTIFY channel that wakes job workers when a job is committed. */
export const JOBS_CHANNEL = 'atrium_jobs';

/** Exponential (`baseMs · 2^(attempt-1)`, capped at `maxMs`), or any function of the attempt number. */
export type Backoff = { baseMs: number; maxMs?: number } | ((attempt: number) => number);

/**
 * What a handler gets instead of a request context: rebuilt from the job row on every attempt
 * (the workspace's tier is read fresh, never carried in the payload).
 */
export interface JobContext {
  deps: AppDeps;
  jobId: string;
  type: string;
  /** 1 on the first run. */
  attempt: number;
  maxAttempts: number;
  /** Null for platform jobs. */
  workspaceId: string | null;
  organizationId: string | null;
  tier: Tier | null;
  /** The job id: log lines and audit rows written by the job carry it. */
  requestId: string;
  /** Child logger bound to jobId, jobType, workspaceId. */
  log: FastifyBaseLogger;
  /** Aborted when the worker loses the job's lease (another worker has taken it over). */
  signal: AbortSignal;
  /**
   * Writes that must commit with the job's outcome (done, retry or dead) and only while this
   * worker's claim still holds, e.g. a delivery log row or a product state change. The functions
   * run, in order, inside the runner's fenced outcome transaction; a taken-over job's are dropped.
   */
  settle(write: (tx: Tx) => Promise<void>): void;
}

/** What `onDead` gets: the job row (the payload may be one that no longer validates). */
export interface DeadJob {
  id: string;
  type: string;
  workspaceId: string | null;
  attempts: number;
  payload: unknown;
  error: string;
}

export interface JobDefinition<P = unknown> {
  type: string;
  schema: z.ZodType<P>;
  maxAttempts: number;
  backoff: Backoff;
  /** How long a claim lasts without a heartbeat; a crashed worker's jobs are taken over after it. */
  leaseMs: number;
  /** Cap on running jobs per `concurrencyKey` (null: no cap); see JobOptions. */
  maxConcurrentPerKey: number | null;
  onDead: ((tx: Tx, job: DeadJob) => Promise<void>) | null;
  handler(ctx: JobContext, payload: P): Promise<void>;
}

export interface JobOptions<P> {
  type: string;
  /** Validated at enqueue and again before each run; payloads are stored as JSON. */
  schema: z.ZodType<P>;
  maxAttempts?: number;
  backoff?: Backoff;
  leaseMs?: number;
  /**
   * At most this many jobs of this type with one `concurrencyKey` (an enqueue option, e.g. one
   * upstream host or endpoint) run at once, counted across instances by the claim; a slow key fills
   * only its own slots. Busy keys also share a worker's slots fairly: each may hold at most
   * min(cap, concurrency / busy keys). A soft cap: two instances claiming at the same moment may
   * briefly exceed it. Jobs enqueued without a key are not capped.
   */
  maxConcurrentPerKey?: number;
  /**
   * Runs in the transaction that marks the job dead (fenced like `settle`), e.g. to put a
   * dead letter in an inbox and tell someone. A failure rolls the outcome back: the job is
   * taken over and retried once its lease runs out.
   */
  onDead?(tx: Tx, job: DeadJob): Promise<void>;
  handler(ctx: JobContext, payload: P): Promise<void>;
}

const TYPE_NAME = /^[a-z][a-z0-9_.:-]{0,99}$/;

/**
 * Declares a job type. A module lists its definitions (`defineModule({ jobs: [...] })`) so the
 * worker knows how to run them; `enqueueJob(tx, definition, payload, …)` is typed by the schema.
 */
export function defineJob<P>(options: JobOptions<P>): JobDefinition<P> {
  if (!TYPE_NAME.test(options.type)) throw new Error(`Invalid job type ${options.type}`);
  const cap = options.maxConcurrentPerKey;
  if (cap !== undefined && !(Number.isInteger(cap) && cap >= 1)) {
    throw new Error(`maxConcurrentPerKey of ${options.type} must be a positive integer`);
  }
  return {
    type: options.type,
    schema: options.schema,
    maxAttempts: options.maxAttempts ?? 10,
    backoff: options.backoff ?? { baseMs: 5_000, maxMs: 60 * 60_000 },
    leaseMs: options.leaseMs ?? 60_000,
    maxConcurrentPerKey: cap ?? null,
    onDead: options.onDead ?? null,
    handler: options.handler,
  };
}

/** Thrown by a handler: the job goes to `dead` at once (retrying cannot help). */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/** Thrown by a handler: retry, no sooner than `retryAfterMs` (e.g. an upstream's Retry-After). */
export class RetryJobError extends Error {
  override name = 'RetryJobError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

export function backoffMs(backoff: Backoff, attempt: number): number {
  if (typeof backoff === 'function') return Math.max(0, backoff(attempt));
  const ms = backoff.baseMs * 2 ** Math.max(0, attempt - 1);
  return Math.min(ms, backoff.maxMs ?? Number.POSITIVE_INFINITY);
}

export interface EnqueueOptions {
  /** The tenant the job works for (checked by RLS in a tenant transaction); null for platform jobs. */
  workspaceId: string | null;
  /** Not before this time (default: now). */
  runAt?: Date;
  /** At most one queued or running job per (workspace, type, dedupeKey): a second enqueue adds nothing. */
  dedupeKey?: string;
  /** Groups jobs for the type's `maxConcurrentPerKey` cap (ignored by types without one). */
  concurrencyKey?: string;
}

/**
 * Queues a job in the caller's transaction: it exists only if the transaction commits, and the
 * NOTIFY sent on commit wakes a worker. Returns the job id, or null when `dedupeKey` matched a
 * job that is still queued or running.
 */
export async function enqueueJob<P>(
  tx: Tx,
  job: JobDefinition<P>,
  payload: P,
  options: EnqueueOptions,
): Promise<string | null> {
  const data = job.schema.parse(payload);
  const id = newId('job');
  const runAt = options.runAt ? sql`${options.runAt.toISOString()}::timestamptz` : sql`now()`;
  const rows = await queryRows<{ id: string }>(
    tx,
    sql`INSERT INTO jobs (id, type, workspace_id, payload, max_attempts, run_at, dedupe_key, concurrency_key)
        VALUES (${id}, ${job.type}, ${options.workspaceId}, ${JSON.stringify(data)}::jsonb, ${job.maxAttempts},
                ${runAt}, ${options.dedupeKey ?? null}, ${options.concurrencyKey ?? null})
        ON CONFLICT (coalesce(workspace_id, ''), type, dedupe_key)
          WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING
        RETURNING id`,
  );
  if (rows.length === 0) return null;
  await tx.execute(sql`SELECT pg_notify(${JOBS_CHANNEL}, ${job.type})`);
  return id;
}
