// Migration 0041 gives inbox items a handled state. Items already there are open, except dead letters that were
// replayed before the release (their delivery is no longer dead, or a later dead letter of the same event to the
// same endpoint followed): those are marked replayed, by no one recorded. Runs the real migration files on a fresh
// embedded PostgreSQL, up to 0040, then 0041.
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyPglite } from '../../../test/helpers/db-template.js';
import { migrationsUpTo, removeMigrationCopies } from '../../../test/helpers/migrations.js';

const TAG = '0041_inbox_handled';
afterAll(removeMigrationCopies);

describe('migration 0041: inbox items get a handled state', () => {
  it('opens every item but the dead letters replayed before it', async () => {
    const client = await createEmptyPglite();
    const db = drizzle({ client });
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, false) });
    await client.exec(`
      INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type, state, attempts)
      VALUES ('ws_a', 'whk_1', 'evt_dead', 'patient.created', 'dead', 6),
             ('ws_a', 'whk_1', 'evt_replayed', 'patient.created', 'delivered', 1),
             ('ws_a', 'whk_1', 'evt_pending', 'patient.created', 'pending', 0),
             ('ws_a', 'whk_1', 'evt_twice', 'patient.created', 'dead', 6),
             ('ws_a', 'whk_2', 'evt_gone', 'patient.created', 'cancelled', 0);
      INSERT INTO inbox_items (workspace_id, id, kind, endpoint_id, event_id, event_type)
      VALUES ('ws_a', 'inb_1', 'webhook.dead_lettered', 'whk_1', 'evt_dead', 'patient.created'),
             ('ws_a', 'inb_2', 'webhook.dead_lettered', 'whk_1', 'evt_replayed', 'patient.created'),
             ('ws_a', 'inb_3', 'webhook.dead_lettered', 'whk_1', 'evt_pending', 'patient.created'),
             ('ws_a', 'inb_4', 'webhook.dead_lettered', 'whk_1', 'evt_twice', 'patient.created'),
             ('ws_a', 'inb_5', 'webhook.dead_lettered', 'whk_1', 'evt_twice', 'patient.created'),
             ('ws_a', 'inb_6', 'webhook.dead_lettered', 'whk_2', 'evt_gone', 'patient.created'),
             ('ws_a', 'inb_7', 'mail.undeliverable', NULL, NULL, 'mail.send');`);
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, true) });
    const rows = await client.query<{ id: string; state: string; handled: boolean; handled_by: string | null }>(
      `SELECT id, state, handled_at IS NOT NULL AS handled, handled_by FROM inbox_items ORDER BY id`,
    );
    expect(rows.rows).toEqual([
      { id: 'inb_1', state: 'open', handled: false, handled_by: null },
      { id: 'inb_2', state: 'replayed', handled: true, handled_by: null },
      { id: 'inb_3', state: 'replayed', handled: true, handled_by: null },
      // Dead-lettered, replayed, dead-lettered again: the first was replayed, the second is open.
      { id: 'inb_4', state: 'replayed', handled: true, handled_by: null },
      { id: 'inb_5', state: 'open', handled: false, handled_by: null },
      // The endpoint was deleted (its delivery cancelled): nothing was replayed.
      { id: 'inb_6', state: 'open', handled: false, handled_by: null },
      { id: 'inb_7', state: 'open', handled: false, handled_by: null },
    ]);
    // New rows (also from an instance of the previous release, which names no state) are open.
    await client.exec(
      `INSERT INTO inbox_items (workspace_id, id, kind) VALUES ('ws_a', 'inb_8', 'health.incident_opened')`,
    );
    const added = await client.query<{ state: string }>(`SELECT state FROM inbox_items WHERE id = 'inb_8'`);
    expect(added.rows).toEqual([{ state: 'open' }]);
    await client.close();
  });
});
