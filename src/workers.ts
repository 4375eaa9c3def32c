import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { startWebhookWorker } from './modules/webhooks/jobs/delivery-worker.js';
import { secretKeys } from './modules/webhooks/service.js';
import { withSystem } from './platform/db/tenant.js';
import { emulatorTransport, type MailTransport, smtpTransport, startMailWorker } from './platform/mail/mailer.js';
import type { Worker } from './platform/worker.js';

export interface Background {
  stop(): Promise<void>;
}

function mailTransportFor(app: FastifyInstance): MailTransport | undefined {
  const { config } = app.atrium;
  if (config.smtpUrl) return smtpTransport(config.smtpUrl);
  if (config.emulators) return emulatorTransport(app.atrium.selfUrl);
  return undefined;
}

/** Starts the background workers of this instance (each safe to run on every instance). */
export async function startBackground(app: FastifyInstance): Promise<Background> {
  const { config, database } = app.atrium;
  const workers: Worker[] = [];
  const transport = mailTransportFor(app);
  if (transport) {
    workers.push(await startMailWorker(database, transport, config.mailFrom, app.log, config.workerPollMs));
  } else {
    app.log.warn('No SMTP_URL and emulators are off: outgoing mail stays queued');
  }
  workers.push(
    await startWebhookWorker({
      database,
      log: app.log,
      webhooks: config.webhooks,
      keys: secretKeys(app.atrium),
      pollMs: config.workerPollMs,
    }),
  );
  app.atrium.scheduler.every({
    name: 'idempotency-keys.expire',
    intervalMs: 60 * 60 * 1000,
    run: async () => {
      await withSystem(app.atrium.db, (tx) =>
        tx.execute(sql`DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`),
      );
    },
  });
  return {
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
    },
  };
}
