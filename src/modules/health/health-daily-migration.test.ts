// Migration 0046 adds the status page's daily rollup (health_daily) and fills it once from the probe results still
// kept: per probe and UTC day, the runs and the runs not failing, the figures the page computed from the checks.
// Runs the real migration files on a fresh embedded PostgreSQL, up to 0045, then 0046.
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyPglite } from '../../../test/helpers/db-template.js';
import { migrationsUpTo, removeMigrationCopies } from '../../../test/helpers/migrations.js';

const TAG = '0046_health_daily';
afterAll(removeMigrationCopies);

describe('migration 0046: the daily uptime rollup', () => {
  it('is filled from the kept checks, days cut in UTC whatever the session time zone', async () => {
    const client = await createEmptyPglite();
    const db = drizzle({ client });
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, false) });
    await client.exec(`
      INSERT INTO service_health_checks (id, run_id, component, measurement, status, observed_value, observed_unit, checked_at)
      VALUES ('c1', 'r1', 'storage', 'write', 'pass', '3', 'ms', now() - interval '3 days'),
             ('c2', 'r2', 'storage', 'write', 'fail', '0', 'n/a', now() - interval '3 days'),
             ('c3', 'r3', 'storage', 'write', 'warn', '300', 'ms', now() - interval '3 days'),
             ('c4', 'r1', 'ai', 'latency', 'fail', '503', 'http status', now() - interval '3 days'),
             ('c5', 'r4', 'storage', 'write', 'pass', '3', 'ms', date_trunc('day', now() AT TIME ZONE 'UTC') - interval '20 days' + interval '23 hours 30 minutes'),
             ('c6', 'r5', 'storage', 'write', 'fail', '0', 'n/a', now() - interval '120 days');
      SET timezone = 'Europe/Berlin';`);
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, true) });
    const rows = await client.query<{
      component: string;
      measurement: string;
      ago: number;
      runs: number;
      passing: number;
    }>(
      `SELECT component, measurement, (now() AT TIME ZONE 'UTC')::date - day AS ago, runs, passing
         FROM health_daily ORDER BY day, component`,
    );
    const threeDaysAgo = (
      await client.query<{ ago: number }>(
        `SELECT (now() AT TIME ZONE 'UTC')::date - ((now() - interval '3 days') AT TIME ZONE 'UTC')::date AS ago`,
      )
    ).rows[0].ago;
    expect(rows.rows).toEqual([
      // 23:30 UTC stays on its UTC day (in Berlin it is 00:30 the next day).
      { component: 'storage', measurement: 'write', ago: 20, runs: 1, passing: 1 },
      { component: 'ai', measurement: 'latency', ago: threeDaysAgo, runs: 1, passing: 0 },
      // A warning is no failure.
      { component: 'storage', measurement: 'write', ago: threeDaysAgo, runs: 3, passing: 2 },
    ]);
    await client.close();
  });
});
