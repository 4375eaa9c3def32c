/**
 * Authenticated API throughput on the PostgreSQL server (`npx tsx bench/api.bench.ts`).
 *
 *   /livez (no auth, no database) is the floor measured in the same run; GET /me, GET /patients/:id
 *   and POST /patients (auth + tenant transaction + audit/outbox writes) print requests/s, p50/p99 and
 *   their ratio to the floor. The server runs in a child process so autocannon does not share its
 *   event loop. A fresh database is created and dropped. Env: ATRIUM_BENCH_DATABASE_URL (default:
 *   ATRIUM_TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres; `none` skips),
 *   BENCH_DURATION seconds per run (default 5), BENCH_CONNECTIONS (default 16).
 */
import type autocannon from 'autocannon';
import { callJson, createBenchDatabase, forkBenchChild, runAutocannon } from './support.js';

const SERVER_URL =
  process.env.ATRIUM_BENCH_DATABASE_URL ??
  process.env.ATRIUM_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const OPERATOR_TOKEN = 'op_test_operator_token_0123456789';
/** Issue 9: an authenticated read at ≥ 30 % of /livez. */
const READ_TARGET = 0.3;

async function serve(): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { loadTestConfig } = await import('../src/config.js');
  const { openDatabase } = await import('../src/platform/db/client.js');
  const database = await openDatabase({ databaseUrl: process.env.BENCH_DB_URL!, poolSize: 10 });
  const app = await buildApp({ config: loadTestConfig({ emulators: false, logLevel: 'silent' }), database });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.send?.({ appUrl: app.atrium.selfUrl() });
  process.on('message', async (msg) => {
    if (msg !== 'stop') return;
    await app.close();
    await database.close();
    process.exit(0);
  });
}

const call = callJson;
const run = runAutocannon;

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function measure(name: string, options: autocannon.Options): Promise<Row> {
  const r = await run({ connections: CONNECTIONS, duration: DURATION, ...options });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

async function main(): Promise<void> {
  if (SERVER_URL === 'none') {
    console.log('api bench: skipped (ATRIUM_BENCH_DATABASE_URL=none)');
    return;
  }
  const database = await createBenchDatabase(SERVER_URL);
  let servers: Awaited<ReturnType<typeof forkBenchChild<{ appUrl: string }>>> | undefined;
  try {
    servers = await forkBenchChild<{ appUrl: string }>(import.meta.url, 'serve', { BENCH_DB_URL: database.url });
    const { appUrl } = servers.ready;
    const created = await call<{ admin: { token: string } }>(
      appUrl,
      'POST',
      '/api/v1/operator/workspaces',
      OPERATOR_TOKEN,
      {
        name: 'Bench clinic',
        tier: 'standard',
        admin: { email: 'bench-admin@example.test', name: 'Bench Admin' },
      },
    );
    const token = created.admin.token;
    const auth = { authorization: `Bearer ${token}` };
    const patient = await call<{ id: string }>(appUrl, 'POST', '/api/v1/patients', token, {
      givenName: 'Bench',
      familyName: 'Patient',
    });
    // Warm-up: JIT, the credential cache and the pool's connections.
    await run({ url: `${appUrl}/api/v1/me`, headers: auth, connections: CONNECTIONS, duration: 2 });

    const rows: Row[] = [];
    rows.push(await measure('GET /livez (floor)', { url: `${appUrl}/livez` }));
    rows.push(await measure('GET /api/v1/me', { url: `${appUrl}/api/v1/me`, headers: auth }));
    rows.push(
      await measure('GET /api/v1/patients/:id', { url: `${appUrl}/api/v1/patients/${patient.id}`, headers: auth }),
    );
    rows.push(
      await measure('POST /api/v1/patients', {
        url: `${appUrl}/api/v1/patients`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ givenName: 'Load', familyName: 'Test' }),
      }),
    );
    const floor = rows[0].rps;
    console.log(`api bench on the PostgreSQL server, ${CONNECTIONS} connections, ${DURATION}s each`);
    console.log('route                          req/s    p50 ms  p99 ms  ratio to /livez  errors');
    for (const r of rows) {
      console.log(
        `${r.name.padEnd(30)} ${r.rps.toFixed(0).padStart(6)}  ${String(r.p50).padStart(6)}  ${String(r.p99).padStart(6)}  ${(r.rps / floor).toFixed(3).padStart(15)}  ${r.non2xx}`,
      );
    }
    const readRatio = rows[1].rps / floor;
    console.log(
      `authenticated read (GET /me) ratio ${readRatio.toFixed(3)} (target ≥ ${READ_TARGET}): ${readRatio >= READ_TARGET ? 'met' : 'NOT met'}`,
    );
  } finally {
    await servers?.stop();
    await database.drop();
  }
}

if (process.argv[2] === 'serve') void serve();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
