import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/client.js';
import { queryRows, withSystem } from '../db/tenant.js';

export interface PeriodicJob {
  name: string;
  intervalMs: number;
  run: () => Promise<void>;
}

/** How long a running job's lease lasts past its last heartbeat (a crashed instance's run is taken over after it). */
const RUN_LEASE_MS = 30_000;

/**
 * Periodic jobs that run once per interval across all instances: each tick, an instance tries to
 * move the job's lease forward; only the one whose UPDATE matched runs the job. While it runs, a
 * heartbeat keeps the lease (so no instance starts it again, however long it takes) and this instance
 * skips its own ticks for it; when the run ends, the lease is set to the run's start plus the interval
 * (or now, if the run took longer): the next run is one interval after this one started, and never
 * before it ended — one run, not a burst of the ticks it missed.
 */
export class Scheduler {
  private readonly holder = `inst_${randomUUID()}`;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<unknown>>();
  /** Names of the jobs this instance is running now. */
  private readonly inFlight = new Set<string>();
  private readonly runLeaseMs: number;
  private stopped = false;

  constructor(
    private readonly database: Database,
    private readonly log: FastifyBaseLogger,
    options: { runLeaseMs?: number } = {},
  ) {
    this.runLeaseMs = options.runLeaseMs ?? RUN_LEASE_MS;
  }

  every(job: PeriodicJob): void {
    const tick = () => {
      if (this.stopped || this.inFlight.has(job.name)) return;
      const run = this.runIfLeased(job).finally(() => this.running.delete(run));
      this.running.add(run);
    };
    // Ticks more often than the interval so a lease freed by a dead instance is taken over quickly.
    const timer = setInterval(tick, Math.max(50, Math.min(job.intervalMs, 5000) / 2));
    timer.unref();
    this.timers.add(timer);
    tick();
  }

  /** Returns true when this instance took the lease and ran the job. */
  async runIfLeased(job: PeriodicJob): Promise<boolean> {
    // This instance's previous run of the job is still going: not again beside it.
    if (this.inFlight.has(job.name)) return false;
    this.inFlight.add(job.name);
    try {
      let leased = false;
      try {
        leased = await this.acquire(job.name, job.intervalMs);
      } catch (err) {
        this.log.error({ err, job: job.name }, 'periodic job failed');
      }
      if (!leased) return false;
      await this.runHoldingLease(job);
      return true;
    } finally {
      this.inFlight.delete(job.name);
    }
  }

  private async runHoldingLease(job: PeriodicJob): Promise<void> {
    // Heartbeats one after another (never two at once), all done before the lease is handed back.
    let beat: Promise<void> = Promise.resolve();
    const heartbeat = setInterval(() => {
      beat = beat.then(() =>
        this.renew(job.name).then(
          (held) => {
            if (!held) this.log.error({ job: job.name }, 'periodic job lost its lease while running');
          },
          (err) => this.log.warn({ err, job: job.name }, 'renewing the lease of a periodic job failed'),
        ),
      );
    }, this.runLeaseMs / 3);
    heartbeat.unref();
    try {
      await job.run();
    } catch (err) {
      this.log.error({ err, job: job.name }, 'periodic job failed');
    } finally {
      clearInterval(heartbeat);
      await beat;
      await this.finish(job.name, job.intervalMs).catch((err) =>
        this.log.warn({ err, job: job.name }, 'recording the end of a periodic job failed'),
      );
    }
  }

  /** Takes the lease when it has run out; held for the run lease (at least), renewed by the heartbeat. */
  private async acquire(name: string, intervalMs: number): Promise<boolean> {
    const leaseSecs = Math.max(intervalMs, this.runLeaseMs) / 1000;
    const rows = await withSystem(this.database.db, (tx) =>
      queryRows(
        tx,
        sql`
        INSERT INTO scheduler_leases (name, holder, lease_until, last_run_at)
        VALUES (${name}, ${this.holder}, now() + make_interval(secs => ${leaseSecs}), now())
        ON CONFLICT (name) DO UPDATE
          SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until, last_run_at = now()
          WHERE scheduler_leases.lease_until <= now()
        RETURNING holder`,
      ),
    );
    return rows.length === 1;
  }

  /** Heartbeat: keeps the lease for another run lease while this instance still holds it. */
  private async renew(name: string): Promise<boolean> {
    const rows = await withSystem(this.database.db, (tx) =>
      queryRows(
        tx,
        sql`
        UPDATE scheduler_leases
          SET lease_until = greatest(lease_until, now() + make_interval(secs => ${this.runLeaseMs / 1000}))
          WHERE name = ${name} AND holder = ${this.holder}
        RETURNING holder`,
      ),
    );
    return rows.length === 1;
  }

  /** The run ended: the next one is due one interval after this one started, and not before now. */
  private async finish(name: string, intervalMs: number): Promise<void> {
    await withSystem(this.database.db, (tx) =>
      tx.execute(sql`
        UPDATE scheduler_leases
          SET lease_until = greatest(last_run_at + make_interval(secs => ${intervalMs / 1000}), now())
          WHERE name = ${name} AND holder = ${this.holder}`),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }
}
