import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import { runInScope, scopedBeginDatabases } from './scoped-begin.js';
import { queryRows, withSystem, withTenant } from './tenant.js';

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => testDb?.drop());

const settings = (tx: Parameters<Parameters<typeof withSystem>[1]>[0]) =>
  queryRows<{ role: string; ws: string }>(
    tx,
    sql`SELECT current_user AS role, current_setting('app.workspace_id', true) AS ws`,
  );

describe('tenant transactions open with their settings', () => {
  it('uses the one-round-trip BEGIN on the server only', () => {
    expect(scopedBeginDatabases.has(testDb.database.db)).toBe(testDb.database.kind === 'pg');
  });

  it('withTenant runs as the app role in its workspace, withSystem as the system role, and nothing leaks after', async () => {
    for (let i = 0; i < 3; i++) {
      const [tenant] = await withTenant(testDb.database.db, { workspaceId: `ws_scope_${i}` }, settings);
      expect(tenant).toEqual({ role: 'atrium_app', ws: `ws_scope_${i}` });
      const [system] = await withSystem(testDb.database.db, settings);
      expect(system).toEqual({ role: 'atrium_system', ws: '' });
    }
    // Outside any transaction the pooled connection is back to the app role with no workspace.
    const [bare] = await queryRows<{ role: string; ws: string | null }>(
      testDb.database.db,
      sql`SELECT current_user AS role, nullif(current_setting('app.workspace_id', true), '') AS ws`,
    );
    expect(bare).toEqual({ role: 'atrium_app', ws: null });
  });

  it('a workspace id with quotes is a value, never SQL', async () => {
    const hostile = "ws_x'); SELECT set_config('role', 'atrium_system', true); --";
    const [tenant] = await withTenant(testDb.database.db, { workspaceId: hostile }, settings);
    expect(tenant).toEqual({ role: 'atrium_app', ws: hostile });
  });

  it('parallel transactions keep their own scopes', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        withTenant(testDb.database.db, { workspaceId: `ws_par_${i}` }, async (tx) => {
          await new Promise((r) => setTimeout(r, (i % 3) * 5));
          return (await settings(tx))[0].ws;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 12 }, (_, i) => `ws_par_${i}`));
  });

  it('refuses a role name that is not an identifier', () => {
    expect(() => runInScope({ role: "x'; drop", workspaceId: '' }, async () => 1)).toThrow(/Invalid role/);
  });
});
