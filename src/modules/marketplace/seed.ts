// Demo installs: Riverside Clinic has the incoming-mail spam filter (with mail:read), so the Mail
// page shows its labels on the demo's inbound mail.
import type { FastifyInstance } from 'fastify';
import type { RequestContext } from '../../platform/context.js';
import type { SeedState } from '../../platform/module.js';
import { demoTenancy } from '../identity/index.js';
import { install } from './service.js';

export async function seedMarketplace(app: FastifyInstance, state: SeedState): Promise<void> {
  const clinic = demoTenancy(state).workspaces['Riverside Clinic'];
  const ctx: RequestContext = {
    workspaceId: clinic.id,
    organizationId: demoTenancy(state).organization.id,
    tier: clinic.tier,
    userId: clinic.adminUserId,
    role: 'admin',
    isProvider: false,
    requestId: 'seed',
    log: app.log,
    via: 'system',
  };
  await install(app.atrium, ctx, { slug: 'mail-spam-filter', scopes: ['mail:read'] });
}
