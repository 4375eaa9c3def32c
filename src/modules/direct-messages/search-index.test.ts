// The message search index is updated in place (migration 0028): no GIN pending list for one unlucky
// sender's insert to merge, so sends keep an even latency. So is the index of mentions (migration 0043).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import { queryRows } from '../../platform/db/tenant.js';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => testDb?.drop());

it.each(['dm_messages_search_idx', 'dm_messages_mentions_idx'])(
  '%s has no pending list (fastupdate off)',
  async (name) => {
    const [index] = await queryRows<{ options: string[] | null; method: string }>(
      testDb.database.db,
      sql`SELECT c.reloptions AS options, am.amname AS method
          FROM pg_class c JOIN pg_am am ON am.oid = c.relam
         WHERE c.relname = ${name}`,
    );
    expect(index).toEqual({ options: ['fastupdate=off'], method: 'gin' });
  },
);
