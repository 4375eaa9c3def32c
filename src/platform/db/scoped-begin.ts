// One round trip instead of two to open a tenant transaction on the PostgreSQL server: the pool's
// clients send `BEGIN` and the transaction-local settings (role, app.workspace_id) as one simple
// query. Every request opens such a transaction, and on a busy machine each round trip costs a
// write and a read system call on both ends (issue 9: profile of GET /me).
import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

export interface TransactionScope {
  /** A role name we define (atrium_app / atrium_system), never user input. */
  role: string;
  workspaceId: string;
}

const scopes = new AsyncLocalStorage<TransactionScope>();
const ROLE_NAME = /^[a-z_][a-z0-9_]*$/;

/** Databases whose `transaction()` applies the scope within BEGIN (see ScopedBeginPool). */
export const scopedBeginDatabases = new WeakSet<object>();

/** Runs `fn` so that the transaction it opens starts with the scope's settings already applied. */
export function runInScope<T>(scope: TransactionScope, fn: () => Promise<T>): Promise<T> {
  if (!ROLE_NAME.test(scope.role)) throw new Error(`Invalid role name ${scope.role}`);
  return scopes.run(scope, fn);
}

type QueryFn = pg.PoolClient['query'];

function scopedBegin(client: pg.ClientBase, scope: TransactionScope): string {
  return (
    `begin; select set_config('role', '${scope.role}', true), ` +
    `set_config('app.workspace_id', ${client.escapeLiteral(scope.workspaceId)}, true)`
  );
}

/** Makes every connection of `pool` rewrite Drizzle's bare `begin` into BEGIN + settings when a scope is active. */
export function enableScopedBegin(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((config: unknown, ...rest: unknown[]) => {
      const scope = scopes.getStore();
      if (scope && typeof config === 'object' && config !== null && (config as { text?: string }).text === 'begin') {
        const values = rest[0];
        if (!Array.isArray(values) || values.length === 0) {
          return original({ ...(config as object), text: scopedBegin(client, scope) }, ...rest);
        }
      }
      return original(config, ...rest);
    }) as QueryFn;
  });
}
