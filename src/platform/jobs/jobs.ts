import { type SQL, sql } from 'drizzle-orm';
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
export interface JobContext<R = unknown> {
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
  /**
   * Hands a value to the type's `settleMany`, which writes the values of a whole batch of finished
   * jobs in one go inside the outcome transaction (cheaper than one `settle` write per job).
   */
  record(value: R): void;
}

/** A `record`ed value as `settleMany` gets it. */
export interface SettledRecord<R> {
  value: R;
  jobId: string;
  /**
   * False when the worker had lost the job's claim (another worker took it over, or it was
   * cancelled): the work happened, so a log of it may be kept, but it must change no state.
   */
  held: boolean;
}

/** A claimed job as the type's `load` gets it. */
export interface LoadingJob<P> {
  id: string;
  workspaceId: string | null;
  payload: P;
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

export interface JobDefinition<P = unknown, L = undefined, R = unknown> {
  type: string;
  schema: z.ZodType<P>;
  maxAttempts: number;
  backoff: Backoff;
  /** How long a claim lasts without a heartbeat; a crashed worker's jobs are taken over after it. */
  leaseMs: number;
  /** How long one attempt may run; then `ctx.signal` aborts and the attempt fails (see JobOptions). */
  maxRunMs: number;
  /** Cap on running jobs per `concurrencyKey` (null: no cap); see JobOptions. */
  maxConcurrentPerKey: number | null;
  onDead: ((tx: Tx, job: DeadJob) => Promise<void>) | null;
  /** Whether a finished job's row stays (as `done`, pruned after a day) or is deleted at once. */
  keepDone: boolean;
  /** Whether queued jobs of a concurrency key may be claimed now (SQL over the key); null: always. */
  keyEligible: ((key: SQL) => SQL) | null;
  load: ((tx: Tx, jobs: LoadingJob<P>[]) => Promise<Map<string, L>>) | null;
  settleMany: ((tx: Tx, records: SettledRecord<R>[]) => Promise<void>) | null;
  handler(ctx: JobContext<R>, payload: P, loaded: L): Promise<void>;
}

export interface JobOptions<P, L = undefined, R = unknown> {
  type: string;
  /** Validated at enqueue and again before each run; payloads are stored as JSON. */
  schema: z.ZodType<P>;
  maxAttempts?: number;
  backoff?: Backoff;
  leaseMs?: number;
  /**
   * The longest one attempt may run (default 15 minutes, or five leases if that is longer; several times
   * the longest normal run of any type). Past it, `ctx.signal` aborts, the heartbeat stops and the attempt
   * fails like a thrown error: retried after the backoff, dead after `maxAttempts`. The worker writes that
   * outcome at once, under its claim; a handler that ignores the signal goes on in the background, but its
   * `settle` writes and `record`s from then on are dropped and its end changes nothing.
   */
  maxRunMs?: number;
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
  /**
   * Default true: a done job stays as `done` for a day (for inspection). False deletes its row as it
   * finishes, for high-volume types whose product table keeps the record (fewer writes per job).
   */
  keepDone?: boolean;
  /**
   * For keyed types (`maxConcurrentPerKey`): whether the queued jobs of a concurrency key may be
   * claimed now, as SQL over the key (e.g. an EXISTS on the enabled endpoint the key names). The
   * jobs of a key that fails it wait without using attempts, e.g. deliveries to a disabled endpoint;
   * send `pg_notify(JOBS_CHANNEL, type)` when a key may have become eligible. Evaluated once per key
   * and claim, so a long wait costs nothing per job.
   */
  keyEligible?(key: SQL): SQL;
  /**
   * Loads what the claimed jobs need, for the whole claimed batch at once and in the claim's
   * transaction (system scope: filter by each job's workspaceId). A job missing from the map has
   * nothing left to do (what it works on is gone or already settled): it ends `done` without
   * running. The handler gets the job's entry as its third argument.
   */
  load?(tx: Tx, jobs: LoadingJob<P>[]): Promise<Map<string, L>>;
  /** Writes the `record`ed values of a batch of finished jobs, inside the fenced outcome transaction. */
  settleMany?(tx: Tx, records: SettledRecord<R>[]): Promise<void>;
  handler(ctx: JobContext<R>, payload: P, loaded: L): Promise<void>;
}

/** A second job with the dedupe key of one still queued or running adds nothing (jobs_dedupe_idx). */
const ON_DEDUPE_KEY_TAKEN = sql`ON CONFLICT (coalesce(workspace_id, ''), type, dedupe_key)
  WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING`;

const TYPE_NAME = /^[a-z][a-z0-9_.:-]{0,99}$/;

/** The default maximum run time of an attempt (or five leases, if longer). */
const DEFAULT_MAX_RUN_MS = 15 * 60_000;

/**
 * Declares a job type. A module lists its definitions (`defineModule({ jobs: [...] })`) so the
 * worker knows how to run them; `enqueueJob(tx, definition, payload, …)` is typed by the schema.
 */
export function defineJob<P, L = undefined, R = unknown>(options: JobOptions<P, L, R>): JobDefinition<P, L, R> {
  if (!TYPE_NAME.test(options.type)) throw new Error(`Invalid job type ${options.type}`);
  const cap = options.maxConcurrentPerKey;
  if (cap !== undefined && !(Number.isInteger(cap) && cap >= 1)) {
    throw new Error(`maxConcurrentPerKey of ${options.type} must be a positive integer`);
  }
  if (options.keyEligible && cap === undefined) {
    throw new Error(`keyEligible of ${options.type} needs maxConcurrentPerKey`);
  }
  const leaseMs = options.leaseMs ?? 60_000;
  const maxRunMs = options.maxRunMs ?? Math.max(DEFAULT_MAX_RUN_MS, 5 * leaseMs);
  if (!(maxRunMs > 0)) throw new Error(`maxRunMs of ${options.type} must be positive`);
  return {
    type: options.type,
    schema: options.schema,
    maxAttempts: options.maxAttempts ?? 10,
    backoff: options.backoff ?? { baseMs: 5_000, maxMs: 60 * 60_000 },
    leaseMs,
    maxRunMs,
    maxConcurrentPerKey: cap ?? null,
    onDead: options.onDead ?? null,
    keepDone: options.keepDone ?? true,
    keyEligible: options.keyEligible ?? null,
    load: options.load ?? null,
    settleMany: options.settleMany ?? null,
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
  /** Groups jobs for the type's `maxConcurrentPerKey` cap (not stored for types without one). */
  concurrencyKey?: string;
}

/**
 * Queues a job in the caller's transaction: it exists only if the transaction commits, and the
 * NOTIFY sent on commit wakes a worker. Returns the job id, or null when `dedupeKey` matched a
 * job that is still queued or running.
 */
export async function enqueueJob<P>(
  tx: Tx,
  // biome-ignore lint/suspicious/noExplicitAny: any loaded and recorded types
  job: JobDefinition<P, any, any>,
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
                ${runAt}, ${options.dedupeKey ?? null},
                ${job.maxConcurrentPerKey === null ? null : (options.concurrencyKey ?? null)})
        ${ON_DEDUPE_KEY_TAKEN}
        RETURNING id`,
  );
  if (rows.length === 0) return null;
  await tx.execute(sql`SELECT pg_notify(${JOBS_CHANNEL}, ${job.type})`);
  return id;
}

/**
 * Set-based enqueue for a module's own statement: an `INSERT INTO jobs … SELECT` over `rows`, a
 * query returning the columns (workspace_id, payload, dedupe_key, concurrency_key; the key only
 * for types with `maxConcurrentPerKey`, null otherwise), to use as a CTE (e.g. one job per row another CTE inserted). The payloads are not validated here: the
 * caller builds them in SQL to the type's schema, and the runner validates each before it runs.
 * Returns one row (id) per job added; the caller sends `pg_notify(JOBS_CHANNEL, type)` if any.
 */
export function insertJobsSql(job: Pick<JobDefinition, 'type' | 'maxAttempts'>, rows: SQL): SQL {
  return sql`
    INSERT INTO jobs (id, type, workspace_id, payload, max_attempts, run_at, dedupe_key, concurrency_key)
    SELECT 'job_' || replace(gen_random_uuid()::text, '-', ''), ${job.type}, r.workspace_id, r.payload,
           ${job.maxAttempts}::int, now(), r.dedupe_key, r.concurrency_key
      FROM (${rows}) AS r(workspace_id, payload, dedupe_key, concurrency_key)
    ${ON_DEDUPE_KEY_TAKEN}
    RETURNING id`;
}

/**
 * Cancels the queued and running jobs of a type that match `where` (SQL over the `jobs` row), in the
 * caller's transaction. A running job's outcome and settle writes are then dropped, as for a lost claim.
 */
export async function cancelJobs(tx: Tx, job: Pick<JobDefinition, 'type'>, where: SQL): Promise<number> {
  const rows = await queryRows<{ id: string }>(
    tx,
    sql`UPDATE jobs SET status = 'cancelled', lease_until = NULL, claimed_by = NULL, updated_at = now()
         WHERE type = ${job.type} AND status IN ('queued', 'running') AND (${where})
        RETURNING id`,
  );
  return rows.length;
}
