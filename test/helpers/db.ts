import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/platform/db/client.js';
import { createPgliteFromTemplate, ensureServerTemplate, withDatabase } from './db-template.js';

/** Server URL for integration tests; unset → each test file gets an in-memory PGlite. */
export const TEST_SERVER_URL = process.env.ATRIUM_TEST_DATABASE_URL || undefined;

export interface TestDatabase {
  database: Database;
  /** Connection URL of the fresh server database (undefined on PGlite). */
  url?: string;
  /** Opens another connection pool to the same database (a second app instance). */
  openAnother(): Promise<Database>;
  drop(): Promise<void>;
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_SERVER_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database (a copy of the run's template): PGlite in memory, or a new database on the server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_SERVER_URL) {
    const database = await openDatabase({ pglite: await createPgliteFromTemplate() });
    return {
      database,
      openAnother: async () => {
        throw new Error('A second instance needs the PostgreSQL server (ATRIUM_TEST_DATABASE_URL)');
      },
      drop: () => database.close(),
    };
  }
  const name = `atrium_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const template = await ensureServerTemplate(TEST_SERVER_URL);
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = new URL(withDatabase(TEST_SERVER_URL, name));
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 5 });
  const others: Database[] = [];
  return {
    database,
    url: url.toString(),
    openAnother: async () => {
      const another = await openDatabase({ databaseUrl: url.toString(), poolSize: 5 });
      others.push(another);
      return another;
    },
    drop: async () => {
      await Promise.all([database, ...others].map((d) => d.close().catch(() => undefined)));
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
