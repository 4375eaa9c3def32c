import { measureAcceptance } from '../../platform/acceptance.js';
import { defineModule } from '../../platform/module.js';
import { mailRoutes } from './routes.js';
import { seedMail } from './seed.js';
import { classifyMailJob, INBOUND_SOURCE } from './service.js';
import * as tables from './tables.js';

export const mailModule = defineModule({
  name: 'mail',
  tags: [{ name: 'mail', description: 'Inbound mail: the workspace address, received messages, iMIP replies' }],
  routes: mailRoutes,
  tables,
  seed: seedMail,
  jobTypes: [classifyMailJob],
  monitors: [
    {
      id: 'mail:acceptance-rate',
      feature: 'mail',
      slo: '≥ 95 % of inbound messages accepted',
      impact: 'Incoming mail (lab results, invitation replies) may be delayed.',
      // Mail comes from one relay (one client network): a relay out of step is refused from one network, so
      // here one is enough to fail (anyone may still post a wrong secret to the inbound URL: docs/health.md).
      measure: (deps) => measureAcceptance(deps, INBOUND_SOURCE, deps.config.health.intervalMs, { minNetworks: 1 }),
    },
  ],
});
