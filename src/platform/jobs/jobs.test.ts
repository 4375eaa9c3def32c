import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { TEST_SERVER_URL } from '../../../test/helpers/db.js';
import { createWorkspace } from '../../../test/helpers/factories.js';
import type { Tx } from '../db/client.js';
import { queryRows, withSystem, withTenant } from '../db/tenant.js';
import type { Worker } from '../worker.js';
import {
  cancelJobs,
  defineJob,
  enqueueJob,
  insertJobsSql,
  type JobContext,
  type JobDefinition,
  PermanentJobError,
  type SettledRecord,
} from './jobs.js';
import { runDueJobs, startJobWorker } from './runner.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

interface JobRow {
  status: string;
  attempts: number;
  last_error: string | null;
  claimed_by: string | null;
  /** Seconds from the database's now() to run_at. */
  due_in: number;
}

async function jobRow(id: string): Promise<JobRow> {
  const [row] = await withSystem(t.database.db, (tx) =>
    queryRows<JobRow>(
      tx,
      sql`SELECT status, attempts, last_error, claimed_by,
                 extract(epoch FROM run_at - now())::float8 AS due_in
            FROM jobs WHERE id = ${id}`,
    ),
  );
  return row;
}

const makeDue = (id: string) =>
  withSystem(t.database.db, (tx) => tx.execute(sql`UPDATE jobs SET run_at = now() WHERE id = ${id}`));

// biome-ignore lint/suspicious/noExplicitAny: definitions of any payload type
const run = (jobs: JobDefinition<any, any, any>[], app: FastifyInstance = t.app) =>
  runDueJobs({ deps: app.atrium, log: app.log, jobs });

// biome-ignore lint/suspicious/noExplicitAny: definitions of any loaded and record type
async function enqueue<P>(job: JobDefinition<P, any, any>, payload: P, workspaceId: string | null = null) {
  const id = await withSystem(t.database.db, (tx) => enqueueJob(tx, job, payload, { workspaceId }));
  if (!id) throw new Error('not enqueued');
  return id;
}

let seq = 0;
const uniqueType = (name: string) => `test.${name}.${++seq}`;

