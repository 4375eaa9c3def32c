// Creates a new PGlite data directory (initdb) and runs the migrations, in a worker thread: initdb
// grows PGlite's WebAssembly memory to ~700 MB, and only ending the thread returns all of it at once
// (in the main thread it lingers until a full garbage collection). Plain JavaScript, so the thread
// needs no TypeScript loader. workerData: { dataDir, startParams, migrationsFolder, pgliteUrl, drizzleUrl, migratorUrl }.
import { workerData } from 'node:worker_threads';

const { dataDir, startParams, migrationsFolder, pgliteUrl, drizzleUrl, migratorUrl } = workerData;
const [{ PGlite }, { drizzle }, { migrate }] = await Promise.all([
  import(pgliteUrl),
  import(drizzleUrl),
  import(migratorUrl),
]);
const client = await PGlite.create(dataDir, { startParams });
await migrate(drizzle({ client }), { migrationsFolder });
await client.close();
