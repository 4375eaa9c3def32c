import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { ZodError } from 'zod';
import type { Tier } from '../context.js';
import type { Tx } from '../db/client.js';
import { textArray } from '../db/lists.js';
import { preparedRows, queryRows, withSystem } from '../db/tenant.js';
import type { AppDeps } from '../types.js';
import { startPollingWorker, type Worker } from '../worker.js';
import {
  backoffMs,
  type DeadJob,
  JOBS_CHANNEL,
  type JobContext,
  type JobDefinition,
  PermanentJobError,
  RetryJobError,
  type SettledRecord,
} from './jobs.js';

// biome-ignore lint/suspicious/noExplicitAny: a worker runs definitions of any payload, loaded and record type
type AnyJob = JobDefinition<any, any, any>;

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
  /** The workspace's, read by the claim (null for platform jobs). */
  tier: Tier | null;
  organization_id: string | null;
  workspace_found: boolean;
  /** Set by the claim for types with `load`: whether the job has an entry, and the entry. */
  loaded?: { found: boolean; value: unknown };
}

/** A finished job's outcome waiting to be written (in a batch) under its claim. */
interface Outcome {
  job: ClaimedJob;
  status: 'done' | 'queued' | 'dead';
  error: string | null;
  /** For a retry: when it is due again. */
  delayMs: number | null;
  writes: Array<(tx: Tx) => Promise<void>>;
  records: unknown[];
  resolve(): void;
  reject(err: unknown): void;
}

export const LEASE_EXPIRED = 'lease expired before the job finished (worker stopped?)';

/**
 * A recursive CTE `name AS (…)` listing the distinct concurrency keys of a type's jobs in a status
 * (plus a final NULL row), by a skip scan of the partial key index: one index probe per key, however
 * many jobs each key holds. For use after WITH RECURSIVE.
 */
