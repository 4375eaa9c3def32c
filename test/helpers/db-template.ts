// One migrated database per test run, copied for every test file instead of migrating each time:
// on the PostgreSQL server a template database (CREATE DATABASE … TEMPLATE), on PGlite a dump of a
// migrated data directory (loaded with PGlite's loadDataDir). Both are named after a hash of the
// migrations, so a changed migration builds a new one. test/global-setup.ts builds them once before
// the workers start; a helper used without it builds them on first use.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import pg from 'pg';
import { MIGRATIONS_FOLDER, openDatabase, PGLITE_START_PARAMS } from '../../src/platform/db/client.js';

const CACHE_DIR = join(MIGRATIONS_FOLDER, '../.vitest-tmp');
const TEMPLATE_LOCK = 727275;

/** A hash of every migration file and the journal: the template's identity. */
export function migrationsHash(): string {
  const hash = createHash('sha256');
  const files = readdirSync(MIGRATIONS_FOLDER)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  for (const file of [...files, 'meta/_journal.json']) {
    hash.update(file);
    hash.update(readFileSync(join(MIGRATIONS_FOLDER, file)));
  }
  return hash.digest('hex').slice(0, 12);
}

export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

let serverTemplate: Promise<string> | undefined;

/** The name of the migrated template database on the server, creating it once (advisory-locked). */
export function ensureServerTemplate(serverUrl: string): Promise<string> {
  serverTemplate ??= admin(serverUrl, async (client) => {
    const name = `atrium_template_${migrationsHash()}`;
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount) return name;
      const building = `${name}_building`;
      await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${building}`);
      try {
        const database = await openDatabase({ databaseUrl: withDatabase(serverUrl, building), poolSize: 1 });
        await database.close();
      } catch (err) {
        await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`).catch(() => undefined);
        throw err;
      }
      // Renamed only once complete, and closed to connections: a copy needs a template nobody is in.
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      await client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      return name;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return serverTemplate;
}

let pgliteTemplate: Promise<string> | undefined;

/** The path of a dump of a migrated PGlite data directory, creating it once. */
export function ensurePgliteTemplate(): Promise<string> {
  pgliteTemplate ??= (async () => {
    const file = join(CACHE_DIR, `pglite-template-${migrationsHash()}-c.tar`);
    if (existsSync(file)) return file;
    // Migrated from the empty cluster's dump, which a migration test then finds made (initdb once).
    const client = await createEmptyPglite();
    const database = await openDatabase({ pglite: client });
    await client.exec('RESET ROLE'); // openDatabase left the session as the app role; the checkpoint needs the owner
    await saveDump(client, file);
    await database.close();
    removeStaleDumps(file);
    return file;
  })();
  return pgliteTemplate;
}

/** A fresh PGlite loaded from the template, as the owner (openDatabase then verifies and drops the role). */
export async function createPgliteFromTemplate(): Promise<PGlite> {
  templateBlob ??= ensurePgliteTemplate().then((file) => new Blob([readFileSync(file)]));
  return PGlite.create({ ...(await wasmAssets()), loadDataDir: await templateBlob, startParams: PGLITE_START_PARAMS });
}

/**
 * A PGlite with an empty database, not migrated (a migration test's start), loaded from a dump of a
 * freshly initialised one: initdb runs once per PGlite version instead of for every such test (~2.5 s).
 */
export async function createEmptyPglite(): Promise<PGlite> {
  emptyBlob ??= (async () => {
    const dist = pgliteDist();
    const version = (JSON.parse(readFileSync(join(dist, '../package.json'), 'utf8')) as { version: string }).version;
    const file = join(CACHE_DIR, `pglite-empty-${version}.tar`);
    if (!existsSync(file)) {
      const client = await PGlite.create({ ...(await wasmAssets()), startParams: PGLITE_START_PARAMS });
      await saveDump(client, file);
      await client.close();
    }
    return new Blob([readFileSync(file)]);
  })();
  return PGlite.create({ ...(await wasmAssets()), loadDataDir: await emptyBlob, startParams: PGLITE_START_PARAMS });
}

/**
 * Writes the instance's data directory to `file`. A checkpoint first, so a copy starts without
 * replaying WAL (~0.25 s a copy); written under a unique name and renamed, so a parallel worker never
 * reads half a file.
 */
async function saveDump(client: PGlite, file: string): Promise<void> {
  await client.exec('CHECKPOINT');
  const dump = await client.dumpDataDir('none');
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()));
  renameSync(partial, file);
}

const pgliteDist = () => dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));

/** Read and compiled once per test worker: the dumps, PGlite's WebAssembly and its file bundle. */
let templateBlob: Promise<Blob> | undefined;
let emptyBlob: Promise<Blob> | undefined;
let assets: Promise<Pick<PGliteOptions, 'pgliteWasmModule' | 'initdbWasmModule' | 'fsBundle'>> | undefined;
function wasmAssets() {
  assets ??= (async () => {
    const dist = pgliteDist();
    return {
      pgliteWasmModule: await WebAssembly.compile(readFileSync(join(dist, 'pglite.wasm'))),
      initdbWasmModule: await WebAssembly.compile(readFileSync(join(dist, 'initdb.wasm'))),
      fsBundle: new Blob([readFileSync(join(dist, 'pglite.data'))]),
    };
  })();
  return assets;
}

/** Dumps of older migrations (a day old: a parallel run may still be using a recent one). */
function removeStaleDumps(keep: string): void {
  for (const name of readdirSync(CACHE_DIR)) {
    const path = join(CACHE_DIR, name);
    if (!name.startsWith('pglite-') || path === keep) continue;
    if (Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { force: true });
  }
}
