import { metaEmulator, telegramEmulator, twilioEmulator, viberEmulator } from '../../emulators/channels/routes.js';
import { defineModule } from '../../platform/module.js';
import { channelMonitors } from './monitors.js';
import { contactProfileJob } from './profiles.js';
import { channelRoutes } from './routes.js';
import { seedChannels } from './seed.js';
import { prunePendingStatuses } from './service.js';
import * as tables from './tables.js';

export const channelsModule = defineModule({
  name: 'channels',
  tags: [{ name: 'channels', description: 'Inbound messaging channels: connections, webhooks, the patient inbox' }],
  routes: channelRoutes,
  tables,
  monitors: channelMonitors,
  seed: seedChannels,
  // Names of Messenger and Instagram contacts, asked of Graph once (docs/channels.md, Contact names).
  jobTypes: [contactProfileJob],
  emulators: { telegram: telegramEmulator, meta: metaEmulator, viber: viberEmulator, twilio: twilioEmulator },
  schedules: [
    {
      // Delivery reports that waited an hour for a reply of ours that never came (docs/channels.md, Statuses).
      name: 'channels.prune-pending-statuses',
      intervalMs: 10 * 60_000,
      run: async (deps) => void (await prunePendingStatuses(deps)),
    },
  ],
});
