import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { ZodError } from 'zod';
import type { Tier } from '../context.js';
import type { Tx } from '../db/client.js';
import { queryRows, withSystem, withTenant } from '../db/tenant.js';
import type { AppDeps } from '../types.js';
import { startPollingWorker, type Worker } from '../worker.js';
import {
  backoffMs,
  JOBS_CHANNEL,
  type JobContext,
  type JobDefinition,
  PermanentJobError,
  RetryJobError,
} from './jobs.js';

// biome-ignore lint/suspicious/noExplicitAny: a worker runs definitions of any payload type
type AnyJob = JobDefinition<any>;

export interface JobRunnerOptions {
  deps: AppDeps;
  log: FastifyBaseLogger;
  /** The job types this worker runs; jobs of other types stay queued for a worker that knows them. */
  jobs: readonly AnyJob[];
  /** Jobs run at once by this worker (default 8). */
  concurrency?: number;
  /** Fallback poll interval (default config.workerPollMs). */
  pollMs?: number;
  /** Names this worker in `claimed_by` and logs. */
  name?: string;
}

interface ClaimedJob {
  id: string;
  type: string;
  workspace_id: string | null;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  claimed_by: string;
}

export const LEASE_EXPIRED = 'lease expired before the job finished (worker stopped?)';

class JobRunner {
  private readonly byType: Map<string, AnyJob>;
  private readonly id: string;
  /** Jobs this worker runs at once: the pool keyed jobs share fairly. */
  private readonly concurrency: number;
  private batch = 0;

  constructor(
    private readonly options: JobRunnerOptions,
    concurrency = options.concurrency ?? 8,
  ) {
    this.concurrency = concurrency;
    this.byType = new Map(options.jobs.map((j) => [j.type, j]));
    if (this.byType.size !== options.jobs.length) throw new Error('Two job definitions share a type');
    this.id = `${options.name ?? 'jobs'}:${randomUUID().slice(0, 8)}`;
  }

