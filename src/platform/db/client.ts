import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import * as schema from './schema.js';
import { APP_ROLE, applyTenantSecurity, type OwnerSql } from './security.js';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
export type Listener = (payload: string) => void;

export const MIGRATIONS_FOLDER = join(dirname(fileURLToPath(import.meta.url)), '../../../drizzle');

export interface Database {
  kind: 'pglite' | 'pg';
  /** Connections run as the unprivileged application role; use withTenant/withSystem. */
  db: Db;
  /** Subscribes to a NOTIFY channel; resolves to an unsubscribe function. */
  listen(channel: string, listener: Listener): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  /** PGlite data directory; undefined means in-memory. */
  dataDir?: string;
  poolSize?: number;
}

/** Opens the database, runs pending migrations and the RLS setup, then drops to the app role. */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  return options.databaseUrl ? openServer(options.databaseUrl, options.poolSize ?? 10) : openEmbedded(options.dataDir);
}

async function openEmbedded(dataDir?: string): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir);
  const db = drizzlePglite({ client, schema });
  await migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER });
  await applyTenantSecurity({
    exec: async (text) => void (await client.exec(text)),
    query: async <T>(text: string, params: unknown[] = []) => (await client.query<T>(text, params)).rows,
  });
  // PGlite has one connection: from here on every statement runs as the app role.
  await client.exec(`SET ROLE ${APP_ROLE}`);
  return {
    kind: 'pglite',
    db: db as unknown as Db,
    async listen(channel, listener) {
      const unsubscribe = await client.listen(channel, listener);
      return async () => unsubscribe();
    },
    async close() {
      await client.close();
    },
  };
}

async function withOwnerClient<T>(url: string, fn: (owner: OwnerSql, client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const owner: OwnerSql = {
      exec: async (text) => void (await client.query(text)),
      query: async <R>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as R[],
    };
    return await fn(owner, client);
  } finally {
    await client.end();
  }
}

async function openServer(url: string, max: number): Promise<Database> {
  await withOwnerClient(url, async (owner, client) => {
    // One instance migrates at a time; the others wait and then find nothing to do.
    await client.query('SELECT pg_advisory_lock(727274)');
    try {
      await migrateNodePg(drizzleNodePg({ client, schema }), { migrationsFolder: MIGRATIONS_FOLDER });
      await applyTenantSecurity(owner);
    } finally {
      await client.query('SELECT pg_advisory_unlock(727274)');
    }
  });

  const pool = new pg.Pool({ connectionString: url, max });
  // Every pooled connection starts in the unprivileged role, so a stray query sees no tenant rows.
  pool.on('connect', (conn) => {
    conn.query(`SET ROLE ${APP_ROLE}`).catch(() => undefined);
  });
  pool.on('error', () => undefined);
  const db = drizzleNodePg({ client: pool, schema }) as unknown as Db;

  const listeners = new Map<string, Set<Listener>>();
  let listenClient: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;

  async function connectListener(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    client.on('notification', (msg) => {
      for (const fn of listeners.get(msg.channel) ?? []) fn(msg.payload ?? '');
    });
    client.on('error', () => {
      listenClient = undefined;
      if (!closed) setTimeout(() => void ensureListener().catch(() => undefined), 500);
    });
    await client.connect();
    for (const channel of listeners.keys()) await client.query(`LISTEN "${channel}"`);
    return client;
  }
  async function ensureListener(): Promise<pg.Client> {
    if (listenClient) return listenClient;
    connecting ??= connectListener().finally(() => {
      connecting = undefined;
    });
    listenClient = await connecting;
    return listenClient;
  }

  return {
    kind: 'pg',
    db,
    async listen(channel, listener) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Invalid channel name ${channel}`);
      let set = listeners.get(channel);
      if (!set) {
        set = new Set();
        listeners.set(channel, set);
        const client = await ensureListener();
        await client.query(`LISTEN "${channel}"`);
      }
      set.add(listener);
      const mine = set;
      return async () => {
        mine.delete(listener);
      };
    },
    async close() {
      closed = true;
      await listenClient?.end().catch(() => undefined);
      await pool.end();
    },
  };
}
