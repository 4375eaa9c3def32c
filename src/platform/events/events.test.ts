import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import { queryRows, withSystem, withTenant } from '../db/tenant.js';
import { publishEvent, registerEventFanout } from './events.js';

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
  await withSystem(testDb.database.db, (tx) =>
    tx.execute(sql`INSERT INTO workspaces (id, name, tier) VALUES ('ws_e', 'E', 'advanced')`),
  );
});
afterAll(async () => testDb?.drop());

const count = () =>
  withTenant(testDb.database.db, { workspaceId: 'ws_e' }, (tx) =>
    queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM domain_events`),
  ).then((r) => Number(r[0].n));

describe('transactional outbox', () => {
  it('a committed change has its event; a rolled-back one never does', async () => {
    await withTenant(testDb.database.db, { workspaceId: 'ws_e' }, (tx) =>
      publishEvent(tx, { workspaceId: 'ws_e' }, 'claim.paid', { claimId: 'c1' }),
    );
    expect(await count()).toBe(1);
    await expect(
      withTenant(testDb.database.db, { workspaceId: 'ws_e' }, async (tx) => {
        await publishEvent(tx, { workspaceId: 'ws_e' }, 'claim.denied', { claimId: 'c2' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await count()).toBe(1);
  });

  it('runs fan-outs inside the publishing transaction and notifies listeners after commit', async () => {
    const seen: string[] = [];
    registerEventFanout(async (_tx, events) => {
      for (const event of events) seen.push(event.type);
    });
    const notified: string[] = [];
    const stop = await testDb.database.listen('atrium_events', (id) => notified.push(id));
    const event = await withTenant(testDb.database.db, { workspaceId: 'ws_e' }, (tx) =>
      publishEvent(tx, { workspaceId: 'ws_e' }, 'meeting.started', { roomId: 'r1' }),
    );
    expect(seen).toContain('meeting.started');
    for (let i = 0; i < 50 && !notified.includes(event.id); i++) await new Promise((r) => setTimeout(r, 20));
    expect(notified).toContain(event.id);
    await stop();
  });
});
