import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { migrate as migrateNodePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { flushTree } from '../durable-files.js';
import { DurableNodeFS } from './durable-fs.js';
import { releaseConnectionsAlways } from './pool-transaction.js';
import * as schema from './schema.js';
import { enableScopedBegin, scopedBeginDatabases } from './scoped-begin.js';
import { APP_ROLE, type CatalogQuery, verifyTenantSecurity } from './security.js';

export type Schema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
export type Listener = (payload: string) => void;

export const MIGRATIONS_FOLDER = join(dirname(fileURLToPath(import.meta.url)), '../../../drizzle');

export interface Database {
  kind: 'pglite' | 'pg';
  /** Connections run as the unprivileged application role; use withTenant/withSystem. */
  db: Db;
  /**
   * Subscribes to a NOTIFY channel; resolves to an unsubscribe function. `onReconnect` runs when the
   * listening connection was lost and is back: whatever was notified in between is lost, so a cache
   * kept fresh by the channel must drop everything then.
   */
  listen(channel: string, listener: Listener, options?: { onReconnect?: () => void }): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  /** PGlite data directory; undefined means in-memory. */
  dataDir?: string;
  poolSize?: number;
  /** An already created PGlite to use instead (tests load a migrated copy); it runs as the owner. */
  pglite?: PGlite;
  /** Runs each start-up step (the caller may report the slow ones). */
  step?: StepRunner;
}

export type StepRunner = <T>(label: string, fn: () => Promise<T>) => Promise<T>;
const runStep: StepRunner = (_label, fn) => fn();

/**
 * PGlite's defaults (copied from @electric-sql/pglite 0.5, which replaces rather than extends them)
 * plus a smaller buffer cache: 128 MB of shared_buffers grows the WebAssembly memory, which never
 * shrinks, for a cache the operating system's page cache duplicates anyway.
 */
export const PGLITE_START_PARAMS = [
  '--single',
  '-F',
  '-O',
  '-j',
  ...['search_path=public', 'exit_on_error=false', 'log_checkpoints=false', 'max_worker_processes=0']
    .concat(['max_parallel_workers=0', 'max_parallel_workers_per_gather=0', 'io_method=sync'])
    .concat(['max_parallel_maintenance_workers=0', 'shared_buffers=16MB'])
    .flatMap((setting) => ['-c', setting]),
];

/**
 * A data directory on the disk: PostgreSQL's fsync on (`-F` dropped), the WAL flushed with fsync,
 * which DurableNodeFS passes to the disk (durable-fs.ts). In memory (tests) the defaults stay.
 */
export const PGLITE_DURABLE_PARAMS = [
  ...PGLITE_START_PARAMS.filter((p) => p !== '-F'),
  ...['-c', 'fsync=on', '-c', 'wal_sync_method=fsync'],
];

/** Opens the database, runs pending migrations, verifies row-level security, then drops to the app role. */
export async function openDatabase(options: OpenOptions): Promise<Database> {
  const step = options.step ?? runStep;
  if (options.databaseUrl) return openServer(options.databaseUrl, options.poolSize ?? 10, step);
  return openEmbedded(options.pglite ?? (await createEmbedded(options.dataDir, step)), step);
}

async function createEmbedded(dataDir: string | undefined, step: StepRunner): Promise<PGlite> {
  if (dataDir && !existsSync(join(dataDir, 'PG_VERSION'))) {
    // Creating the cluster (initdb) grows PGlite's WebAssembly memory to ~700 MB, which is never
    // returned: do it, and the first migrations, in a worker thread that then ends, and reopen here.
    mkdirSync(dataDir, { recursive: true });
    await step('Creating the embedded database', async () => {
      await createInWorker(dataDir);
      flushTree(dataDir);
    });
  }
  if (!dataDir) return PGlite.create({ startParams: PGLITE_START_PARAMS });
  return PGlite.create({ fs: new DurableNodeFS(dataDir), startParams: PGLITE_DURABLE_PARAMS });
}

function createInWorker(dataDir: string): Promise<void> {
  const worker = new Worker(new URL('./create-embedded-worker.mjs', import.meta.url), {
    workerData: {
      dataDir,
      startParams: PGLITE_START_PARAMS,
      migrationsFolder: MIGRATIONS_FOLDER,
      pgliteUrl: import.meta.resolve('@electric-sql/pglite'),
      drizzleUrl: import.meta.resolve('drizzle-orm/pglite'),
      migratorUrl: import.meta.resolve('drizzle-orm/pglite/migrator'),
    },
    execArgv: [], // no TypeScript loader needed; it would only cost memory
  });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`Creating the embedded database failed (exit ${code})`)),
    );
  });
}

async function openEmbedded(client: PGlite, step: StepRunner): Promise<Database> {
  const db = drizzlePglite({ client, schema });
  await step('Running database migrations', () => migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER }));
  await verifyTenantSecurity(async <T>(text: string) => (await client.query<T>(text)).rows);
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

