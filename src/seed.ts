import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { DEMO_USERS } from './modules/identity/index.js';
import { MODULES } from './modules/index.js';
import { queryRows, withSystem } from './platform/db/tenant.js';
import type { SeedState } from './platform/module.js';

export { DEMO_PASSWORD, DEMO_USERS, lockPublishedPasswords } from './modules/identity/index.js';

/**
 * The row of scheduler_leases (the platform's table of named leases) that records a demo seed in this database:
 * written before the demo's first row, its last_run_at set after its last one. Seeding is many transactions (each
 * module's, each service call's), so a start stopped in between (killed, a crash, the machine off) leaves part of
 * the demo; this row is how the next start knows. Its lease never ends, so no periodic job can take the name.
 */
const DEMO_SEED = 'demo-seed';

/** A database is new when it has no workspace and no demo seed ever began in it. */
export async function isEmpty(app: FastifyInstance): Promise<boolean> {
  const rows = await withSystem(app.atrium.db, (tx) =>
    queryRows<{ n: number }>(
      tx,
      sql`SELECT (SELECT count(*) FROM workspaces)::int + (SELECT count(*) FROM scheduler_leases WHERE name = ${DEMO_SEED})::int AS n`,
    ),
  );
  return Number(rows[0]?.n ?? 0) === 0;
}

/** Whether this start creates the demo organization: on a new database, and never in production. */
export function shouldSeedDemo(config: Config, databaseEmpty: boolean): boolean {
  if (config.env === 'production' || !databaseEmpty) return false;
  return config.seedDemo === 'auto' ? !config.databaseUrl : config.seedDemo;
}

export type DemoSeedState =
  /** No demo seed began in this database (or it began before seeds were recorded). */
  | { kind: 'none' }
  | { kind: 'finished' }
  /**
   * Begun and never finished: part of the demo is missing. `onlyDemo`: the database holds nothing else (at most
   * one organization, all workspaces in it, only demo accounts, no session and no API token ever used: nobody
   * has used it).
   */
  | { kind: 'unfinished'; onlyDemo: boolean };

/** What became of the demo seed in this database. */
export async function demoSeedState(app: FastifyInstance): Promise<DemoSeedState> {
  const demoEmails = sql.join(
    DEMO_USERS.map((u) => sql`${u.email.toLowerCase()}`),
    sql`, `,
  );
  const rows = await withSystem(app.atrium.db, (tx) =>
    queryRows<{ finished: boolean; others: number }>(
      tx,
      sql`SELECT last_run_at IS NOT NULL AS finished,
                 (SELECT count(*) FROM organizations) > 1
                 OR EXISTS (SELECT 1 FROM workspaces w
                             WHERE w.organization_id IS DISTINCT FROM (SELECT min(id) FROM organizations))
                 OR EXISTS (SELECT 1 FROM users WHERE lower(email) NOT IN (${demoEmails}))
                 OR EXISTS (SELECT 1 FROM sessions)
                 OR EXISTS (SELECT 1 FROM api_tokens WHERE last_used_at IS NOT NULL) AS others
            FROM scheduler_leases WHERE name = ${DEMO_SEED}`,
    ),
  );
  const row = rows[0];
  if (!row) return { kind: 'none' };
  if (row.finished) return { kind: 'finished' };
  return { kind: 'unfinished', onlyDemo: !row.others };
}

/** The demo organization: an Enterprise and a Standard workspace, admins, members, providers, patients. */
export async function seedDemo(app: FastifyInstance) {
  const deps = app.atrium;
  // Its accounts' password is published: production never creates an account anyone can sign in to.
  if (deps.config.env === 'production') {
    throw new Error('The demo organization is never created in production (its password is published)');
  }
  // Recorded before the first row of the demo (and only once: two instances starting on one new database do not
  // both seed it).
  const begun = await withSystem(deps.db, (tx) =>
    queryRows(
      tx,
      sql`INSERT INTO scheduler_leases (name, holder, lease_until) VALUES (${DEMO_SEED}, 'demo seed', 'infinity')
          ON CONFLICT (name) DO NOTHING RETURNING name`,
    ),
  );
  if (begun.length === 0) throw new Error('A demo seed already began in this database: the demo is not created twice');
  // Each module seeds its part, in list order (identity's organization and people come first).
  const state: SeedState = {};
  for (const module of MODULES) await module.seed?.(app, state);
  await withSystem(deps.db, (tx) =>
    tx.execute(sql`UPDATE scheduler_leases SET last_run_at = now() WHERE name = ${DEMO_SEED}`),
  );
  return state;
}
