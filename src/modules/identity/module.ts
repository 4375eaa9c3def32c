import { registerPrincipalResolver } from '../../platform/auth/principals.js';
import { defineModule } from '../../platform/module.js';
import { identityPrincipals } from './principals.js';
import { identityRoutes } from './routes.js';
import { seedIdentity } from './seed.js';
import * as tables from './tables.js';

export const identityModule = defineModule({
  name: 'identity',
  tags: [
    { name: 'auth', description: 'Sign-in, sessions, the caller, members and API tokens' },
    { name: 'operator', description: 'Organizations and workspaces (ATRIUM_OPERATOR_TOKEN only)' },
  ],
  routes: identityRoutes,
  tables,
  // The platform authenticates requests; identity tells it whose credential a hash is.
  init: () => registerPrincipalResolver(identityPrincipals),
  seed: seedIdentity,
});
