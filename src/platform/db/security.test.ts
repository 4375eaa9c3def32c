import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '../../../test/helpers/db.js';
import { createPgliteFromTemplate } from '../../../test/helpers/db-template.js';
import { createAppPool, openDatabase } from './client.js';
import { verifyTenantSecurity } from './security.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

// One migrated PGlite as the owner, shared by the tests below (each adds and drops its own table).
let owner: PGlite | undefined;
async function pgliteOwner(): Promise<PGlite> {
  if (!owner) {
    const client = await createPgliteFromTemplate();
    cleanups.push(() => client.close());
    owner = client;
  }
  return owner;
}

const verify = (client: PGlite) => verifyTenantSecurity(async <T>(text: string) => (await client.query<T>(text)).rows);

describe('row-level security is applied by the migrations and verified at start', () => {
  it('a migrated database passes', async () => {
    await expect(verify(await pgliteOwner())).resolves.toBeUndefined();
  });

  it('refuses to start when a tenant table has no forced RLS, naming the table', async () => {
    const client = await pgliteOwner();
    await client.exec('CREATE TABLE jobs_sneaky (workspace_id text NOT NULL, id text NOT NULL)');
    await expect(openDatabase({ pglite: client })).rejects.toThrow(
      /table jobs_sneaky has no forced row-level security: add SELECT atrium_protect_tenant_table\('jobs_sneaky'\)/,
    );
    await client.exec('RESET ROLE; ALTER TABLE jobs_sneaky ENABLE ROW LEVEL SECURITY');
    await expect(verify(client)).rejects.toThrow(/table jobs_sneaky has no forced row-level security/);
    await client.exec('DROP TABLE jobs_sneaky');
  });

  it('refuses RLS without its policies, and atrium_protect_tenant_table fixes a table', async () => {
    const client = await pgliteOwner();
    await client.exec(
      'CREATE TABLE half_done (workspace_id text NOT NULL); ALTER TABLE half_done ENABLE ROW LEVEL SECURITY; ALTER TABLE half_done FORCE ROW LEVEL SECURITY',
    );
    await expect(verify(client)).rejects.toThrow(/table half_done lacks the policy tenant_isolation, system_access/);
    await client.exec(`SELECT atrium_protect_tenant_table('half_done')`);
    await expect(verify(client)).resolves.toBeUndefined();
    // …and the table then isolates tenants like the others.
    await client.exec(`INSERT INTO half_done VALUES ('ws_a'), ('ws_b')`);
    const seen = await client.transaction(async (tx) => {
      await tx.query(`SELECT set_config('role', 'atrium_app', true), set_config('app.workspace_id', 'ws_a', true)`);
      return (await tx.query<{ workspace_id: string }>('SELECT workspace_id FROM half_done')).rows;
    });
    expect(seen).toEqual([{ workspace_id: 'ws_a' }]);
    await client.exec('DROP TABLE half_done');
  });

  // Last: it leaves the shared database broken.
  it('refuses a directory table whose read policy was dropped', async () => {
    const client = await pgliteOwner();
    await client.exec('DROP POLICY tenant_read ON users');
    await expect(verify(client)).rejects.toThrow(/table users lacks the policy tenant_read/);
  });
});

describe.skipIf(!TEST_SERVER_URL)('start-up on the PostgreSQL server', () => {
  let testDb: TestDatabase;

  it('a second instance starts while another holds a lock on a tenant table (rolling deploy)', async () => {
    testDb = await createTestDatabase();
    cleanups.push(() => testDb.drop());
    const busy = new pg.Client({ connectionString: testDb.url });
    await busy.connect();
    cleanups.push(() => busy.end());
    // A long-running read: any ALTER TABLE on patients would wait behind it.
    await busy.query('BEGIN');
    await busy.query('LOCK TABLE patients IN ACCESS SHARE MODE');
    const started = Date.now();
    const opening = testDb.openAnother();
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('start blocked')), 5_000).unref());
    const another = await Promise.race([opening, timeout]);
    expect(another).toBeDefined();
    expect(Date.now() - started).toBeLessThan(5_000);
    await busy.query('ROLLBACK');
  });

  it('a pooled connection that cannot take the app role fails instead of running as the owner', async () => {
    const url = testDb?.url;
    expect(url).toBeDefined();
    const role = `atrium_nomember_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    cleanups.push(async () => {
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    });
    const asStranger = new URL(url as string);
    asStranger.username = role;
    const pool = createAppPool(asStranger.toString(), 2);
    cleanups.push(() => pool.end());
    await expect(pool.query('SELECT current_user')).rejects.toThrow(/permission denied to set role|atrium_app/);
    // The same pool, as a member, runs as the app role.
    const ok = createAppPool(url as string, 1);
    cleanups.push(() => ok.end());
    expect((await ok.query('SELECT current_user AS u')).rows[0].u).toBe('atrium_app');
  });
});