  /**
   * Claims due jobs (queued and due, or running with an expired lease) in one short transaction.
   * SKIP LOCKED lets instances claim side by side without waiting on or doubling each other's rows.
   * Types with `maxConcurrentPerKey` are picked per concurrency key, up to the key's share of the
   * slots minus what already runs under it (on any instance); both kinds are merged by due time.
   */
  async claim(limit: number): Promise<ClaimedJob[]> {
    if (limit <= 0 || this.byType.size === 0) return [];
    const token = `${this.id}/${++this.batch}`;
    const list = (defs: AnyJob[]) =>
      sql.join(
        defs.map((j) => sql`${j.type}`),
        sql`, `,
      );
    const capped = [...this.byType.values()].filter((j) => j.maxConcurrentPerKey !== null);
    const leaseSecs: SQL = sql`CASE type ${sql.join(
      [...this.byType.values()].map((j) => sql`WHEN ${j.type} THEN ${j.leaseMs / 1000}::float8`),
      sql` `,
    )} END`;
    const due = sql`((status = 'queued' AND run_at <= now()) OR (status = 'running' AND lease_until < now()))`;
    return withSystem(this.options.deps.db, async (tx) => {
      // Uncapped: every type this worker runs, except the keyed jobs of capped types.
      let picked = await queryRows<{ id: string; run_at: Date | string }>(
        tx,
        sql`SELECT id, run_at FROM jobs
             WHERE type IN (${list([...this.byType.values()])}) AND ${due}
               ${capped.length > 0 ? sql`AND (concurrency_key IS NULL OR type NOT IN (${list(capped)}))` : sql``}
             ORDER BY run_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
      );
      if (capped.length > 0) {
        const keyed = await this.pickKeyed(tx, capped, limit, due);
        if (keyed.length > 0) {
          const at = (r: { run_at: Date | string }) => new Date(r.run_at).getTime();
          // Rows locked but left out stay queued; the lock ends with this short transaction.
          picked = [...picked, ...keyed].sort((a, b) => at(a) - at(b)).slice(0, limit);
        }
      }
      if (picked.length === 0) return [];
      const ids = sql.join(
        picked.map((r) => sql`${r.id}`),
        sql`, `,
      );
      return queryRows<ClaimedJob>(
        tx,
        sql`
        UPDATE jobs SET status = 'running', attempts = attempts + 1, claimed_by = ${token},
               lease_until = now() + make_interval(secs => ${leaseSecs}), updated_at = now(),
               last_error = CASE WHEN status = 'running' THEN ${LEASE_EXPIRED} ELSE last_error END
         WHERE id IN (${ids})
        RETURNING id, type, workspace_id, payload, attempts, max_attempts, claimed_by`,
      );
    });
  }

  /**
   * Due jobs of capped types, per (type, concurrency key): at most min(cap, concurrency / busy keys)
   * running per key, counting the unexpired leases of every instance. A key is busy while it has
   * due or running jobs, so a few slow keys cannot take every slot from the others.
   *
   * The cap holds across instances: a claimer first takes a transaction-level advisory lock per key
   * (try-lock: a key another instance is claiming right now is skipped this round), and only then,
   * in a new statement whose snapshot includes every claim committed before the lock was granted,
   * counts the key's running jobs and picks.
   */
  private async pickKeyed(tx: Tx, capped: AnyJob[], limit: number, due: SQL) {
    const types = sql.join(
      capped.map((j) => sql`${j.type}`),
      sql`, `,
    );
    const caps: SQL = sql`CASE type ${sql.join(
      capped.map((j) => sql`WHEN ${j.type} THEN ${j.maxConcurrentPerKey}::int`),
      sql` `,
    )} END`;
    const keys = await queryRows<{ type: string; key: string; cap: number }>(
      tx,
      sql`
      SELECT type, key, cap FROM (
        SELECT type, key, cap,
               pg_try_advisory_xact_lock(hashtextextended('atrium_jobs:' || type || ':' || key, 0)) AS locked
          FROM (SELECT * FROM (
                  SELECT type, concurrency_key AS key, bool_or(status = 'queued' OR lease_until < now()) AS has_due,
                         least(${caps}, greatest(1, ${this.concurrency}::int / count(*) OVER (PARTITION BY type))) AS cap
                    FROM jobs
                   WHERE type IN (${types}) AND concurrency_key IS NOT NULL
                     AND ((status = 'queued' AND run_at <= now()) OR status = 'running')
                   GROUP BY type, concurrency_key) busy
                 WHERE has_due ORDER BY random() LIMIT ${limit}) due_keys
      ) tried
       WHERE locked`,
    );
    if (keys.length === 0) return [];
    const values = sql.join(
      keys.map((k, i) => sql`(${i}::int, ${k.type}, ${k.key}, ${k.cap}::int)`),
      sql`, `,
    );
    return queryRows<{ id: string; run_at: Date | string }>(
      tx,
      sql`
      SELECT p.id, p.run_at
        FROM (VALUES ${values}) AS s(ord, type, key, cap)
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS n FROM jobs r
          WHERE r.type = s.type AND r.concurrency_key = s.key AND r.status = 'running' AND r.lease_until > now()
       ) running
       CROSS JOIN LATERAL (
         SELECT j.id, j.run_at FROM jobs j
          WHERE j.type = s.type AND j.concurrency_key = s.key AND ${due}
          ORDER BY j.run_at
          LIMIT greatest(0, s.cap - running.n)
          FOR UPDATE SKIP LOCKED
       ) p
       ORDER BY s.ord
       LIMIT ${limit}`,
    );
  }

  /**
   * When the next job of this worker's types falls due in the future (a retry's run_at, or a
   * lease running out): the worker sets a timer for it, so retries fire on time between polls.
   */
  async nextDueAt(): Promise<Date | null> {
    if (this.byType.size === 0) return null;
    const types = sql.join(
      [...this.byType.keys()].map((t) => sql`${t}`),
      sql`, `,
    );
    const [row] = await withSystem(this.options.deps.db, (tx) =>
      queryRows<{ at: Date | string | null }>(
        tx,
        sql`SELECT least((SELECT min(run_at) FROM jobs WHERE status = 'queued' AND type IN (${types}) AND run_at > now()),
                         (SELECT min(lease_until) FROM jobs WHERE status = 'running' AND type IN (${types})
                                                              AND lease_until > now())) AS at`,
      ),
    );
    return row?.at ? new Date(row.at) : null;
  }

  /** Runs one claimed job outside any transaction and records the outcome, fenced by its claim. */
  async run(job: ClaimedJob): Promise<void> {
    const definition = this.byType.get(job.type) as AnyJob;
    const log = this.options.log.child({ jobId: job.id, jobType: job.type, workspaceId: job.workspace_id });
    const controller = new AbortController();
    const heartbeat = setInterval(() => {
      void this.extendLease(job, definition.leaseMs).then(
        (held) => {
          if (!held) controller.abort(new Error('lease lost'));
        },
        (err) => log.warn({ err }, 'job lease heartbeat failed'),
      );
    }, definition.leaseMs / 3);
    heartbeat.unref();
    const writes: Array<(tx: Tx) => Promise<void>> = [];
    try {
      if (job.attempts > job.max_attempts) throw new PermanentJobError(LEASE_EXPIRED);
      const payload = definition.schema.parse(job.payload);
      const ctx = await this.contextFor(job, log, controller.signal, writes);
      await definition.handler(ctx, payload);
      await this.finish(job, sql`status = 'done', last_error = NULL`, writes);
    } catch (err) {
      const message = String((err as Error)?.message ?? err).slice(0, 1000);
      const permanent = err instanceof PermanentJobError || err instanceof ZodError;
      if (permanent || job.attempts >= job.max_attempts) {
        log.error({ err, attempt: job.attempts }, 'job failed for good');
        const dead = definition.onDead;
        await this.finish(job, sql`status = 'dead', last_error = ${message}`, [
          ...writes,
          ...(dead
            ? [
                (tx: Tx) =>
                  dead(tx, {
                    id: job.id,
                    type: job.type,
                    workspaceId: job.workspace_id,
                    attempts: job.attempts,
                    payload: job.payload,
                    error: message,
                  }),
              ]
            : []),
        ]);
      } else {
        const delay = Math.max(
          backoffMs(definition.backoff, job.attempts),
          err instanceof RetryJobError ? err.retryAfterMs : 0,
        );
        log.warn({ err, attempt: job.attempts, retryInMs: delay }, 'job failed; will retry');
        await this.finish(
          job,
          sql`status = 'queued', last_error = ${message}, run_at = now() + make_interval(secs => ${delay / 1000}::float8)`,
          writes,
        );
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async contextFor(
    job: ClaimedJob,
    log: FastifyBaseLogger,
    signal: AbortSignal,
    writes: Array<(tx: Tx) => Promise<void>>,
  ): Promise<JobContext> {
    let tier: Tier | null = null;
    let organizationId: string | null = null;
    if (job.workspace_id) {
      const workspaceId = job.workspace_id;
      const [workspace] = await withTenant(this.options.deps.db, { workspaceId }, (tx) =>
        queryRows<{ tier: Tier; organization_id: string | null }>(
          tx,
          sql`SELECT tier, organization_id FROM workspaces WHERE id = ${workspaceId}`,
        ),
      );
      if (!workspace) throw new PermanentJobError(`workspace ${workspaceId} no longer exists`);
      tier = workspace.tier;
      organizationId = workspace.organization_id;
    }
    return {
      deps: this.options.deps,
      jobId: job.id,
      type: job.type,
      attempt: job.attempts,
      maxAttempts: job.max_attempts,
      workspaceId: job.workspace_id,
      organizationId,
      tier,
      requestId: job.id,
      log,
      signal,
      settle: (write) => {
        writes.push(write);
      },
    };
  }

  private async extendLease(job: ClaimedJob, leaseMs: number): Promise<boolean> {
    const rows = await withSystem(this.options.deps.db, (tx) =>
      queryRows(
        tx,
        sql`UPDATE jobs SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}::float8)
             WHERE id = ${job.id} AND status = 'running' AND claimed_by = ${job.claimed_by} RETURNING id`,
      ),
    );
    return rows.length === 1;
  }

  /**
   * Writes the outcome only while this claim still holds the job (a taken-over job is not ours),
   * and with it, in the same system transaction, the handler's `settle` writes (and `onDead`).
   */
  private async finish(job: ClaimedJob, set: SQL, writes: Array<(tx: Tx) => Promise<void>> = []): Promise<void> {
    await withSystem(this.options.deps.db, async (tx) => {
      const held = await queryRows(
        tx,
        sql`UPDATE jobs SET ${set}, lease_until = NULL, updated_at = now()
             WHERE id = ${job.id} AND status = 'running' AND claimed_by = ${job.claimed_by} RETURNING id`,
      );
      if (held.length === 0) return;
      for (const write of writes) await write(tx);
    });
  }
}

/**
 * Claims one batch of due jobs and runs it to the end. For tests and one-off drains; the
 * background worker (`startJobWorker`) keeps a pool of slots busy instead.
 */
export async function runDueJobs(options: JobRunnerOptions & { limit?: number }): Promise<number> {
  const limit = options.limit ?? options.concurrency ?? 20;
  const runner = new JobRunner(options, options.concurrency ?? limit);
  const claimed = await runner.claim(limit);
  await Promise.all(claimed.map((job) => runner.run(job)));
  return claimed.length;
}

/**
 * The job worker: claims as many due jobs as it has free slots, runs them concurrently, and
 * claims again as slots free up. NOTIFY on enqueue wakes it; polling is the fallback (also for
 * retries coming due and leases expiring).
 */
export async function startJobWorker(options: JobRunnerOptions): Promise<Worker> {
  const concurrency = options.concurrency ?? 8;
  const runner = new JobRunner(options, concurrency);
  const inFlight = new Set<Promise<void>>();
  const pollMs = options.pollMs ?? options.deps.config.workerPollMs;
  let dueTimer: NodeJS.Timeout | undefined;
  let stopping = false;
  /** Wakes the worker when the next job falls due before the next poll (a retry's backoff ending). */
  const scheduleNextDue = async () => {
    const at = await runner.nextDueAt();
    if (dueTimer) clearTimeout(dueTimer);
    dueTimer = undefined;
    if (!at || stopping) return;
    const wait = at.getTime() - Date.now();
    if (wait > 0 && wait < pollMs) {
      dueTimer = setTimeout(() => poller.wake(), wait + 5);
      dueTimer.unref();
    }
  };
  const poller = await startPollingWorker({
    name: options.name ?? 'jobs',
    database: options.deps.database,
    log: options.log,
    pollMs,
    channel: JOBS_CHANNEL,
    runOnce: async () => {
      if (stopping) return 0;
      const free = concurrency - inFlight.size;
      const claimed = await runner.claim(free);
      // Nothing to claim now (idle, or every due key at its cap): wake when the next job is due.
      if (free > 0 && claimed.length === 0) await scheduleNextDue();
      for (const job of claimed) {
        const running: Promise<void> = runner
          .run(job)
          .catch((err) => options.log.error({ err, jobId: job.id }, 'job outcome not recorded'))
          .finally(() => {
            inFlight.delete(running);
            poller.wake();
          });
        inFlight.add(running);
      }
      return claimed.length;
    },
  });
  return {
    name: poller.name,
    wake: () => poller.wake(),
    async stop() {
      stopping = true;
      if (dueTimer) clearTimeout(dueTimer);
      await poller.stop();
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** Deletes finished jobs: done after a day, dead after 30 days (kept that long for inspection). */
export async function pruneFinishedJobs(deps: Pick<AppDeps, 'db'>): Promise<void> {
  await withSystem(deps.db, (tx) =>
    tx.execute(sql`DELETE FROM jobs WHERE (status = 'done' AND updated_at < now() - interval '1 day')
                                      OR (status = 'dead' AND updated_at < now() - interval '30 days')`),
  );
}
