// The database's probes (contract §9): reachability, replication lag, and that every tenant table
// (every table with a workspace_id column) has row-level security enabled and forced.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { type CatalogQuery, TenantSecurityError, verifyTenantSecurity } from '../../platform/db/security.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import type { DependencyProbe } from '../../platform/module.js';
import { resolveObjectStore } from '../../platform/storage/store.js';

export const databaseProbes: DependencyProbe[] = [
  {
    id: 'database:reachability',
    feature: 'everything',
    slo: 'answers SELECT 1 within 100 ms',
    impact: 'Atrium is having trouble reaching its database: some actions may fail. We are on it.',
    async measure(deps) {
      const started = performance.now();
      await deps.db.execute(sql`SELECT 1`);
      const ms = Math.round((performance.now() - started) * 10) / 10;
      return { status: ms <= 100 ? 'pass' : 'warn', observedValue: ms, observedUnit: 'ms' };
    },
  },
  {
    id: 'database:replication-lag',
    feature: 'everything',
    slo: 'replicas within 10 s of the primary',
    async measure(deps) {
      if (deps.database.kind === 'pglite') {
        return {
          status: 'pass',
          observedValue: 0,
          observedUnit: 's',
          output: 'Embedded database (PGlite): no replicas',
        };
      }
      const [row] = await withSystem(deps.db, (tx) =>
        queryRows<{ standby: boolean; lag: number | null; replicas: number }>(
          tx,
          sql`SELECT pg_is_in_recovery() AS standby,
                     CASE WHEN pg_is_in_recovery()
                          THEN extract(epoch FROM now() - pg_last_xact_replay_timestamp())
                          ELSE (SELECT max(extract(epoch FROM replay_lag)) FROM pg_stat_replication) END AS lag,
                     (SELECT count(*)::int FROM pg_stat_replication) AS replicas`,
        ),
      );
      const lag = Number(row.lag ?? 0);
      const output = row.standby ? 'Connected to a standby' : `${row.replicas} replica(s) streaming`;
      return {
        status: lag <= 10 ? 'pass' : lag <= 60 ? 'warn' : 'fail',
        observedValue: Math.round(lag * 10) / 10,
        observedUnit: 's',
        output,
      };
    },
  },
  {
    id: 'database:rls-policies',
    feature: 'everything',
    slo: 'every tenant table has RLS enabled and forced, with its policies',
    async measure(deps) {
      // The same check the server runs before it starts (platform/db/security.ts), run again live.
      const query: CatalogQuery = (text) => withSystem(deps.db, (tx) => queryRows(tx, sql.raw(text)));
      try {
        await verifyTenantSecurity(query);
        return { status: 'pass', observedValue: 0, observedUnit: 'tables out of policy' };
      } catch (err) {
        if (!(err instanceof TenantSecurityError)) throw err;
        const problems = err.message
          .split('\n')
          .slice(1)
          .map((l) => l.trim());
        return {
          status: 'fail',
          observedValue: problems.length,
          observedUnit: 'tables out of policy',
          output: problems.join('; '),
        };
      }
    },
  },
];

/** Object storage: a small object written, read back and deleted, timed. */
export const storageProbe: DependencyProbe = {
  id: 'storage:write',
  feature: 'storage',
  slo: 'a write, read and delete of a small object within 200 ms (1 s on S3)',
  impact: 'Saving files may fail right now.',
  async measure(deps) {
    const { store, kind } = resolveObjectStore(deps.config);
    const key = `health/probe-${randomBytes(6).toString('hex')}`;
    const body = randomBytes(512);
    const started = performance.now();
    await store.put(key, body);
    const back = await store.get(key);
    await store.delete(key);
    const ms = Math.round((performance.now() - started) * 10) / 10;
    if (!back?.equals(body))
      return { status: 'fail', observedValue: ms, observedUnit: 'ms', output: 'The object read back differs' };
    return {
      status: ms <= (kind === 's3' ? 1_000 : 200) ? 'pass' : 'warn',
      observedValue: ms,
      observedUnit: 'ms',
      output: kind === 's3' ? `S3 bucket ${deps.config.s3?.bucket}` : 'local disk store',
    };
  },
};