function distinctKeys(name: 'queued_keys' | 'running_keys', type: string, status: 'queued' | 'running'): SQL {
  return sql`
    ${sql.raw(name)} AS (
      (SELECT concurrency_key AS key FROM jobs
        WHERE type = ${type} AND status = ${status} AND concurrency_key IS NOT NULL
        ORDER BY concurrency_key LIMIT 1)
      UNION ALL
      SELECT (SELECT j.concurrency_key FROM jobs j
               WHERE j.type = ${type} AND j.status = ${status} AND j.concurrency_key IS NOT NULL
                 AND j.concurrency_key > prev.key
               ORDER BY j.concurrency_key LIMIT 1)
        FROM ${sql.raw(name)} prev WHERE prev.key IS NOT NULL)`;
}

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
      // Keyless jobs of every type this worker runs (only capped types' jobs keep a key: enqueueJob).
      let picked = await queryRows<{ id: string; run_at: Date | string }>(
        tx,
        sql`SELECT id, run_at FROM jobs
             WHERE type IN (${list([...this.byType.values()])}) AND concurrency_key IS NULL AND ${due}
             ORDER BY run_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
      );
      if (capped.length > 0) {
        const keyed = await this.pickKeyed(tx, capped, limit);
        if (keyed.length > 0) {
          const at = (r: { run_at: Date | string }) => new Date(r.run_at).getTime();
          // Rows locked but left out stay queued; the lock ends with this short transaction.
          picked = [...picked, ...keyed].sort((a, b) => at(a) - at(b)).slice(0, limit);
        }
      }
      if (picked.length === 0) return [];
      // One array parameter: the same text for any number of jobs, so the statement is prepared once
      // per connection.
      const ids = textArray(picked.map((r) => r.id));
      // The workspace's tier comes with the claim: read when the job runs, not when it was enqueued.
      const claimed = await preparedRows<ClaimedJob>(
        tx,
        sql`
        WITH c AS (
          UPDATE jobs SET status = 'running', attempts = attempts + 1, claimed_by = ${token},
                 lease_until = now() + make_interval(secs => ${leaseSecs}), updated_at = now(),
                 last_error = CASE WHEN status = 'running' THEN ${LEASE_EXPIRED} ELSE last_error END
           WHERE id = ANY(${ids}::text[])
          RETURNING id, type, workspace_id, payload, attempts, max_attempts, claimed_by
        )
        SELECT c.*, w.tier, w.organization_id, (w.id IS NOT NULL) AS workspace_found
          FROM c LEFT JOIN workspaces w ON w.id = c.workspace_id`,
      );
      await this.load(tx, claimed);
      return claimed;
    });
  }

  /** Runs each claimed type's `load` once for its jobs, in the claim's transaction. */
  private async load(tx: Tx, claimed: ClaimedJob[]): Promise<void> {
    const byType = new Map<AnyJob, { job: ClaimedJob; payload: unknown }[]>();
    for (const job of claimed) {
      const definition = this.byType.get(job.type) as AnyJob;
      if (!definition.load) continue;
      const parsed = definition.schema.safeParse(job.payload);
      // A payload that no longer validates is not loaded: the run fails it for good.
      if (!parsed.success) continue;
      byType.set(definition, [...(byType.get(definition) ?? []), { job, payload: parsed.data }]);
    }
    for (const [definition, jobs] of byType) {
      const found: Map<string, unknown> = await definition.load!(
        tx,
        jobs.map(({ job, payload }) => ({ id: job.id, workspaceId: job.workspace_id, payload })),
      );
      for (const { job } of jobs) job.loaded = { found: found.has(job.id), value: found.get(job.id) };
    }
  }

  /**
   * Due jobs of capped types, per (type, concurrency key): at most min(cap, concurrency / (busy keys
   * + 1)) running per key, counting the unexpired leases of every instance. A key is busy while it
   * has due or running jobs, so a few slow keys cannot take every slot from the others; the one
   * share kept back is there for a key that becomes busy next (also while the others are idle).
   *
   * The keys are found by skip scans of the partial key indexes (one index probe per distinct key,
   * however long the backlog), and a key's `keyEligible` is evaluated once per claim.
   *
   * The cap holds across instances: a claimer first takes a transaction-level advisory lock per key
   * (try-lock: a key another instance is claiming right now is skipped this round), and only then,
   * in a new statement whose snapshot includes every claim committed before the lock was granted,
   * counts the key's running jobs and picks.
   */
  private async pickKeyed(tx: Tx, capped: AnyJob[], limit: number) {
    interface Key {
      type: string;
      key: string;
      cap: number;
      eligible: boolean;
      expired: boolean;
    }
    const keys: Key[] = [];
    for (const job of capped) {
      const eligible = job.keyEligible ? job.keyEligible(sql`k.key`) : sql`true`;
      const distinct = (name: 'queued_keys' | 'running_keys', status: 'queued' | 'running') =>
        distinctKeys(name, job.type, status);
      // Per key, three probes of one index entry each (LATERAL … LIMIT 1, so never a scan of the backlog).
      const probe = (where: SQL, index: 'queued' | 'running') => sql`
        LEFT JOIN LATERAL (SELECT true AS hit FROM jobs j
                            WHERE j.type = ${job.type} AND j.concurrency_key = k.key AND ${where}
                            ${index === 'queued' ? sql`ORDER BY j.run_at` : sql``} LIMIT 1)`;
      const rows = await queryRows<Key>(
        tx,
        sql`
        WITH RECURSIVE ${distinct('queued_keys', 'queued')}, ${distinct('running_keys', 'running')},
        stats AS (
          SELECT k.key, (${eligible}) AS eligible, q.hit IS NOT NULL AS queued_due,
                 x.hit IS NOT NULL AS expired, r.hit IS NOT NULL AS live
            FROM (SELECT key FROM queued_keys WHERE key IS NOT NULL
                  UNION SELECT key FROM running_keys WHERE key IS NOT NULL) k
            ${probe(sql`j.status = 'queued' AND j.run_at <= now()`, 'queued')} q ON true
            ${probe(sql`j.status = 'running' AND j.lease_until < now()`, 'running')} x ON true
            ${probe(sql`j.status = 'running' AND j.lease_until >= now()`, 'running')} r ON true
        ), shares AS (
          SELECT key, eligible, expired, (eligible AND queued_due) OR expired AS has_due, live FROM stats
        )
        SELECT ${job.type} AS type, key, cap, eligible, expired FROM (
          SELECT key, cap, eligible, expired,
                 pg_try_advisory_xact_lock(hashtextextended('atrium_jobs:' || ${job.type} || ':' || key, 0)) AS locked
            FROM (SELECT key, eligible, expired, has_due,
                         least(${job.maxConcurrentPerKey}::int,
                               greatest(1, ${this.concurrency}::int / (1 + count(*) FILTER (WHERE has_due OR live) OVER ()))
                         ) AS cap
                    FROM shares) s
           WHERE has_due ORDER BY random() LIMIT ${limit}
        ) tried
         WHERE locked`,
      );
      keys.push(...rows);
    }
    if (keys.length === 0) return [];
    const values = (list: Key[], taken: Map<string, number>) =>
      sql.join(
        list.map(
          (k, i) => sql`(${i}::int, ${k.type}, ${k.key}, ${k.cap - (taken.get(`${k.type}\n${k.key}`) ?? 0)}::int)`,
        ),
        sql`, `,
      );
    // The room each key has: its share minus the unexpired leases it holds now (on any instance).
    const running = sql`CROSS JOIN LATERAL (
         SELECT count(*)::int AS n FROM jobs r
          WHERE r.type = s.type AND r.concurrency_key = s.key AND r.status = 'running' AND r.lease_until > now()
       ) running`;
    const picked: { id: string; run_at: Date | string; type: string; key: string }[] = [];
    // First the jobs whose worker died (rare: only keys that have one), then the queued ones, each
    // an ordered scan of its own partial index that stops at the key's room.
    const expired = keys.filter((k) => k.expired);
    if (expired.length > 0) {
      picked.push(
        ...(await queryRows<{ id: string; run_at: Date | string; type: string; key: string }>(
          tx,
          sql`
          SELECT p.id, p.run_at, s.type, s.key
            FROM (VALUES ${values(expired, new Map())}) AS s(ord, type, key, cap)
           ${running}
           CROSS JOIN LATERAL (
             SELECT jobs.id, jobs.run_at FROM jobs
              WHERE jobs.type = s.type AND jobs.concurrency_key = s.key
                AND jobs.status = 'running' AND jobs.lease_until < now()
              ORDER BY jobs.run_at
              LIMIT greatest(0, s.cap - running.n)
              FOR UPDATE SKIP LOCKED
           ) p
           ORDER BY s.ord
           LIMIT ${limit}`,
        )),
      );
    }
    const taken = new Map<string, number>();
    for (const row of picked) taken.set(`${row.type}\n${row.key}`, (taken.get(`${row.type}\n${row.key}`) ?? 0) + 1);
    const ready = keys.filter((k) => k.eligible);
    if (ready.length > 0 && picked.length < limit) {
      picked.push(
        ...(await queryRows<{ id: string; run_at: Date | string; type: string; key: string }>(
          tx,
          sql`
          SELECT p.id, p.run_at, s.type, s.key
            FROM (VALUES ${values(ready, taken)}) AS s(ord, type, key, cap)
           ${running}
           CROSS JOIN LATERAL (
             SELECT jobs.id, jobs.run_at FROM jobs
              WHERE jobs.type = s.type AND jobs.concurrency_key = s.key
                AND jobs.status = 'queued' AND jobs.run_at <= now()
              ORDER BY jobs.run_at
              LIMIT greatest(0, s.cap - running.n)
              FOR UPDATE SKIP LOCKED
           ) p
           ORDER BY s.ord
           LIMIT ${limit - picked.length}`,
        )),
      );
    }
    return picked;
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
    // Keyed jobs (capped types only): per key the first future one, so a long backlog of a key that
    // waits (a disabled endpoint) is not read at every idle moment.
    const keyed = [...this.byType.values()]
      .filter((job) => job.maxConcurrentPerKey !== null)
      .map(
        (job) => sql`(WITH RECURSIVE ${distinctKeys('queued_keys', job.type, 'queued')}
                      SELECT min(n.run_at) FROM queued_keys k
                       CROSS JOIN LATERAL (SELECT j.run_at FROM jobs j
                                            WHERE j.type = ${job.type} AND j.concurrency_key = k.key
                                              AND j.status = 'queued' AND j.run_at > now()
                                            ORDER BY j.run_at LIMIT 1) n
                       WHERE k.key IS NOT NULL)`,
      );
    const [row] = await withSystem(this.options.deps.db, (tx) =>
      queryRows<{ at: Date | string | null }>(
        tx,
        sql`SELECT least((SELECT min(run_at) FROM jobs WHERE status = 'queued' AND type IN (${types}) AND run_at > now()
                                                          AND concurrency_key IS NULL),
                         (SELECT min(lease_until) FROM jobs WHERE status = 'running' AND type IN (${types})
                                                              AND lease_until > now())
                         ${sql.join(
                           keyed.map((k) => sql`, ${k}`),
                           sql``,
                         )}) AS at`,
      ),
    );
    return row?.at ? new Date(row.at) : null;
  }

  /**
   * Runs one claimed job outside any transaction and records the outcome, fenced by its claim;
   * resolves once the outcome is committed.
   */
  async run(job: ClaimedJob): Promise<void> {
    const definition = this.byType.get(job.type) as AnyJob;
    const log = this.options.log.child({ jobId: job.id, jobType: job.type, workspaceId: job.workspace_id });
    const controller = new AbortController();
    let heartbeat: NodeJS.Timeout | undefined = setInterval(() => {
      void this.extendLease(job, definition.leaseMs).then(
        (held) => {
          if (!held) controller.abort(new Error('lease lost'));
        },
        (err) => log.warn({ err }, 'job lease heartbeat failed'),
      );
    }, definition.leaseMs / 3);
    heartbeat.unref();
    const stopHeartbeat = () => {
      clearInterval(heartbeat);
      heartbeat = undefined;
    };
    // The attempt's outcome is decided once (finished, failed or overrun): settle and record add nothing after.
    const open = { value: true };
    const writes: Array<(tx: Tx) => Promise<void>> = [];
    const records: unknown[] = [];
    let overrun: NodeJS.Timeout | undefined;
    let overran: Error | undefined;
    try {
      if (job.attempts > job.max_attempts) throw new PermanentJobError(LEASE_EXPIRED);
      const payload = definition.schema.parse(job.payload);
      if (job.workspace_id && !job.workspace_found) {
        throw new PermanentJobError(`workspace ${job.workspace_id} no longer exists`);
      }
      if (job.loaded && !job.loaded.found) {
        log.debug('job has nothing left to do');
        await this.finish({ job, status: 'done', error: null, delayMs: null, writes: [], records: [] });
        return;
      }
      const ctx = this.contextFor(job, log, controller.signal, writes, records, open);
      const handling = definition.handler(ctx, payload, job.loaded?.value);
      // Past the maximum run time the attempt fails now, whether or not the handler heeds its signal.
      const timedOut = new Promise<never>((_, reject) => {
        overrun = setTimeout(() => {
          const err = new Error(`ran longer than its maximum run time (${definition.maxRunMs} ms)`);
          overran = err;
          stopHeartbeat();
          open.value = false;
          reject(err);
          controller.abort(err);
          handling.then(
            () => log.warn('job handler ended after its maximum run time; its result was dropped'),
            (late) => log.warn({ err: late }, 'job handler failed after its maximum run time; dropped'),
          );
        }, definition.maxRunMs);
        overrun.unref();
      });
      await Promise.race([handling, timedOut]);
      // A handler that ended as its signal aborted still ran out of time.
      if (overran) throw overran;
      open.value = false;
      await this.finish({ job, status: 'done', error: null, delayMs: null, writes, records });
    } catch (err) {
      open.value = false;
      const message = String((err as Error)?.message ?? err).slice(0, 1000);
      const permanent = err instanceof PermanentJobError || err instanceof ZodError;
      if (permanent || job.attempts >= job.max_attempts) {
        log.error({ err, attempt: job.attempts }, 'job failed for good');
        await this.finish({ job, status: 'dead', error: message, delayMs: null, writes, records });
      } else {
        const delay = Math.max(
          backoffMs(definition.backoff, job.attempts),
          err instanceof RetryJobError ? err.retryAfterMs : 0,
        );
        log.warn({ err, attempt: job.attempts, retryInMs: delay }, 'job failed; will retry');
        await this.finish({ job, status: 'queued', error: message, delayMs: delay, writes, records });
      }
    } finally {
      clearTimeout(overrun);
      stopHeartbeat();
    }
  }

  private contextFor(
    job: ClaimedJob,
    log: FastifyBaseLogger,
    signal: AbortSignal,
    writes: Array<(tx: Tx) => Promise<void>>,
    records: unknown[],
    open: { value: boolean },
  ): JobContext<unknown> {
    return {
      deps: this.options.deps,
      jobId: job.id,
      type: job.type,
      attempt: job.attempts,
      maxAttempts: job.max_attempts,
      workspaceId: job.workspace_id,
      organizationId: job.organization_id,
      tier: job.tier,
      requestId: job.id,
      log,
      signal,
      settle: (write) => {
        if (open.value) writes.push(write);
        else log.warn('settle after the attempt ended (maximum run time): dropped');
      },
      record: (value) => {
        if (open.value) records.push(value);
        else log.warn('record after the attempt ended (maximum run time): dropped');
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

  private pending: Outcome[] = [];
  private flushing: Promise<void> | undefined;

  /**
   * Queues the outcome to be written with the others that finish meanwhile, in one transaction;
   * resolves once it is committed.
   */
  private finish(outcome: Omit<Outcome, 'resolve' | 'reject'>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ ...outcome, resolve, reject });
      this.startFlush();
    });
  }

  private startFlush(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      // Outcomes that finish in the same tick join the batch.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        await this.commit(batch);
      }
    })().finally(() => {
      this.flushing = undefined;
      if (this.pending.length > 0) this.startFlush();
    });
  }

  /** Writes a batch; if the batch fails, each outcome alone, so one bad write fails only its own job. */
  private async commit(batch: Outcome[]): Promise<void> {
    try {
      await this.write(batch);
      for (const outcome of batch) outcome.resolve();
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
      for (const outcome of batch) {
        try {
          await this.write([outcome]);
          outcome.resolve();
        } catch (single) {
          outcome.reject(single);
        }
      }
    }
  }

  /**
   * Writes outcomes only where this worker's claim still holds the job (a taken-over or cancelled
   * job is not ours), and with them, in the same system transaction: the held jobs' `settle` writes,
   * each type's `settleMany` of the recorded values (those of lost claims marked `held: false`), and
   * `onDead` of the jobs that died.
   */
  private async write(batch: Outcome[]): Promise<void> {
    const removed = (o: Outcome) => o.status === 'done' && !this.byType.get(o.job.type)?.keepDone;
    const ids = (list: Outcome[]) => textArray(list.map((o) => o.job.id));
    const input = JSON.stringify(
      batch.map((o) => ({
        id: o.job.id,
        token: o.job.claimed_by,
        status: o.status,
        error: o.error,
        delay_s: o.delayMs === null ? null : o.delayMs / 1000,
      })),
    );
    await withSystem(this.options.deps.db, async (tx) => {
      // `= ANY(ids)` keeps both to primary-key lookups whatever the row estimate of the JSON input.
      const rows = await preparedRows<{ id: string }>(
        tx,
        sql`
        WITH v AS (
          SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS v(id text, token text, status text, error text, delay_s float8)
        ), removed AS (
          DELETE FROM jobs j USING v
           WHERE j.id = ANY(${ids(batch.filter(removed))}::text[])
             AND j.id = v.id AND j.status = 'running' AND j.claimed_by = v.token
          RETURNING j.id
        ), updated AS (
          UPDATE jobs j
             SET status = v.status, last_error = v.error, lease_until = NULL, updated_at = now(),
                 run_at = CASE WHEN v.delay_s IS NULL THEN j.run_at ELSE now() + make_interval(secs => v.delay_s) END
            FROM v
           WHERE j.id = ANY(${ids(batch.filter((o) => !removed(o)))}::text[])
             AND j.id = v.id AND j.status = 'running' AND j.claimed_by = v.token
          RETURNING j.id
        )
        SELECT id FROM removed UNION ALL SELECT id FROM updated`,
      );
      const held = new Set(rows.map((r) => r.id));
      for (const outcome of batch) {
        if (!held.has(outcome.job.id)) continue;
        for (const write of outcome.writes) await write(tx);
      }
      const recorded = new Map<AnyJob, SettledRecord<unknown>[]>();
      for (const outcome of batch) {
        const definition = this.byType.get(outcome.job.type) as AnyJob;
        if (!definition.settleMany || outcome.records.length === 0) continue;
        const list = recorded.get(definition) ?? [];
        for (const value of outcome.records)
          list.push({ value, jobId: outcome.job.id, held: held.has(outcome.job.id) });
        recorded.set(definition, list);
      }
      for (const [definition, records] of recorded) await definition.settleMany!(tx, records);
      for (const outcome of batch) {
        const onDead = this.byType.get(outcome.job.type)?.onDead;
        if (outcome.status !== 'dead' || !onDead || !held.has(outcome.job.id)) continue;
        const dead: DeadJob = {
          id: outcome.job.id,
          type: outcome.job.type,
          workspaceId: outcome.job.workspace_id,
          attempts: outcome.job.attempts,
          payload: outcome.job.payload,
          error: outcome.error ?? '',
        };
        await onDead(tx, dead);
      }
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
  await Promise.all(
    claimed.map((job) =>
      runner.run(job).catch((err) => options.log.error({ err, jobId: job.id }, 'job outcome not recorded')),
    ),
  );
  return claimed.length;
}

/**
 * The job worker: claims as many due jobs as it has free slots, runs them concurrently, and
 * claims again as slots free up. NOTIFY on enqueue wakes it; polling is the fallback (also for
 * retries coming due and leases expiring).
 */
export async function startJobWorker(options: JobRunnerOptions): Promise<Worker> {
  const concurrency = options.concurrency ?? 8;
  const refill = Math.max(1, Math.floor(concurrency / 8));
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
    // The payload is the job type: a worker wakes only for types it runs.
    accepts: (type) => options.jobs.some((job) => job.type === type),
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
            // Claim again once a useful number of slots is free (an eighth of them), not for every
            // single one: a large pool then claims in batches, and a small one still at each slot.
            if (concurrency - inFlight.size >= refill) poller.wake();
          });
        inFlight.add(running);
      }
      // Fewer than asked for: nothing more is due now (or every due key is at its cap), so do not
      // claim again at once; finishing jobs, NOTIFY, the due timer or the poll wake the worker.
      return claimed.length < free ? 0 : claimed.length;
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
    tx.execute(sql`DELETE FROM jobs WHERE (status IN ('done', 'cancelled') AND updated_at < now() - interval '1 day')
                                      OR (status = 'dead' AND updated_at < now() - interval '30 days')`),
  );
}
