// The message search index is updated in place (migration 0028): no GIN pending list for one unlucky
// sender's insert to merge, so sends keep an even latency.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import { queryRows } from '../../platform/db/tenant.js';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => testDb?.drop());

it('the search index has no pending list (fastupdate off)', async () => {
  const [index] = await queryRows<{ options: string[] | null; method: string }>(
    testDb.database.db,
    sql`SELECT c.reloptions AS options, am.amname AS method
          FROM pg_class c JOIN pg_am am ON am.oid = c.relam
         WHERE c.relname = 'dm_messages_search_idx'`,
  );
  expect(index).toEqual({ options: ['fastupdate=off'], method: 'gin' });
});
