import { defineModule } from '../../platform/module.js';
import { auditRoutes } from './routes.js';

export const auditModule = defineModule({
  name: 'audit',
  tags: [{ name: 'audit', description: 'The append-only trail of sensitive actions (admins)' }],
  routes: auditRoutes,
});
