import { type SQL, sql } from 'drizzle-orm';
import type { Db, Tx } from './client.js';
import { runInScope, scopedBeginDatabases } from './scoped-begin.js';
import { APP_ROLE, SYSTEM_ROLE } from './security.js';

/**
 * The only way module code reaches tenant tables: one transaction, running as the RLS-bound
 * role with app.workspace_id set, so even a query that forgets its WHERE clause sees one tenant.
 */
export function withTenant<T>(db: Db, ctx: { workspaceId: string }, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (scopedBeginDatabases.has(db)) {
    return runInScope({ role: APP_ROLE, workspaceId: ctx.workspaceId }, () => db.transaction((tx) => fn(tx as Tx)));
  }
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`SELECT set_config('role', ${APP_ROLE}, true), set_config('app.workspace_id', ${ctx.workspaceId}, true)`,
    );
    return fn(tx as Tx);
  });
}

/** Cross-tenant platform work (credential lookup, operator API, workers). Use sparingly and say why. */
export function withSystem<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (scopedBeginDatabases.has(db)) {
    return runInScope({ role: SYSTEM_ROLE, workspaceId: '' }, () => db.transaction((tx) => fn(tx as Tx)));
  }
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT set_config('role', ${SYSTEM_ROLE}, true), set_config('app.workspace_id', '', true)`);
    return fn(tx as Tx);
  });
}

/** Runs raw SQL and returns its rows (PGlite and node-postgres both answer `{ rows }`). */
export async function queryRows<T>(tx: Tx | Db, query: SQL): Promise<T[]> {
  const result = (await tx.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
