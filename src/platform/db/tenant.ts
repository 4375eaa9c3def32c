import { createHash } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { Db, Tx } from './client.js';
import { runInScope, scopedBeginDatabases } from './scoped-begin.js';
import { APP_ROLE, SYSTEM_ROLE } from './security.js';

/**
 * A statement to run last in each of a request's tenant transactions that make its outcome, keyed by the
 * request's context object: the Idempotency-Key claim of the request marks itself "committed" in the same
 * transaction as the request's first such write (platform/idempotency.ts), so a crash between that commit and
 * the recorded answer can never let a retry do the work a second time.
 */
export const commitMarks = new WeakMap<object, SQL>();

export interface TenantOptions {
  /**
   * `false`: this transaction is not part of the request's outcome, so it does not mark the request's
   * Idempotency-Key committed. Only for one that writes nothing but what the request may safely write again
   * when a retry after a crash runs it a second time: an audit row of a read or of a token's use, a refreshed
   * token or its lease, a record kept for that retry itself (a Zoom meeting made for a keyed create, a lease on
   * reserved units). Default `true`: a write whose kind is not named here makes the outcome, and a retry of a
   * request that made it is answered 409 `idempotency_outcome_unknown` instead of being run again.
   */
  outcome?: boolean;
}

async function withMark<T>(tx: Tx, ctx: object, options: TenantOptions, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const result = await fn(tx);
  const mark = options.outcome === false ? undefined : commitMarks.get(ctx);
  if (mark) await tx.execute(mark);
  return result;
}

/**
 * The only way module code reaches tenant tables: one transaction, running as the RLS-bound
 * role with app.workspace_id set, so even a query that forgets its WHERE clause sees one tenant.
 */
export function withTenant<T>(
  db: Db,
  ctx: { workspaceId: string },
  fn: (tx: Tx) => Promise<T>,
  options: TenantOptions = {},
): Promise<T> {
  if (scopedBeginDatabases.has(db)) {
    return runInScope({ role: APP_ROLE, workspaceId: ctx.workspaceId }, () =>
      db.transaction((tx) => withMark(tx as Tx, ctx, options, fn)),
    );
  }
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`SELECT set_config('role', ${APP_ROLE}, true), set_config('app.workspace_id', ${ctx.workspaceId}, true)`,
    );
    return withMark(tx as Tx, ctx, options, fn);
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

/**
 * Waits for, then holds until the transaction ends, the lock named `key` (a transaction-level
 * advisory lock): transactions taking the same key run their locked part one after another.
 */
export async function lockUntilCommit(tx: Tx, key: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`);
}

interface PreparingSession {
  prepareQuery(
    query: { sql: string; params: unknown[] },
    fields: undefined,
    name: string | undefined,
    isResponseInArrayMode: boolean,
  ): { execute(): Promise<unknown> };
}
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 256;

/**
 * `queryRows` for a hot statement of fixed shape: on the PostgreSQL server it runs as a named
 * prepared statement, so each pooled connection parses and plans it once instead of on every call
 * (for the direct-message send that was ~0.35 of its ~0.55 ms of server time). The name is derived
 * from the text, so the same statement always maps to the same name and a different one never
 * does. Only for statements whose text does not vary with the data (no IN lists of varying length)
 * and whose result columns are listed (a prepared `SELECT *` fails after a column is added). Past
 * MAX_NAMED_STATEMENTS distinct texts it falls back to unnamed statements, so a misuse cannot grow
 * every connection's statement cache without bound. On PGlite it is `queryRows`.
 */
export async function preparedRows<T>(tx: Tx, query: SQL): Promise<T[]> {
  const session = (tx as unknown as { session: PreparingSession }).session;
  const built = (
    tx as unknown as { dialect: { sqlToQuery(q: SQL): { sql: string; params: unknown[] } } }
  ).dialect.sqlToQuery(query);
  let name = statementNames.get(built.sql);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `atrium_${createHash('sha256').update(built.sql).digest('hex').slice(0, 24)}`;
    statementNames.set(built.sql, name);
  }
  const result = (await session.prepareQuery(built, undefined, name, false).execute()) as { rows: T[] };
  return result.rows;
}
