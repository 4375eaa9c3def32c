// Migration 0027 moves webhook delivery onto platform/jobs: every delivery still pending when the
// new release starts must get its job (nothing committed is lost), due when it was due, and settled
// ones must not. Runs the real migration files on a fresh embedded PostgreSQL, up to 0026, then 0027.
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyPglite } from '../../../test/helpers/db-template.js';
import { migrationsUpTo, removeMigrationCopies } from '../../../test/helpers/migrations.js';

const TAG = '0027_webhook_delivery_jobs';
afterAll(removeMigrationCopies);

describe('migration 0027: webhook deliveries become webhooks.deliver jobs', () => {
  it('queues a job for each pending delivery (with its due time) and none for settled ones', async () => {
    const client = await createEmptyPglite();
    const db = drizzle({ client });
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, false) });
    await client.exec(`
      INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_id, event_type, state, attempts, next_attempt_at, locked_until, lease_token)
      VALUES ('ws_a', 'whk_1', 'evt_1', 'patient.created', 'pending', 2, '2026-11-25T10:00:00Z', now(), 'old-worker'),
             ('ws_a', 'whk_1', 'evt_2', 'patient.created', 'pending', 0, '2026-11-25T11:00:00Z', NULL, NULL),
             ('ws_a', 'whk_2', 'evt_1', 'patient.created', 'delivered', 1, '2026-11-25T09:00:00Z', NULL, NULL),
             ('ws_b', 'whk_3', 'evt_3', 'claim.denied', 'dead', 6, '2026-11-25T09:00:00Z', NULL, NULL),
             ('ws_b', 'whk_3', 'evt_4', 'claim.denied', 'cancelled', 0, '2026-11-25T09:00:00Z', NULL, NULL)`);
    await migrate(db, { migrationsFolder: migrationsUpTo(TAG, true) });
    const jobs = await client.query<Record<string, unknown>>(
      `SELECT type, workspace_id, payload, status, attempts, run_at, dedupe_key, concurrency_key
         FROM jobs ORDER BY dedupe_key`,
    );
    expect(jobs.rows).toEqual([
      {
        type: 'webhooks.deliver',
        workspace_id: 'ws_a',
        payload: { endpointId: 'whk_1', eventId: 'evt_1' },
        status: 'queued',
        attempts: 0,
        run_at: new Date('2026-11-25T10:00:00Z'),
        dedupe_key: 'whk_1:evt_1',
        concurrency_key: 'whk_1',
      },
      {
        type: 'webhooks.deliver',
        workspace_id: 'ws_a',
        payload: { endpointId: 'whk_1', eventId: 'evt_2' },
        status: 'queued',
        attempts: 0,
        run_at: new Date('2026-11-25T11:00:00Z'),
        dedupe_key: 'whk_1:evt_2',
        concurrency_key: 'whk_1',
      },
    ]);
    // The delivery rows keep their budget; the lease columns are gone with the worker that used them.
    const kept = await client.query<{ attempts: number }>(
      `SELECT attempts FROM webhook_deliveries WHERE event_id = 'evt_1' AND endpoint_id = 'whk_1'`,
    );
    expect(kept.rows).toEqual([{ attempts: 2 }]);
    const columns = await client.query(
      `SELECT column_name FROM information_schema.columns
        WHERE table_name = 'webhook_deliveries' AND column_name IN ('locked_until', 'lease_token')`,
    );
    expect(columns.rows).toEqual([]);
    await client.close();
  });
});
