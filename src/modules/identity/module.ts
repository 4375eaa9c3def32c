import { registerPrincipalResolver } from '../../platform/auth/principals.js';
import { pruneRateLimits } from '../../platform/auth/rate-limit.js';
import { defineModule } from '../../platform/module.js';
import { registerMembershipCheck } from '../../platform/oauth/index.js';
import { identityPrincipals } from './principals.js';
import { identityRoutes } from './routes.js';
import { seedIdentity } from './seed.js';
import { holdMembership, passwordResetJob, RESET_WINDOW_MS } from './service.js';
import { pruneSessionsJob, queueSessionPruning } from './session-pruning.js';
import * as tables from './tables.js';

export const identityModule = defineModule({
  name: 'identity',
  tags: [
    { name: 'auth', description: 'Sign-in, sessions, the caller, members and API tokens' },
    { name: 'operator', description: 'Organizations and workspaces (ATRIUM_OPERATOR_TOKEN only)' },
  ],
  routes: identityRoutes,
  tables,
  jobTypes: [passwordResetJob, pruneSessionsJob],
  // The platform authenticates requests; identity tells it whose credential a hash is, and (OAuth
  // callbacks) whether the member who started connecting still is one.
  init: () => {
    registerPrincipalResolver(identityPrincipals);
    registerMembershipCheck(holdMembership);
  },
  seed: seedIdentity,
  schedules: [
    {
      // Sign-in and password-reset counters of addresses and accounts that stopped trying (else the table only grows).
      name: 'identity.prune-rate-limits',
      intervalMs: 15 * 60_000,
      // The longest window in use: password-reset counters live an hour, sign-in ones ATRIUM_SIGNIN_WINDOW.
      run: async (deps) =>
        void (await pruneRateLimits(deps.db, Math.max(deps.config.signIn.windowMs, RESET_WINDOW_MS))),
    },
    {
      // Sessions 30 days after they expired or were revoked (session-pruning.ts), on the durable job mechanism.
      name: 'identity.prune-sessions',
      intervalMs: 60 * 60_000,
      run: queueSessionPruning,
    },
  ],
});
