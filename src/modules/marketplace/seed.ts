// Demo installs: Riverside Clinic has the incoming-mail spam filter (with mail:read), so the Mail
// page shows its labels on the demo's inbound mail.
import type { FastifyInstance } from 'fastify';
import type { SeedState } from '../../platform/module.js';
import { demoAdminContext } from '../identity/index.js';
import { install } from './service.js';

export async function seedMarketplace(app: FastifyInstance, state: SeedState): Promise<void> {
  const ctx = demoAdminContext(app, state, 'Riverside Clinic');
  await install(app.atrium, ctx, { slug: 'mail-spam-filter', scopes: ['mail:read'] });
}
