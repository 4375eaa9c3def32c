import { defineModule } from '../../platform/module.js';
import { healthRoutes } from './routes.js';

export const healthModule = defineModule({
  name: 'health',
  tags: [{ name: 'health', description: 'Liveness, readiness and Prometheus metrics (outside /api/v1)' }],
  rootRoutes: healthRoutes,
});
