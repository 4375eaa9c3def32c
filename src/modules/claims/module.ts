import { defineModule } from '../../platform/module.js';
import { claimRoutes } from './routes.js';
import * as tables from './tables.js';

export const claimsModule = defineModule({
  name: 'claims',
  tags: [{ name: 'claims', description: 'Insurance claims and their adjudication' }],
  routes: claimRoutes,
  tables,
});
