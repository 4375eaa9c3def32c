import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
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

// PGlite: a worker keeps the instances its finished files used and hands them to its next files,
// emptied, instead of loading a new copy of the template for each (~0.5 s of CPU a file). An
// instance goes back only when its schema is still the template's; otherwise it is closed.
const idle: { client: PGlite; channels: Set<string> }[] = [];
const schemaOf = new WeakMap<PGlite, string>();

async function takePglite(): Promise<{ client: PGlite; channels: Set<string> }> {
  const reused = idle.pop();
  if (reused) return reused;
  const client = await createPgliteFromTemplate();
  // Channels the app listens on, so that a reused instance tells nobody from an earlier file.
  const channels = new Set<string>();
  const listen = client.listen.bind(client);
  client.listen = (channel, ...rest) => {
    channels.add(channel);
    return listen(channel, ...rest);
  };
  return { client, channels };
}

/**
 * One file's handle on a pooled instance. Once the file has dropped its database, a call through the
 * handle (say, from a worker the file left running) fails instead of reaching the next file's data.
 */
function lease(client: PGlite): { handle: PGlite; revoke(): void } {
  let live = true;
  const handle = new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!live) throw new Error('This test database was dropped: something of an earlier test file still uses it');
        return value.apply(target, args);
      };
    },
  });
  return {
    handle,
    revoke: () => {
      live = false;
    },
  };
}

/** Objects that a test file could add or remove: a changed count means the instance is not reused. */
async function schemaFingerprint(client: PGlite): Promise<string> {
  const { rows } = await client.query<{ f: string }>(
    `SELECT concat_ws(':', (SELECT count(*) FROM pg_class), (SELECT count(*) FROM pg_proc),
                           (SELECT count(*) FROM pg_policy), (SELECT count(*) FROM pg_roles),
                           (SELECT count(*) FROM pg_trigger), (SELECT count(*) FROM pg_namespace),
                           (SELECT count(*) FROM pg_attribute), (SELECT count(*) FROM pg_constraint),
                           (SELECT count(*) FROM pg_index), (SELECT count(*) FROM pg_class WHERE relrowsecurity),
                           (SELECT count(*) FROM pg_class WHERE relforcerowsecurity),
                           (SELECT count(*) FROM pg_db_role_setting)) AS f`,
  );
  return rows[0].f;
}

/** Resets the session (role, settings, listeners, locks, prepared statements) and empties every table written. */
async function recycle(client: PGlite, channels: Set<string>): Promise<void> {
  try {
    for (const channel of channels) await client.unlisten(channel);
    channels.clear();
    if (client.closed) return;
    await client.exec('ROLLBACK').catch(() => undefined);
    await client.exec('DISCARD ALL');
    if ((await schemaFingerprint(client)) !== schemaOf.get(client)) return void (await client.close());
    await client.exec(`DO $$
      DECLARE t text; written text[] := '{}'; found boolean;
      BEGIN
        FOR t IN SELECT format('%I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname = 'public' LOOP
          EXECUTE 'SELECT EXISTS (SELECT 1 FROM ' || t || ')' INTO found;
          IF found THEN written := written || t; END IF;
        END LOOP;
        IF cardinality(written) > 0 THEN
          EXECUTE 'TRUNCATE ' || array_to_string(written, ', ') || ' RESTART IDENTITY CASCADE';
        END IF;
      END $$`);
    idle.push({ client, channels });
  } catch {
    await client.close().catch(() => undefined);
  }
}

/** A fresh, migrated database (a copy of the run's template): PGlite in memory, or a new database on the server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_SERVER_URL) {
    const { client, channels } = await takePglite();
    const { handle, revoke } = lease(client);
    const database = await openDatabase({ pglite: handle });
    schemaOf.set(client, schemaOf.get(client) ?? (await schemaFingerprint(client)));
    let dropped = false;
    return {
      database,
      openAnother: async () => {
        throw new Error('A second instance needs the PostgreSQL server (ATRIUM_TEST_DATABASE_URL)');
      },
      drop: async () => {
        if (dropped) return;
        dropped = true;
        revoke();
        await recycle(client, channels);
      },
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
