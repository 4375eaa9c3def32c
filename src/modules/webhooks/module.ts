import { registerEventFanout } from '../../platform/events/events.js';
import { registerMailDeadLetterInbox } from '../../platform/mail/mailer.js';
import { defineModule } from '../../platform/module.js';
import { startWebhookWorker } from './jobs/delivery-worker.js';
import { sendHeldFailureMails } from './jobs/failure-mail-digest.js';
import { webhookRoutes } from './routes.js';
import { fanOutToWebhooks, postInboxNotice, secretKeys } from './service.js';
import * as tables from './tables.js';

export const webhooksModule = defineModule({
  name: 'webhooks',
  tags: [
    { name: 'webhooks', description: 'Outbound webhook endpoints, deliveries and replays (admins)' },
    { name: 'inbox', description: 'The workspace inbox' },
  ],
  routes: webhookRoutes,
  tables,
  // Delivery rows are written by the outbox in the publishing transaction (contract §7.2).
  init: () => {
    registerEventFanout(fanOutToWebhooks);
    // Mail given up after its retry window is reported in the workspace's inbox, beside dead webhooks.
    registerMailDeadLetterInbox(postInboxNotice);
  },
  jobs: [
    {
      name: 'webhooks.delivery',
      start: (app) =>
        startWebhookWorker({
          deps: app.atrium,
          log: app.log,
          webhooks: app.atrium.config.webhooks,
          keys: secretKeys(app.atrium),
        }),
    },
  ],
  schedules: [
    {
      // Dead letters held back from an admin's e-mail within the hour after one are mailed at its end
      // (docs/webhooks.md, Dead letters).
      name: 'webhooks.failure-mail-digest',
      intervalMs: 60_000,
      run: async (deps) => void (await sendHeldFailureMails(deps)),
    },
  ],
});