describe('enqueueing', () => {
  const noop = defineJob({ type: uniqueType('noop'), schema: z.object({ n: z.number() }), handler: async () => {} });

  it('a job enqueued in a transaction that rolls back does not exist', async () => {
    let id: string | null = null;
    await expect(
      withSystem(t.database.db, async (tx) => {
        id = await enqueueJob(tx, noop, { n: 1 }, { workspaceId: null });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(id).toMatch(/^job_/);
    expect(await jobRow(id as unknown as string)).toBeUndefined();
    expect(await run([noop])).toBe(0);
  });

  it('refuses a payload its schema rejects', async () => {
    await expect(
      withSystem(t.database.db, (tx) =>
        enqueueJob(tx, noop, { n: 'x' } as unknown as { n: number }, { workspaceId: null }),
      ),
    ).rejects.toThrow();
  });

  it('a dedupe key adds nothing while a job with it is queued, and again after it ran', async () => {
    const opts = { workspaceId: null, dedupeKey: 'probe' };
    const first = await withSystem(t.database.db, (tx) => enqueueJob(tx, noop, { n: 1 }, opts));
    const second = await withSystem(t.database.db, (tx) => enqueueJob(tx, noop, { n: 2 }, opts));
    expect(first).toMatch(/^job_/);
    expect(second).toBeNull();
    expect(await run([noop])).toBe(1);
    const third = await withSystem(t.database.db, (tx) => enqueueJob(tx, noop, { n: 3 }, opts));
    expect(third).toMatch(/^job_/);
    expect(await run([noop])).toBe(1);
  });

  it('a tenant transaction enqueues for its own workspace only and sees only its own jobs', async () => {
    const a = await createWorkspace(t);
    const b = await createWorkspace(t);
    const mine = await withTenant(t.database.db, { workspaceId: a.id }, (tx) =>
      enqueueJob(tx, noop, { n: 1 }, { workspaceId: a.id }),
    );
    expect(mine).toMatch(/^job_/);
    await expect(
      withTenant(t.database.db, { workspaceId: a.id }, (tx) => enqueueJob(tx, noop, { n: 1 }, { workspaceId: b.id })),
    ).rejects.toThrow();
    await expect(
      withTenant(t.database.db, { workspaceId: a.id }, (tx) => enqueueJob(tx, noop, { n: 1 }, { workspaceId: null })),
    ).rejects.toThrow();
    const seenByB = await withTenant(t.database.db, { workspaceId: b.id }, (tx) =>
      queryRows(tx, sql`SELECT id FROM jobs WHERE id = ${mine}`),
    );
    expect(seenByB).toEqual([]);
  });
});

describe('running', () => {
  it('retries with exponential backoff, then succeeds', async () => {
    let calls = 0;
    const flaky = defineJob({
      type: uniqueType('flaky'),
      schema: z.object({}),
      maxAttempts: 5,
      backoff: { baseMs: 60_000 },
      handler: async () => {
        calls++;
        if (calls <= 2) throw new Error(`upstream 503 (call ${calls})`);
      },
    });
    const id = await enqueue(flaky, {});

    expect(await run([flaky])).toBe(1);
    let row = await jobRow(id);
    expect(row).toMatchObject({ status: 'queued', attempts: 1, last_error: 'upstream 503 (call 1)' });
    expect(row.due_in).toBeGreaterThan(50);
    expect(row.due_in).toBeLessThanOrEqual(60);
    expect(await run([flaky])).toBe(0); // not due yet

    await makeDue(id);
    expect(await run([flaky])).toBe(1);
    row = await jobRow(id);
    expect(row).toMatchObject({ status: 'queued', attempts: 2, last_error: 'upstream 503 (call 2)' });
    expect(row.due_in).toBeGreaterThan(110); // doubled
    expect(row.due_in).toBeLessThanOrEqual(120);

    await makeDue(id);
    expect(await run([flaky])).toBe(1);
    expect(await jobRow(id)).toMatchObject({
      status: 'done',
      attempts: 3,
      last_error: null,
      claimed_by: expect.any(String),
    });
    expect(calls).toBe(3);
  });

  it('goes dead after max attempts and is not run again', async () => {
    let calls = 0;
    const failing = defineJob({
      type: uniqueType('failing'),
      schema: z.object({}),
      maxAttempts: 2,
      backoff: () => 0,
      handler: async () => {
        calls++;
        throw new Error('always broken');
      },
    });
    const id = await enqueue(failing, {});
    expect(await run([failing])).toBe(1);
    expect(await jobRow(id)).toMatchObject({ status: 'queued', attempts: 1 });
    expect(await run([failing])).toBe(1);
    expect(await jobRow(id)).toMatchObject({ status: 'dead', attempts: 2, last_error: 'always broken' });
    expect(await run([failing])).toBe(0);
    expect(calls).toBe(2);
  });

  it('a permanent error or a payload that no longer validates goes dead at once', async () => {
    const permanent = defineJob({
      type: uniqueType('permanent'),
      schema: z.object({ n: z.number() }),
      handler: async () => {
        throw new PermanentJobError('nothing to retry');
      },
    });
    const a = await enqueue(permanent, { n: 1 });
    const b = await enqueue(permanent, { n: 2 });
    await withSystem(t.database.db, (tx) => tx.execute(sql`UPDATE jobs SET payload = '{"n":"two"}' WHERE id = ${b}`));
    expect(await run([permanent])).toBe(2);
    expect(await jobRow(a)).toMatchObject({ status: 'dead', attempts: 1, last_error: 'nothing to retry' });
    expect(await jobRow(b)).toMatchObject({ status: 'dead', attempts: 1 });
  });

  it('leaves jobs of types this worker does not know queued', async () => {
    const known = defineJob({ type: uniqueType('known'), schema: z.object({}), handler: async () => {} });
    const other = defineJob({ type: uniqueType('other'), schema: z.object({}), handler: async () => {} });
    const id = await enqueue(other, {});
    expect(await run([known])).toBe(0);
    expect(await jobRow(id)).toMatchObject({ status: 'queued', attempts: 0 });
  });

  it('rebuilds the context from the job: workspace, tier, organization, request id, logger', async () => {
    const seen: JobContext[] = [];
    const capture = defineJob({
      type: uniqueType('capture'),
      schema: z.object({}),
      handler: async (ctx) => {
        seen.push(ctx);
      },
    });
    const ws = await createWorkspace(t, { tier: 'advanced' });
    const tenantJob = await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
      enqueueJob(tx, capture, {}, { workspaceId: ws.id }),
    );
    const platformJob = await enqueue(capture, {});
    expect(await run([capture])).toBe(2);
    const byId = new Map(seen.map((c) => [c.jobId, c]));
    expect(byId.get(tenantJob as string)).toMatchObject({
      workspaceId: ws.id,
      tier: 'advanced',
      organizationId: ws.organizationId,
      requestId: tenantJob,
      type: capture.type,
      attempt: 1,
    });
    const log = byId.get(tenantJob as string)?.log as unknown as { bindings(): Record<string, unknown> };
    expect(log.bindings()).toMatchObject({
      jobId: tenantJob,
      jobType: capture.type,
      workspaceId: ws.id,
    });
    expect(byId.get(platformJob)).toMatchObject({ workspaceId: null, tier: null });
  });

  it('the tier is read when the job runs, not when it was enqueued', async () => {
    let tier: string | null = null;
    const capture = defineJob({
      type: uniqueType('tier'),
      schema: z.object({}),
      handler: async (ctx) => {
        tier = ctx.tier;
      },
    });
    const ws = await createWorkspace(t, { tier: 'free' });
    await enqueue(capture, {}, ws.id);
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE workspaces SET tier = 'standard' WHERE id = ${ws.id}`),
    );
    await run([capture]);
    expect(tier).toBe('standard');
  });
});

describe('leases', () => {
  it('a job whose worker died (lease expired) is taken over; a live lease is not', async () => {
    let calls = 0;
    const job = defineJob({
      type: uniqueType('takeover'),
      schema: z.object({}),
      handler: async () => {
        calls++;
      },
    });
    const dead = await enqueue(job, {});
    const alive = await enqueue(job, {});
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE jobs SET status = 'running', attempts = 1, claimed_by = 'crashed/1',
                            lease_until = CASE WHEN id = ${dead} THEN now() - interval '1 second'
                                               ELSE now() + interval '5 minutes' END
                      WHERE id IN (${dead}, ${alive})`),
    );
    expect(await run([job])).toBe(1);
    expect(calls).toBe(1);
    expect(await jobRow(dead)).toMatchObject({ status: 'done', attempts: 2 });
    expect(await jobRow(alive)).toMatchObject({ status: 'running', claimed_by: 'crashed/1' });
  });

  it('a job whose worker died on its last attempt goes dead instead of running again', async () => {
    let calls = 0;
    const job = defineJob({
      type: uniqueType('last'),
      schema: z.object({}),
      maxAttempts: 3,
      handler: async () => {
        calls++;
      },
    });
    const id = await enqueue(job, {});
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE jobs SET status = 'running', attempts = 3, claimed_by = 'crashed/2',
                            lease_until = now() - interval '1 second' WHERE id = ${id}`),
    );
    expect(await run([job])).toBe(1);
    expect(calls).toBe(0);
    expect((await jobRow(id)).status).toBe('dead');
    expect((await jobRow(id)).last_error).toContain('lease expired');
  });

  it('a long job keeps its lease by heartbeat; a worker that lost it is told and its result dropped', async () => {
    let abortedBy: unknown;
    const id = { current: '' };
    const job = defineJob({
      type: uniqueType('heartbeat'),
      schema: z.object({}),
      leaseMs: 300,
      handler: async (ctx) => {
        // Runs past its lease: the heartbeat must keep it, so nobody takes it over meanwhile.
        await new Promise((r) => setTimeout(r, 700));
        const [row] = await withSystem(t.database.db, (tx) =>
          queryRows<{ live: boolean }>(tx, sql`SELECT lease_until > now() AS live FROM jobs WHERE id = ${id.current}`),
        );
        expect(row.live).toBe(true);
        // Now another worker takes it over (as if this one had stalled past the lease).
        await withSystem(t.database.db, (tx) =>
          tx.execute(sql`UPDATE jobs SET claimed_by = 'other/1', lease_until = now() + interval '5 minutes'
                          WHERE id = ${id.current}`),
        );
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve());
          setTimeout(resolve, 2000);
        });
        abortedBy = ctx.signal.reason;
      },
    });
    id.current = await enqueue(job, {});
    expect(await run([job])).toBe(1);
    expect(String(abortedBy)).toContain('lease lost');
    // The takeover's claim stands: this worker's "done" was not recorded.
    expect(await jobRow(id.current)).toMatchObject({ status: 'running', claimed_by: 'other/1' });
  });
});

describe('maximum run time (maxRunMs)', () => {
  it('a handler that hangs past it is aborted and its attempt fails (retried with backoff); its late result is dropped', async () => {
    let abortedBy: unknown;
    let release: (() => void) | undefined;
    const job = defineJob({
      type: uniqueType('hangs'),
      schema: z.object({}),
      maxRunMs: 300,
      leaseMs: 150,
      backoff: { baseMs: 60_000 },
      handler: async (ctx) => {
        if (ctx.attempt > 1) return;
        ctx.signal.addEventListener('abort', () => {
          abortedBy = ctx.signal.reason;
        });
        // Ignores its signal: hangs until let go (at the latest after 3 s, so the test ends either way).
        await new Promise<void>((resolve) => {
          release = resolve;
          setTimeout(resolve, 3000);
        });
        ctx.settle(async (tx) => {
          await tx.execute(sql`UPDATE jobs SET last_error = 'late write' WHERE id = ${ctx.jobId}`);
        });
      },
    });
    const id = await enqueue(job, {});
    const started = Date.now();
    expect(await run([job])).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(String(abortedBy)).toContain('maximum run time');
    const failed = await jobRow(id);
    expect(failed).toMatchObject({ status: 'queued', attempts: 1, claimed_by: expect.any(String) });
    expect(failed.last_error).toContain('maximum run time');
    expect(failed.due_in).toBeGreaterThan(50);
    // The heartbeat stopped with it: nothing renews a lease of the job any more.
    const [lease] = await withSystem(t.database.db, (tx) =>
      queryRows<{ lease_until: unknown }>(tx, sql`SELECT lease_until FROM jobs WHERE id = ${id}`),
    );
    expect(lease.lease_until).toBeNull();

    // The retry runs and ends; then the first attempt's handler lets go: its settle write is not recorded.
    await makeDue(id);
    expect(await run([job])).toBe(1);
    expect(await jobRow(id)).toMatchObject({ status: 'done', attempts: 2, last_error: null });
    release?.();
    await new Promise((r) => setTimeout(r, 300));
    expect(await jobRow(id)).toMatchObject({ status: 'done', attempts: 2, last_error: null });
  });

  it('on its last attempt a job that runs too long goes dead', async () => {
    const job = defineJob({
      type: uniqueType('hangs-last'),
      schema: z.object({}),
      maxAttempts: 1,
      maxRunMs: 200,
      handler: (ctx) =>
        new Promise<void>((resolve) => {
          // Honours its signal, as a handler should.
          ctx.signal.addEventListener('abort', () => resolve());
          setTimeout(resolve, 3000);
        }),
    });
    const id = await enqueue(job, {});
    const started = Date.now();
    expect(await run([job])).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
    const row = await jobRow(id);
    expect(row.status).toBe('dead');
    expect(row.last_error).toContain('maximum run time');
  });

  it('defaults to 15 minutes, or five leases if longer', () => {
    const handler = async () => {};
    expect(defineJob({ type: uniqueType('d'), schema: z.object({}), handler }).maxRunMs).toBe(15 * 60_000);
    const long = defineJob({ type: uniqueType('d'), schema: z.object({}), leaseMs: 10 * 60_000, handler });
    expect(long.maxRunMs).toBe(50 * 60_000);
  });
});

describe('the worker', () => {
  it('wakes on the NOTIFY of a committed job (not on its poll)', async () => {
    const ran: string[] = [];
    const job = defineJob({
      type: uniqueType('notify'),
      schema: z.object({}),
      handler: async (ctx) => {
        ran.push(ctx.jobId);
      },
    });
    const worker = await startJobWorker({ deps: t.app.atrium, log: t.app.log, jobs: [job], pollMs: 60_000 });
    try {
      await new Promise((r) => setTimeout(r, 100)); // let the first (empty) pass go to sleep
      const id = await enqueue(job, {});
      await waitFor(() => ran.includes(id), 3000);
      await waitFor(async () => (await jobRow(id)).status === 'done', 3000);
    } finally {
      await worker.stop();
    }
  });

  it('runs a retry when its backoff ends, not at the next poll', async () => {
    const startedAt: number[] = [];
    const job = defineJob({
      type: uniqueType('retry-timer'),
      schema: z.object({}),
      backoff: { baseMs: 400 },
      handler: async () => {
        startedAt.push(Date.now());
        if (startedAt.length === 1) throw new Error('first attempt fails');
      },
    });
    const worker = await startJobWorker({ deps: t.app.atrium, log: t.app.log, jobs: [job], pollMs: 60_000 });
    try {
      const id = await enqueue(job, {});
      await waitFor(async () => (await jobRow(id)).status === 'done', 5000);
      const gap = startedAt[1] - startedAt[0];
      expect(gap).toBeGreaterThanOrEqual(350);
      expect(gap).toBeLessThan(2000);
    } finally {
      await worker.stop();
    }
  });

  async function twoWorkersRunEachJobOnce(second: FastifyInstance) {
    const runs = new Map<string, number>();
    const job = defineJob({
      type: uniqueType('exactly-once'),
      schema: z.object({ i: z.number() }),
      handler: async (ctx) => {
        runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 15));
      },
    });
    const workers: Worker[] = [
      await startJobWorker({ deps: t.app.atrium, log: t.app.log, jobs: [job], name: 'a', concurrency: 4 }),
      await startJobWorker({ deps: second.atrium, log: second.log, jobs: [job], name: 'b', concurrency: 4 }),
    ];
    try {
      const ids = await withSystem(t.database.db, async (tx) => {
        const out: string[] = [];
        for (let i = 0; i < 60; i++) out.push((await enqueueJob(tx, job, { i }, { workspaceId: null })) as string);
        return out;
      });
      await waitFor(async () => {
        const [row] = await withSystem(t.database.db, (tx) =>
          queryRows<{ n: number }>(
            tx,
            sql`SELECT count(*)::int AS n FROM jobs WHERE type = ${job.type} AND status = 'done'`,
          ),
        );
        return row.n === ids.length;
      }, 20_000);
      expect(runs.size).toBe(ids.length);
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      const claimers = await withSystem(t.database.db, (tx) =>
        queryRows<{ worker: string }>(
          tx,
          sql`SELECT DISTINCT split_part(claimed_by, ':', 1) AS worker FROM jobs WHERE type = ${job.type}`,
        ),
      );
      return claimers.map((c) => c.worker).sort();
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  }

  it('two workers on one database never run the same job twice', async () => {
    await twoWorkersRunEachJobOnce(t.app);
  });

  it.skipIf(!TEST_SERVER_URL)(
    'two instances on the PostgreSQL server share the jobs and never run one twice',
    async () => {
      const other = await t.startInstance();
      const claimers = await twoWorkersRunEachJobOnce(other.app);
      expect(claimers).toEqual(['a', 'b']);
    },
    30_000,
  );
});

describe('writes that commit with the outcome (settle, onDead)', () => {
  const marker = defineJob({
    type: uniqueType('marker'),
    schema: z.object({ of: z.string(), note: z.string() }),
    handler: async () => {},
  });
  const mark = (tx: Tx, of: string, note: string) =>
    enqueueJob(tx, marker, { of, note }, { workspaceId: null }).then(() => undefined);
  const marks = async (of: string) =>
    (
      await withSystem(t.database.db, (tx) =>
        queryRows<{ note: string }>(
          tx,
          sql`SELECT payload->>'note' AS note FROM jobs
               WHERE type = ${marker.type} AND payload->>'of' = ${of} ORDER BY created_at, id`,
        ),
      )
    ).map((r) => r.note);

  it('commits settle writes with done and with a retry; onDead runs in the transaction that marks it dead', async () => {
    const ok = defineJob({
      type: uniqueType('settle-ok'),
      schema: z.object({}),
      handler: async (ctx) => ctx.settle((tx) => mark(tx, ctx.jobId, 'done')),
    });
    const okId = await enqueue(ok, {});
    expect(await run([ok])).toBe(1);
    expect(await marks(okId)).toEqual(['done']);

    const failing = defineJob({
      type: uniqueType('settle-fail'),
      schema: z.object({}),
      maxAttempts: 2,
      backoff: { baseMs: 0 },
      onDead: (tx, job) => mark(tx, job.id, `dead after ${job.attempts}: ${job.error}`),
      handler: async (ctx) => {
        ctx.settle((tx) => mark(tx, ctx.jobId, `attempt ${ctx.attempt}`));
        throw new Error('boom');
      },
    });
    const failId = await enqueue(failing, {});
    expect(await run([failing])).toBe(1);
    expect(await jobRow(failId)).toMatchObject({ status: 'queued' });
    expect(await marks(failId)).toEqual(['attempt 1']);
    expect(await run([failing])).toBe(1);
    expect(await jobRow(failId)).toMatchObject({ status: 'dead' });
    expect(await marks(failId)).toEqual(['attempt 1', 'attempt 2', 'dead after 2: boom']);
  });

  it('drops the settle writes of a worker that lost the job to another', async () => {
    const job = defineJob({
      type: uniqueType('settle-lost'),
      schema: z.object({}),
      handler: async (ctx) => {
        ctx.settle((tx) => mark(tx, ctx.jobId, 'late'));
        await withSystem(t.database.db, (tx) =>
          tx.execute(sql`UPDATE jobs SET claimed_by = 'other/2', lease_until = now() + interval '5 minutes'
                          WHERE id = ${ctx.jobId}`),
        );
      },
    });
    const id = await enqueue(job, {});
    expect(await run([job])).toBe(1);
    expect(await jobRow(id)).toMatchObject({ status: 'running', claimed_by: 'other/2' });
    expect(await marks(id)).toEqual([]);
  });
});

describe('per-key concurrency (maxConcurrentPerKey)', () => {
  /** A type whose jobs of the given keys hold until released; tracks the most running at once per key. */
  function heldJob(cap: number, held: Set<string>) {
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const done: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const job = defineJob({
      type: uniqueType('keyed'),
      schema: z.object({ key: z.string().nullable() }),
      maxConcurrentPerKey: cap,
      handler: async (_ctx, { key }) => {
        const k = key ?? '(none)';
        running.set(k, (running.get(k) ?? 0) + 1);
        peak.set(k, Math.max(peak.get(k) ?? 0, running.get(k) ?? 0));
        if (held.has(k)) await released;
        else await new Promise((r) => setTimeout(r, 10));
        running.set(k, (running.get(k) ?? 0) - 1);
        done.push(k);
      },
    });
    const enqueueKeyed = (key: string | null, n: number) =>
      withSystem(t.database.db, async (tx) => {
        for (let i = 0; i < n; i++) {
          await enqueueJob(tx, job, { key }, { workspaceId: null, concurrencyKey: key ?? undefined });
        }
      });
    return { job, peak, done, release, enqueueKeyed };
  }

  it('caps running jobs per key across workers; other keys and keyless jobs are not held up', async () => {
    const h = heldJob(2, new Set(['slow']));
    await h.enqueueKeyed('slow', 6);
    await h.enqueueKeyed('fast', 3);
    await h.enqueueKeyed(null, 3);
    const workers: Worker[] = [
      await startJobWorker({ deps: t.app.atrium, log: t.app.log, jobs: [h.job], name: 'a', pollMs: 50 }),
      await startJobWorker({ deps: t.app.atrium, log: t.app.log, jobs: [h.job], name: 'b', pollMs: 50 }),
    ];
    try {
      await waitFor(() => h.done.filter((k) => k !== 'slow').length === 6, 10_000);
      await new Promise((r) => setTimeout(r, 300)); // more polls: the cap must still hold
      const [row] = await withSystem(t.database.db, (tx) =>
        queryRows<{ n: number }>(
          tx,
          sql`SELECT count(*)::int AS n FROM jobs WHERE type = ${h.job.type} AND status = 'running'`,
        ),
      );
      expect(row.n).toBe(2);
      expect(h.peak.get('slow')).toBe(2);
      h.release();
      await waitFor(() => h.done.length === 12, 10_000);
      expect(h.peak.get('slow')).toBe(2);
    } finally {
      h.release();
      await Promise.all(workers.map((w) => w.stop()));
    }
  });

  it('busy keys share the slots fairly, so slow keys cannot starve another one', async () => {
    // The slow keys are enqueued first: by due time alone they would take all 4 slots.
    const h = heldJob(4, new Set(['slowA', 'slowB']));
    await h.enqueueKeyed('slowA', 4);
    await h.enqueueKeyed('slowB', 4);
    await h.enqueueKeyed('fast', 5);
    const worker = await startJobWorker({
      deps: t.app.atrium,
      log: t.app.log,
      jobs: [h.job],
      concurrency: 4,
      pollMs: 50,
    });
    try {
      await waitFor(() => h.done.filter((k) => k === 'fast').length === 5, 10_000);
      expect((h.peak.get('slowA') ?? 0) + (h.peak.get('slowB') ?? 0)).toBeLessThanOrEqual(4);
      expect(h.peak.get('slowA')).toBeLessThanOrEqual(2);
      h.release();
      await waitFor(() => h.done.length === 13, 10_000);
    } finally {
      h.release();
      await worker.stop();
    }
  });

  it('a keyed job whose worker died is taken over and its stale lease does not count against the cap', async () => {
    const h = heldJob(1, new Set());
    await h.enqueueKeyed('k', 1);
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE jobs SET status = 'running', attempts = 1, claimed_by = 'crashed/3',
                            lease_until = now() - interval '1 second' WHERE type = ${h.job.type}`),
    );
    await h.enqueueKeyed('k', 1);
    // Cap 1: the taken-over job (due first) runs now, the second on the next pass.
    expect(await run([h.job])).toBe(1);
    expect(await run([h.job])).toBe(1);
    expect(h.done).toEqual(['k', 'k']);
  });
});

