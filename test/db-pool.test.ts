import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queryRows, withSystem } from '../src/platform/db/tenant.js';
import { createTestDatabase, TEST_SERVER_URL } from './helpers/db.js';

const count = async (db: Awaited<ReturnType<typeof createTestDatabase>>['database']['db']) =>
  (await withSystem(db, (tx) => queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM workspaces`)))[0].n;

// On PGlite a worker hands an instance a finished file used to its next file (test/helpers/db.ts).
describe.skipIf(TEST_SERVER_URL)('test databases on PGlite', () => {
  it('come empty after an earlier file wrote to the same instance, and the earlier handle no longer works', async () => {
    const first = await createTestDatabase();
    await withSystem(first.database.db, (tx) =>
      tx.execute(sql`INSERT INTO workspaces (id, name, tier) VALUES ('ws_pool_check', 'Pool check', 'free')`),
    );
    expect(await count(first.database.db)).toBe(1);
    await first.drop();

    const second = await createTestDatabase();
    try {
      expect(await count(second.database.db)).toBe(0);
      // Something the first file left running cannot reach the second file's data.
      await expect(count(first.database.db)).rejects.toThrow(/dropped/);
    } finally {
      await second.drop();
    }
  });
});
