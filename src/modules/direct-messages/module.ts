import { defineModule } from '../../platform/module.js';
import { directMessageRoutes } from './routes.js';
import { seedDirectMessages } from './seed.js';
import * as tables from './tables.js';

export const directMessagesModule = defineModule({
  name: 'direct-messages',
  tags: [{ name: 'direct-messages', description: 'Staff messaging: threads, read receipts, live streams, search' }],
  routes: directMessageRoutes,
  tables,
  seed: seedDirectMessages,
});