describe('high-volume types: key eligibility, batch load, settleMany, cancellation, set-based enqueue', () => {
  const statusOf = async (type: string) =>
    withSystem(t.database.db, (tx) =>
      queryRows<{ n: number; status: string; attempts: number }>(
        tx,
        sql`SELECT (payload->>'n')::int AS n, status, attempts FROM jobs WHERE type = ${type} ORDER BY 1`,
      ),
    );

  it('jobs of a key that is not eligible wait without using attempts; other keys run', async () => {
    // The key is closed while a "gate" row exists (a job of a type no worker here runs).
    const gateType = uniqueType('gate');
    const gate = defineJob({ type: gateType, schema: z.object({ key: z.string() }), handler: async () => {} });
    const ran: string[] = [];
    const job = defineJob({
      type: uniqueType('eligible'),
      schema: z.object({ n: z.number(), key: z.string() }),
      maxConcurrentPerKey: 4,
      keyEligible: (key) =>
        sql`NOT EXISTS (SELECT 1 FROM jobs g WHERE g.type = ${gateType} AND g.payload->>'key' = ${key})`,
      handler: async (_ctx, { key }) => {
        ran.push(key);
      },
    });
    await enqueue(gate, { key: 'closed' });
    await withSystem(t.database.db, async (tx) => {
      for (const [n, key] of [
        [1, 'closed'],
        [2, 'closed'],
        [3, 'open'],
      ] as const) {
        await enqueueJob(tx, job, { n, key }, { workspaceId: null, concurrencyKey: key });
      }
    });
    expect(await run([job])).toBe(1);
    expect(await run([job])).toBe(0);
    expect(ran).toEqual(['open']);
    expect(await statusOf(job.type)).toEqual([
      { n: 1, status: 'queued', attempts: 0 },
      { n: 2, status: 'queued', attempts: 0 },
      { n: 3, status: 'done', attempts: 1 },
    ]);
    await withSystem(t.database.db, (tx) => tx.execute(sql`DELETE FROM jobs WHERE type = ${gateType}`));
    expect(await run([job])).toBe(2);
    expect(ran.sort()).toEqual(['closed', 'closed', 'open']);
  });

  it('loads the claimed batch once; a job without an entry ends done without running', async () => {
    const loads: number[] = [];
    const seen: string[] = [];
    const job = defineJob({
      type: uniqueType('load'),
      schema: z.object({ n: z.number() }),
      load: async (_tx, jobs) => {
        loads.push(jobs.length);
        return new Map(jobs.filter((j) => j.payload.n % 2 === 0).map((j) => [j.id, `loaded ${j.payload.n}`]));
      },
      handler: async (_ctx, _payload, loaded: string) => {
        seen.push(loaded);
      },
    });
    for (let n = 0; n < 4; n++) await enqueue(job, { n });
    expect(await run([job])).toBe(4);
    expect(loads).toEqual([4]);
    expect(seen.sort()).toEqual(['loaded 0', 'loaded 2']);
    expect((await statusOf(job.type)).map((r) => r.status)).toEqual(['done', 'done', 'done', 'done']);
  });

  it('hands a batch’s records to settleMany at once, marking a lost claim’s as not held; keepDone: false deletes', async () => {
    const calls: SettledRecord<string>[][] = [];
    let arrived = 0;
    let allArrived!: () => void;
    const together = new Promise<void>((resolve) => {
      allArrived = resolve;
    });
    const job = defineJob({
      type: uniqueType('records'),
      schema: z.object({ n: z.number() }),
      keepDone: false,
      settleMany: async (_tx, records: SettledRecord<string>[]) => {
        calls.push(records);
      },
      handler: async (ctx: JobContext<string>, { n }) => {
        ctx.record(`r${n}`);
        if (n === 2) {
          // Another worker takes this one over while it runs.
          await withSystem(t.database.db, (tx) =>
            tx.execute(sql`UPDATE jobs SET claimed_by = 'other/9' WHERE id = ${ctx.jobId}`),
          );
        }
        // All three finish together, so their outcomes share one batch.
        if (++arrived === 3) allArrived();
        await together;
      },
    });
    for (let n = 0; n < 3; n++) await enqueue(job, { n });
    expect(await run([job])).toBe(3);
    expect(calls).toHaveLength(1);
    expect(calls[0].map((r) => [r.value, r.held]).sort()).toEqual([
      ['r0', true],
      ['r1', true],
      ['r2', false],
    ]);
    // Done rows are gone; the taken-over one is still the other worker's.
    expect(await statusOf(job.type)).toEqual([{ n: 2, status: 'running', attempts: 1 }]);
  });

  it('a failing write fails only its own job’s outcome, not the others’ in its batch', async () => {
    const job = defineJob({
      type: uniqueType('bad-write'),
      schema: z.object({ n: z.number() }),
      handler: async (ctx, { n }) => {
        ctx.settle(async (tx) => {
          if (n === 1) await tx.execute(sql`SELECT 1 / 0`);
        });
      },
    });
    for (let n = 0; n < 3; n++) await enqueue(job, { n });
    expect(await run([job])).toBe(3);
    // Its outcome is not recorded: the lease runs out and the job runs again.
    expect((await statusOf(job.type)).map((r) => r.status)).toEqual(['done', 'running', 'done']);
  });

  it('cancelling drops a running job’s outcome and keeps a queued one from running', async () => {
    const ran: number[] = [];
    const written: number[] = [];
    const job = defineJob({
      type: uniqueType('cancel'),
      schema: z.object({ n: z.number() }),
      settleMany: async (_tx, records: SettledRecord<number>[]) => {
        for (const r of records) if (r.held) written.push(r.value);
      },
      handler: async (ctx: JobContext<number>, { n }) => {
        ran.push(n);
        ctx.record(n);
        if (n === 1) {
          await withSystem(t.database.db, (tx) => cancelJobs(tx, job, sql`payload->>'n' IN ('1', '2')`));
        }
      },
    });
    await enqueue(job, { n: 1 });
    expect(await run([job])).toBe(1);
    await enqueue(job, { n: 2 });
    await withSystem(t.database.db, (tx) => cancelJobs(tx, job, sql`payload->>'n' = '2'`));
    expect(await run([job])).toBe(0);
    expect(ran).toEqual([1]);
    expect(written).toEqual([]);
    expect((await statusOf(job.type)).map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('enqueues set-based with insertJobsSql (deduplicated), and stores no key for a type without a cap', async () => {
    const job = defineJob({ type: uniqueType('bulk'), schema: z.object({ n: z.number() }), handler: async () => {} });
    const insert = () =>
      withSystem(t.database.db, (tx) =>
        queryRows<{ id: string }>(
          tx,
          sql`WITH added AS (${insertJobsSql(
            job,
            sql`SELECT NULL::text, jsonb_build_object('n', n), 'bulk-' || n, NULL::text FROM generate_series(1, 3) n`,
          )}) SELECT id FROM added`,
        ),
      );
    expect(await insert()).toHaveLength(3);
    expect(await insert()).toHaveLength(0);
    const keyless = await withSystem(t.database.db, (tx) =>
      enqueueJob(tx, job, { n: 9 }, { workspaceId: null, concurrencyKey: 'ignored' }),
    );
    const [row] = await withSystem(t.database.db, (tx) =>
      queryRows<{ concurrency_key: string | null }>(tx, sql`SELECT concurrency_key FROM jobs WHERE id = ${keyless}`),
    );
    expect(row.concurrency_key).toBeNull();
    expect(await run([job])).toBe(4);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}
