// preparedRows: a hot statement runs as a named prepared statement on the server (parsed and planned
// once per connection), with the same answers as queryRows, under the transaction's tenant scope.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import { textArray } from './lists.js';
import { preparedRows, queryRows, withTenant } from './tenant.js';

let testDb: TestDatabase;

beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => testDb?.drop());

const probe = (value: string) =>
  sql`SELECT ${value}::text AS value, current_setting('app.workspace_id', true) AS ws, current_user AS role`;

/** The names of this connection's prepared statements (none on PGlite, which keeps no names). */
const preparedNames = async (tx: Parameters<typeof queryRows>[0]) =>
  (await queryRows<{ name: string }>(tx, sql`SELECT name FROM pg_prepared_statements`)).map((r) => r.name);

describe('preparedRows', () => {
  it('answers as queryRows does, inside the tenant scope, for each value', async () => {
    for (const value of ['a', "b'); DROP TABLE jobs; --", 'c']) {
      const rows = await withTenant(testDb.database.db, { workspaceId: 'ws_prep' }, (tx) =>
        preparedRows<{ value: string; ws: string; role: string }>(tx, probe(value)),
      );
      expect(rows).toEqual([{ value, ws: 'ws_prep', role: 'atrium_app' }]);
    }
  });

  it('names the statement by its text on the server: one name per text, reused', async () => {
    const names = await withTenant(testDb.database.db, { workspaceId: 'ws_prep' }, async (tx) => {
      await preparedRows(tx, probe('x'));
      await preparedRows(tx, probe('y'));
      await preparedRows(tx, sql`SELECT ${1}::int + 1 AS two`);
      return preparedNames(tx);
    });
    const ours = names.filter((n) => n.startsWith('atrium_'));
    if (testDb.database.kind === 'pg') {
      // Two texts (the probe with two values is one text), each prepared once on this connection.
      expect(ours).toHaveLength(2);
      expect(new Set(ours).size).toBe(2);
    } else {
      expect(ours).toEqual([]);
    }
  });

  it('a failing statement fails as queryRows would and leaves the connection usable', async () => {
    await expect(
      withTenant(testDb.database.db, { workspaceId: 'ws_prep' }, (tx) =>
        preparedRows(tx, sql`SELECT 1 / ${0}::int AS boom`),
      ),
    ).rejects.toMatchObject({ cause: expect.objectContaining({ message: expect.stringMatching(/division by zero/) }) });
    const rows = await withTenant(testDb.database.db, { workspaceId: 'ws_prep' }, (tx) =>
      preparedRows<{ value: string }>(tx, probe('after')),
    );
    expect(rows[0].value).toBe('after');
  });

  it('textArray: one text[] parameter, whatever the values hold', async () => {
    const values = ['job_01abc', 'a,b', 'quote"d', 'back\\slash', '{braces}', 'NULL', '', ' spaced '];
    const rows = await withTenant(testDb.database.db, { workspaceId: 'ws_prep' }, (tx) =>
      preparedRows<{ v: string }>(tx, sql`SELECT unnest(${textArray(values)}::text[]) AS v`),
    );
    expect(rows.map((r) => r.v)).toEqual(values);
  });
});
