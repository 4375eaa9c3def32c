import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { MODULES } from './modules/index.js';
import { flushAcceptance } from './platform/acceptance.js';
import { withSystem } from './platform/db/tenant.js';
import { type JobDefinition, pruneFinishedJobs, startJobWorker } from './platform/jobs/index.js';
import { mailTransportFor, sendMailJob } from './platform/mail/mailer.js';
import type { Worker } from './platform/worker.js';

export interface Background {
  stop(): Promise<void>;
}

/** Starts the background workers of this instance (each safe to run on every instance). */
export async function startBackground(app: FastifyInstance): Promise<Background> {
  const workers: Worker[] = [];
  // Every typed job of platform/jobs this instance can run: the platform's and each module's jobTypes.
  // biome-ignore lint/suspicious/noExplicitAny: definitions of any payload type
  const jobs: JobDefinition<any>[] = MODULES.flatMap((module) => module.jobTypes ?? []);
  if (mailTransportFor(app.atrium)) jobs.push(sendMailJob);
  else app.log.warn('No SMTP_URL and emulators are off: outgoing mail stays queued');
  workers.push(await startJobWorker({ deps: app.atrium, log: app.log, jobs }));
  app.atrium.scheduler.every({
    name: 'jobs.prune',
    intervalMs: 60 * 60 * 1000,
    run: () => pruneFinishedJobs(app.atrium),
  });
  for (const module of MODULES) {
    for (const job of module.jobs ?? []) workers.push(await job.start(app));
    for (const { name, intervalMs, run } of module.schedules ?? []) {
      const every = typeof intervalMs === 'function' ? intervalMs(app.atrium) : intervalMs;
      app.atrium.scheduler.every({ name, intervalMs: every, run: () => run(app.atrium) });
    }
  }
  app.atrium.scheduler.every({
    name: 'idempotency-keys.expire',
    intervalMs: 60 * 60 * 1000,
    run: async () => {
      await withSystem(app.atrium.db, (tx) =>
        tx.execute(sql`DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`),
      );
    },
  });
  // Every instance flushes its inbound acceptance counts (the health probes sum them over instances).
  const flusher = setInterval(() => {
    flushAcceptance(app.atrium).catch((err) => app.log.warn({ err }, 'flushing acceptance counts failed'));
  }, 5_000);
  flusher.unref();
  return {
    async stop() {
      clearInterval(flusher);
      await flushAcceptance(app.atrium).catch(() => undefined);
      await Promise.all(workers.map((w) => w.stop()));
    },
  };
}
