import { defineModule } from '../../platform/module.js';
import { mailRoutes } from './routes.js';
import * as tables from './tables.js';

export const mailModule = defineModule({
  name: 'mail',
  tags: [{ name: 'mail', description: 'Inbound mail: the workspace address, received messages, iMIP replies' }],
  routes: mailRoutes,
  tables,
});
