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

/**
 * Periodic jobs that run once per interval across all instances: each tick, an instance tries to
 * move the job's lease forward; only the one whose UPDATE matched runs the job.
 */
export class Scheduler {
  private readonly holder = `inst_${randomUUID()}`;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(
    private readonly database: Database,
    private readonly log: FastifyBaseLogger,
  ) {}

  every(job: PeriodicJob): void {
    const tick = () => {
      if (this.stopped) return;
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
    let leased = false;
    try {
      leased = await this.acquire(job.name, job.intervalMs);
      if (!leased) return false;
      await job.run();
    } catch (err) {
      this.log.error({ err, job: job.name }, 'periodic job failed');
    }
    return leased;
  }

  private async acquire(name: string, intervalMs: number): Promise<boolean> {
    const rows = await withSystem(this.database.db, (tx) =>
      queryRows(
        tx,
        sql`
        INSERT INTO scheduler_leases (name, holder, lease_until, last_run_at)
        VALUES (${name}, ${this.holder}, now() + make_interval(secs => ${intervalMs / 1000}), now())
        ON CONFLICT (name) DO UPDATE
          SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until, last_run_at = now()
          WHERE scheduler_leases.lease_until <= now()
        RETURNING holder`,
      ),
    );
    return rows.length === 1;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }
}
