import { defineModule } from '../../platform/module.js';
import { marketplaceRoutes } from './routes.js';
import { seedMarketplace } from './seed.js';
import * as tables from './tables.js';

export const marketplaceModule = defineModule({
  name: 'marketplace',
  tags: [{ name: 'marketplace', description: 'The skill catalog, installs with opt-in scopes, private skills' }],
  routes: marketplaceRoutes,
  tables,
  seed: seedMarketplace,
});