async function openServer(url: string, max: number, step: StepRunner): Promise<Database> {
  const owner = new pg.Client({ connectionString: url });
  await owner.connect();
  try {
    // One instance migrates at a time; the others wait and then find nothing to do. With nothing to
    // migrate, the start only reads the catalog: no lock that waits behind running queries.
    await owner.query('SELECT pg_advisory_lock(727274)');
    try {
      await step('Running database migrations', () =>
        migrateNodePg(drizzleNodePg({ client: owner, schema }), { migrationsFolder: MIGRATIONS_FOLDER }),
      );
    } finally {
      await owner.query('SELECT pg_advisory_unlock(727274)');
    }
    await verifyTenantSecurity((async <T>(text: string) => (await owner.query(text)).rows as T[]) as CatalogQuery);
  } finally {
    await owner.end();
  }

  const pool = createAppPool(url, max);
  const db = createAppDb(pool);

  const listeners = new Map<string, Set<Listener>>();
  const reconnectHandlers = new Set<() => void>();
  let listenClient: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  let everConnected = false;

  // A lost listening connection is connected again, retried with backoff (0.5 s doubling to 5 s) until it is: a
  // database away for longer than one try (a failover, a restart) left it unconnected until the next new channel, so
  // NOTIFY-driven work (credential invalidation, streams across instances) stopped silently on this instance.
  let retryMs = LISTEN_RETRY_MIN_MS;
  function reconnectLater(): void {
    if (closed) return;
    setTimeout(() => {
      if (closed || listenClient) return;
      ensureListener().then(
        () => {
          retryMs = LISTEN_RETRY_MIN_MS;
        },
        () => {
          retryMs = Math.min(retryMs * 2, LISTEN_RETRY_MAX_MS);
          reconnectLater();
        },
      );
    }, retryMs).unref();
  }

  async function connectListener(): Promise<pg.Client> {
    // A connect that hangs (a server that takes the TCP connection and never answers) fails after a while, to be
    // tried again, instead of holding every later listen() behind it.
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS });
    client.on('notification', (msg) => {
      for (const fn of listeners.get(msg.channel) ?? []) fn(msg.payload ?? '');
    });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (listenClient === client) listenClient = undefined;
      reconnectLater();
    };
    client.on('error', onLost);
    client.on('end', onLost);
    await client.connect().catch(async (error) => {
      lost = true;
      await client.end().catch(() => undefined);
      throw error;
    });
    try {
      for (const channel of listeners.keys()) await client.query(`LISTEN "${channel}"`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (everConnected) for (const fn of reconnectHandlers) fn();
    everConnected = true;
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
    async listen(channel, listener, options) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Invalid channel name ${channel}`);
      const onReconnect = options?.onReconnect;
      if (onReconnect) reconnectHandlers.add(onReconnect);
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
        if (onReconnect) reconnectHandlers.delete(onReconnect);
      };
    },
    async close() {
      closed = true;
      await listenClient?.end().catch(() => undefined);
      await pool.end();
    },
  };
}

/** The listening connection's reconnect backoff (milliseconds). */
const LISTEN_RETRY_MIN_MS = 500;
const LISTEN_RETRY_MAX_MS = 5_000;

/** The Drizzle database over the request pool: its transactions give their connection back in every case. */
export function createAppDb(pool: pg.Pool): Db {
  const db = drizzleNodePg({ client: pool, schema }) as unknown as Db;
  releaseConnectionsAlways(db, pool);
  scopedBeginDatabases.add(db);
  return db;
}

/**
 * How long a request waits for one of the pool's connections before it fails (503 `unavailable`, errors.ts reads
 * pg-pool's "timeout exceeded when trying to connect"): the server not accepting connections, or every connection
 * held, is an answer in seconds rather than a request (and a readiness probe) that waits forever. Far above the
 * few milliseconds a busy pool makes a request wait.
 */
export const POOL_CONNECT_TIMEOUT_MS = 5000;

/**
 * The request pool. Every connection takes the unprivileged role in its start-up packet, so a stray
 * query sees no tenant rows, and a connection that cannot take it (missing role or membership) is
 * refused by the server: queries fail instead of running as the owner.
 */
export function createAppPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    options: `-c role=${APP_ROLE}`,
    connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
  });
  enableScopedBegin(pool);
  // An idle connection that breaks is removed by the pool; the next query opens a new one.
  pool.on('error', () => undefined);
  // One that breaks while a request holds it (a failover, pg_terminate_backend, a network cut, mostly between two
  // statements of a transaction) emits 'error' on the client, where the pool listens only while it is idle: unheard,
  // Node throws it and the whole process dies. Heard, the request's next query fails (a 5xx problem for that request
  // alone) and the release puts the broken connection out of the pool.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
