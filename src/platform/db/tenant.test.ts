import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import type { Database } from './client.js';
import { queryRows, withSystem, withTenant } from './tenant.js';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = testDb.database;
  await withSystem(database.db, async (tx) => {
    await tx.execute(sql`INSERT INTO workspaces (id, name, tier) VALUES ('ws_a', 'A', 'free'), ('ws_b', 'B', 'free')`);
    await tx.execute(
      sql`INSERT INTO patients (workspace_id, id, given_name, family_name) VALUES ('ws_a', 'pat_a', 'Ann', 'A'), ('ws_b', 'pat_b', 'Bob', 'B')`,
    );
    await tx.execute(
      sql`INSERT INTO users (id, email, name, password_hash) VALUES ('usr_a', 'a@x.test', 'A', 'scrypt$h'), ('usr_b', 'b@x.test', 'B', 'scrypt$h')`,
    );
    await tx.execute(
      sql`INSERT INTO memberships (workspace_id, user_id, role) VALUES ('ws_a', 'usr_a', 'admin'), ('ws_b', 'usr_b', 'admin')`,
    );
  });
});
afterAll(async () => testDb?.drop());

describe('tenant isolation in the database', () => {
  it('a query without tenant context sees no tenant rows', async () => {
    const rows = await queryRows(database.db, sql`SELECT id FROM patients`);
    expect(rows).toEqual([]);
    const role = await queryRows<{ r: string }>(database.db, sql`SELECT current_user AS r`);
    expect(role[0].r).toBe('atrium_app');
  });

  it('withTenant sees only its workspace, even with no WHERE clause', async () => {
    const rows = await withTenant(database.db, { workspaceId: 'ws_a' }, (tx) =>
      queryRows<{ id: string }>(tx, sql`SELECT id FROM patients`),
    );
    expect(rows.map((r) => r.id)).toEqual(['pat_a']);
  });

  it('withTenant cannot write rows of another workspace', async () => {
    await expect(
      withTenant(database.db, { workspaceId: 'ws_a' }, (tx) =>
        tx.execute(
          sql`INSERT INTO patients (workspace_id, id, given_name, family_name) VALUES ('ws_b', 'pat_x', 'X', 'X')`,
        ),
      ),
    ).rejects.toThrow();
    const updated = await withTenant(database.db, { workspaceId: 'ws_a' }, (tx) =>
      queryRows(tx, sql`UPDATE patients SET given_name = 'Hacked' WHERE id = 'pat_b' RETURNING id`),
    );
    expect(updated).toEqual([]);
  });

  it('users, workspaces and organizations are visible only through the current workspace, read-only', async () => {
    const a = { workspaceId: 'ws_a' };
    const users = await withTenant(database.db, a, (tx) => queryRows<{ id: string }>(tx, sql`SELECT id FROM users`));
    expect(users.map((u) => u.id)).toEqual(['usr_a']);
    const workspaces = await withTenant(database.db, a, (tx) =>
      queryRows<{ id: string }>(tx, sql`SELECT id FROM workspaces`),
    );
    expect(workspaces.map((w) => w.id)).toEqual(['ws_a']);
    await expect(
      withTenant(database.db, a, (tx) => tx.execute(sql`SELECT password_hash FROM users`)),
    ).rejects.toThrow();
    await expect(
      withTenant(database.db, a, (tx) => tx.execute(sql`UPDATE workspaces SET tier = 'enterprise'`)),
    ).rejects.toThrow();
    expect(await queryRows(database.db, sql`SELECT id FROM users`)).toEqual([]);
  });

  it('the tenant setting does not outlive its transaction', async () => {
    await withTenant(database.db, { workspaceId: 'ws_a' }, async () => undefined);
    expect(await queryRows(database.db, sql`SELECT id FROM patients`)).toEqual([]);
  });

  it('every table with workspace_id has row-level security enabled and forced', async () => {
    const rows = await withSystem(database.db, (tx) =>
      queryRows<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
        tx,
        sql`SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c
              JOIN information_schema.columns col ON col.table_name = c.relname AND col.column_name = 'workspace_id'
             WHERE col.table_schema = 'public' AND c.relkind = 'r'`,
      ),
    );
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      expect(row, row.relname).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true });
    }
  });

  it('the audit log refuses updates and deletes, even for the system role', async () => {
    await withTenant(database.db, { workspaceId: 'ws_a' }, (tx) =>
      tx.execute(
        sql`INSERT INTO audit_log (workspace_id, id, kind, data) VALUES ('ws_a', 'aud_1', 'admin_action', '{}')`,
      ),
    );
    await expect(withSystem(database.db, (tx) => tx.execute(sql`DELETE FROM audit_log`))).rejects.toThrow();
    await expect(withSystem(database.db, (tx) => tx.execute(sql`UPDATE audit_log SET kind = 'x'`))).rejects.toThrow();
    const left = await withSystem(database.db, (tx) => queryRows(tx, sql`SELECT id FROM audit_log`));
    expect(left).toHaveLength(1);
  });
});
