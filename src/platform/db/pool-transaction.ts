// Transactions over the request pool that always give their connection back.
//
// Drizzle's NodePgSession.transaction (drizzle-orm 0.45) takes a client from the pool and sends BEGIN before its
// try/finally: when BEGIN fails (the server dropped the connection: a failover, pg_terminate_backend, a network cut)
// the client is never released. Each such failure lost one of the pool's connections for good; once all were lost,
// every request needing the database waited for one forever (durability review: a burst of terminations under load
// hung the server with its 10 connections leaked, /livez still 200). Every transaction the app opens goes through
// `db.transaction()` (withTenant/withSystem), so replacing it on the pool's session is the one place to fix it.
import { sql, type TablesRelationalConfig } from 'drizzle-orm';
import { NodePgSession, NodePgTransaction } from 'drizzle-orm/node-postgres';
import type { PgDialect, PgTransactionConfig } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { isDatabaseUnavailable } from '../errors.js';

interface PoolSession {
  client: pg.Pool;
  dialect: PgDialect;
  schema: ConstructorParameters<typeof NodePgSession<Record<string, unknown>, TablesRelationalConfig>>[2];
  options: ConstructorParameters<typeof NodePgSession>[3];
  transaction: NodePgSession<Record<string, unknown>, TablesRelationalConfig>['transaction'];
}
type Transaction = NodePgTransaction<Record<string, unknown>, TablesRelationalConfig>;
/**
 * Makes `db.transaction()` of a Drizzle database over `pool` release its client in every case, and with the error
 * (so the pool destroys it instead of handing it to the next request) when BEGIN, ROLLBACK or any statement failed
 * because the connection is gone. Nested `tx.transaction()` (savepoints) is Drizzle's own, on the same client.
 */
export function releaseConnectionsAlways(db: object, pool: pg.Pool): void {
  const session = (db as { session: PoolSession }).session;
  if (session.client !== pool) throw new Error('releaseConnectionsAlways: this database does not run over that pool');
  session.transaction = async <T>(fn: (tx: Transaction) => Promise<T>, config?: PgTransactionConfig): Promise<T> => {
    // The tenant scope (role, workspace) is added to a bare `begin` only (scoped-begin.ts): a transaction with
    // options would run without it, so none is opened (no caller asks for one).
    if (config && Object.keys(config).length > 0) {
      throw new Error('Transaction options are not supported: the RLS scope is set by a bare BEGIN (scoped-begin.ts)');
    }
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      const txSession = new NodePgSession(client, session.dialect, session.schema, session.options);
      const tx: Transaction = new NodePgTransaction(session.dialect, txSession, session.schema);
      // Exactly `begin`: scoped-begin.ts recognises that text and adds the scope's settings.
      await tx.execute(sql`begin`).catch((err) => {
        broken = err;
        throw err;
      });
      try {
        const result = await fn(tx);
        // PostgreSQL answers COMMIT of a transaction in which a statement failed (and `fn` caught it) with a
        // ROLLBACK: nothing was saved, which the caller must not take for success.
        const committed = (await tx.execute(sql`commit`)) as unknown as { command?: string };
        if (committed.command === 'ROLLBACK') {
          throw new Error('The transaction was rolled back: a statement in it failed (and was caught)');
        }
        return result;
      } catch (error) {
        if (isDatabaseUnavailable(error)) broken = error as Error;
        // A rollback that fails leaves the connection in an unknown state: it is destroyed, and the caller is told
        // what failed first (the statement, not the rollback behind it).
        await tx.execute(sql`rollback`).catch((err) => {
          broken ??= err;
        });
        throw error;
      }
    } finally {
      client.release(broken);
    }
  };
}
