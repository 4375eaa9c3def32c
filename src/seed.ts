import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { MODULES } from './modules/index.js';
import { queryRows, withSystem } from './platform/db/tenant.js';
import type { SeedState } from './platform/module.js';

export { DEMO_PASSWORD, DEMO_USERS, lockPublishedPasswords } from './modules/identity/index.js';

export async function isEmpty(app: FastifyInstance): Promise<boolean> {
  const rows = await withSystem(app.atrium.db, (tx) =>
    queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM workspaces`),
  );
  return Number(rows[0]?.n ?? 0) === 0;
}

/** Whether this start creates the demo organization: on a new database, and never in production. */
export function shouldSeedDemo(config: Config, databaseEmpty: boolean): boolean {
  if (config.env === 'production' || !databaseEmpty) return false;
  return config.seedDemo === 'auto' ? !config.databaseUrl : config.seedDemo;
}

/** The demo organization: an Enterprise and a Standard workspace, admins, members, providers, patients. */
export async function seedDemo(app: FastifyInstance) {
  const deps = app.atrium;
  // Its accounts' password is published: production never creates an account anyone can sign in to.
  if (deps.config.env === 'production') {
    throw new Error('The demo organization is never created in production (its password is published)');
  }
  // Each module seeds its part, in list order (identity's organization and people come first).
  const state: SeedState = {};
  for (const module of MODULES) await module.seed?.(app, state);
  return state;
}
