import { s3Emulator } from '../../emulators/s3/routes.js';
import { sweepAcceptance } from '../../platform/acceptance.js';
import { defineModule } from '../../platform/module.js';
import { recordRun, runProbes, sweep } from './monitor.js';
import { monitorRoutes } from './monitor-routes.js';
import { databaseProbes, storageProbe } from './probes.js';
import { healthRoutes } from './routes.js';
import * as tables from './tables.js';

export const healthModule = defineModule({
  name: 'health',
  tags: [
    {
      name: 'health',
      description: 'Liveness, readiness, Prometheus metrics; dependency probes, incidents and the health dashboard',
    },
  ],
  rootRoutes: healthRoutes,
  routes: monitorRoutes,
  tables,
  monitors: [...databaseProbes, storageProbe],
  // The object store's stand-in (S3 API with SigV4), for pointing ATRIUM_S3_ENDPOINT at.
  emulators: { s3: s3Emulator },
  schedules: [
    {
      name: 'health.probes',
      intervalMs: (deps) => deps.config.health.intervalMs,
      run: async (deps) => recordRun(deps, await runProbes(deps, deps.monitors)),
    },
    {
      name: 'health.sweep',
      intervalMs: 60 * 60_000,
      run: async (deps) => {
        await sweep(deps);
        await sweepAcceptance(deps);
      },
    },
  ],
});
