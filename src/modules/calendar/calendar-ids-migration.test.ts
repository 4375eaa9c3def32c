// Migration 0033 (a calendar's id is stable per workspace, provider, account and provider calendar) on a
// database as the release before left it: calendars whose connection is gone are marked disconnected, and
// of two rows for one calendar (a sync that finished after a disconnect) the connected one is kept.
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyPglite } from '../../../test/helpers/db-template.js';
import { migrationsUpTo, removeMigrationCopies } from '../../../test/helpers/migrations.js';

const TAG = '0033_calendar_ids_survive_disconnect';
afterAll(removeMigrationCopies);

describe('migration 0033: calendar ids survive a disconnect', () => {
  it('marks calendars of gone connections disconnected and keeps one row per calendar', async () => {
    const client = await createEmptyPglite();
    const db = drizzle({ client });
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, false) });
    await client.exec(`INSERT INTO workspaces (id, name, tier) VALUES ('ws_a', 'A', 'advanced')`);
    await client.exec(`INSERT INTO oauth_connections (workspace_id, id, provider, account_email, user_id, access_token_enc)
                       VALUES ('ws_a', 'oac_live', 'google', 'a@x.test', 'usr_1', '')`);
    const calendar = (id: string, connection: string, account: string, providerId: string, created: string) =>
      client.query(
        `INSERT INTO calendar_calendars (workspace_id, id, connection_id, provider, provider_calendar_id, name,
                                         account_email, host_user_id, created_at)
         VALUES ('ws_a', $1, $2, 'google', $3, 'Cal', $4, 'usr_1', $5)`,
        [id, connection, providerId, account, created],
      );
    await calendar('cal_live', 'oac_live', 'a@x.test', 'primary', '2026-01-02T00:00:00Z');
    // Left behind by a sync of the account's earlier connection, after it was disconnected.
    await calendar('cal_stale', 'oac_old', 'a@x.test', 'primary', '2026-01-01T00:00:00Z');
    // Another account's calendar whose connection is gone: kept, marked.
    await calendar('cal_gone', 'oac_gone', 'b@x.test', 'primary', '2026-01-01T00:00:00Z');

    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, true) });
    const rows = await client.query<{ id: string; disconnected: boolean }>(
      `SELECT id, disconnected_at IS NOT NULL AS disconnected FROM calendar_calendars ORDER BY id`,
    );
    expect(rows.rows).toEqual([
      { id: 'cal_gone', disconnected: true },
      { id: 'cal_live', disconnected: false },
    ]);
    const index = await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'calendar_calendars_account_idx'`);
    expect(index.rows).toHaveLength(1);
    // The previous release's index stays for its instances still running during a rolling deploy.
    const old = await client.query(`SELECT 1 FROM pg_indexes WHERE indexname = 'calendar_calendars_provider_idx'`);
    expect(old.rows).toHaveLength(1);
    await client.close();
  });
});
