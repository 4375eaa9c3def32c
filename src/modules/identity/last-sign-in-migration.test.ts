// Migration 0039 (sessions are pruned; a member's last sign-in is kept on the membership) on a database as the
// release before left it: each membership gets the newest of its sessions' times, the value GET /members
// showed until then; from then on a new or moved session sets it, whoever writes the row.
import { randomBytes } from 'node:crypto';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SERVER_URL } from '../../../test/helpers/db.js';
import { createEmptyPglite, withDatabase } from '../../../test/helpers/db-template.js';
import { migrationsUpTo, removeMigrationCopies } from '../../../test/helpers/migrations.js';

const TAG = '0039_session_pruning';
afterAll(removeMigrationCopies);

describe('migration 0039: last sign-in on the membership', () => {
  it('backfills each membership from its newest session; new and moved sessions keep it', async () => {
    const client = await createEmptyPglite();
    const db = drizzle({ client });
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, false) });
    await client.exec(`
      INSERT INTO workspaces (id, name, tier) VALUES ('ws_a', 'A', 'standard'), ('ws_b', 'B', 'standard');
      INSERT INTO users (id, email, name) VALUES ('usr_1', '1@x.test', 'One'), ('usr_2', '2@x.test', 'Two');
      INSERT INTO memberships (workspace_id, user_id, role) VALUES
        ('ws_a', 'usr_1', 'admin'), ('ws_b', 'usr_1', 'member'), ('ws_a', 'usr_2', 'member');
      INSERT INTO sessions (workspace_id, id, user_id, token_hash, created_at, expires_at, revoked_at) VALUES
        ('ws_a', 'ses_1', 'usr_1', 'h1', '2026-01-01T08:00:00Z', '2026-01-01T20:00:00Z', NULL),
        ('ws_a', 'ses_2', 'usr_1', 'h2', '2026-01-03T08:00:00Z', '2026-01-03T20:00:00Z', '2026-01-03T09:00:00Z'),
        ('ws_b', 'ses_3', 'usr_1', 'h3', '2026-01-02T08:00:00Z', '2026-01-02T20:00:00Z', NULL);`);

    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, true) });
    const lastSignIns = async () =>
      (
        await client.query<{ workspace_id: string; user_id: string; last: string | null }>(
          `SELECT workspace_id, user_id, to_char(last_sign_in_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS last
             FROM memberships ORDER BY workspace_id, user_id`,
        )
      ).rows;
    expect(await lastSignIns()).toEqual([
      { workspace_id: 'ws_a', user_id: 'usr_1', last: '2026-01-03T08:00' },
      { workspace_id: 'ws_a', user_id: 'usr_2', last: null },
      { workspace_id: 'ws_b', user_id: 'usr_1', last: '2026-01-02T08:00' },
    ]);

    // A session opened after the migration (also by an instance of the previous release) sets it…
    await client.exec(`INSERT INTO sessions (workspace_id, id, user_id, token_hash, created_at, expires_at)
                       VALUES ('ws_a', 'ses_4', 'usr_2', 'h4', '2026-02-01T08:00:00Z', '2026-02-01T20:00:00Z')`);
    // …one backdated never moves it back…
    await client.exec(`INSERT INTO sessions (workspace_id, id, user_id, token_hash, created_at, expires_at)
                       VALUES ('ws_a', 'ses_5', 'usr_2', 'h5', '2025-02-01T08:00:00Z', '2025-02-01T20:00:00Z')`);
    // …and a session moved to another workspace (switch-workspace) sets that one's to the time of the move.
    await client.exec(`UPDATE sessions SET workspace_id = 'ws_b' WHERE id = 'ses_2'`);
    const rows = await lastSignIns();
    expect(rows[1]).toEqual({ workspace_id: 'ws_a', user_id: 'usr_2', last: '2026-02-01T08:00' });
    const moved = await client.query<{ recent: boolean }>(
      `SELECT last_sign_in_at > now() - interval '1 minute' AS recent FROM memberships
        WHERE workspace_id = 'ws_b' AND user_id = 'usr_1'`,
    );
    expect(moved.rows).toEqual([{ recent: true }]);
    // Updates that move no session change nothing (a revocation).
    await client.exec(`UPDATE sessions SET revoked_at = now() WHERE id = 'ses_4'`);
    expect((await lastSignIns())[1].last).toBe('2026-02-01T08:00');
    const index = await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'sessions_ended_idx'`);
    expect(index.rows).toHaveLength(1);
    await client.close();
  });
});

describe.skipIf(!TEST_SERVER_URL)('migration 0039 on a server where the previous release still serves', () => {
  it('never queues behind a long read of memberships: it gives up after 5 s and succeeds once it can lock', async () => {
    const server = TEST_SERVER_URL as string;
    const name = `atrium_m0039_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const pool = new pg.Pool({ connectionString: withDatabase(server, name), max: 2 });
    // The database is dropped WITH (FORCE) at the end: a connection the pool is still closing then ends with
    // 57P01 ("terminating connection due to administrator command"), an error for no one (it failed a CI run once as
    // an unhandled error).
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    const reader = new pg.Client({ connectionString: withDatabase(server, name) });
    try {
      const db = drizzlePg({ client: pool });
      await migratePg(db, { migrationsFolder: migrationsUpTo(TAG, false) });
      // A running instance's long read (a report, a slow list) holds memberships.
      await reader.connect();
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM memberships');
      const started = Date.now();
      const refused = await migratePg(db, { migrationsFolder: migrationsUpTo(TAG, true) }).then(
        () => null,
        (err: { cause?: { code?: string }; code?: string }) => err.cause?.code ?? err.code ?? 'error',
      );
      const waited = Date.now() - started;
      expect(refused).toBe('55P03'); // lock_not_available: the start fails and is tried again
      expect(waited).toBeGreaterThanOrEqual(4_500);
      expect(waited).toBeLessThan(30_000);
      await reader.query('COMMIT');
      await migratePg(db, { migrationsFolder: migrationsUpTo(TAG, true) });
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM information_schema.columns
          WHERE table_name = 'memberships' AND column_name = 'last_sign_in_at'`,
      );
      expect(rows[0].n).toBe(1);
      // The timeout was the migration's own: later statements of the same run are not bound by it.
      const { rows: setting } = await pool.query('SHOW lock_timeout');
      expect(setting[0].lock_timeout).toBe('0');
    } finally {
      await reader.end().catch(() => {});
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }, 60_000);
});
