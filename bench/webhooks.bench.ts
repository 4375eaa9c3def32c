/**
 * Outbound webhooks benchmark (`npm run bench:webhooks`, also run by `npm run bench`).
 *
 * For PGlite and (when reachable) the PostgreSQL server, with 10 endpoints on one local HTTPS
 * receiver running in a child process:
 *   1. events published/s: publishEvent + fan-out rows for 10 endpoints, in tenant transactions;
 *   2. signed deliveries/s end to end: the worker drains that backlog (claim, sign, POST, record);
 *   3. the floor: raw undici HTTPS POSTs to the same receiver at the same concurrency (ratio printed);
 *   4. publish-to-delivery latency p50/p99 at a steady publish rate;
 *   5. retry punctuality: how long after its scheduled time each due retry fires.
 *
 * Env: ATRIUM_BENCH_DATABASE_URL (default ATRIUM_TEST_DATABASE_URL or
 * postgres://postgres@127.0.0.1:5432/postgres; `none` skips the server), BENCH_EVENTS (backlog
 * events per database; default 2000 on the server, 600 on PGlite), BENCH_ONLY=pglite|server.
 */
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const HERE = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CA = `${ROOT}test/fixtures/tls/ca.pem`;
const ENDPOINTS = 10;
const SERVER_URL =
  process.env.ATRIUM_BENCH_DATABASE_URL ??
  process.env.ATRIUM_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

// ---------------------------------------------------------------- receiver (child process)

function runReceiver(): void {
  const tls = (name: string) => readFileSync(`${ROOT}test/fixtures/tls/${name}`);
  let count = 0;
  let latencies: number[] = [];
  const failedOnce = new Set<string>();
  const server = createServer({ key: tls('localhost-key.pem'), cert: tls('localhost.pem') }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      if (path.startsWith('/flaky')) {
        const id = String(req.headers['webhook-id']);
        if (!failedOnce.has(id)) {
          failedOnce.add(id);
          res.writeHead(500).end('first attempt fails');
          return;
        }
      }
      if (path.startsWith('/hook')) {
        count++;
        const created = Date.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')).created_at);
        latencies.push(Date.now() - created);
      } else if (path.startsWith('/floor')) {
        count++;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as AddressInfo).port });
  });
  process.on('message', (message: string) => {
    if (message === 'stats') process.send?.({ count, latencies: percentiles(latencies) });
    if (message === 'reset') {
      count = 0;
      latencies = [];
    }
    if (message === 'exit') server.close(() => process.exit(0));
  });
  // Never outlive the benchmark.
  process.on('disconnect', () => process.exit(0));
}

interface Receiver {
  port: number;
  stats(): Promise<{ count: number; latencies: Percentiles }>;
  reset(): void;
  close(): void;
}

async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = fork(HERE, ['receiver'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  return {
    port,
    stats: () =>
      new Promise((resolve) => {
        child.once('message', resolve as (m: unknown) => void);
        child.send('stats');
      }),
    reset: () => child.send('reset'),
    close: () => child.send('exit'),
  };
}

// ---------------------------------------------------------------- helpers

interface Percentiles {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

async function serverReachable(url: string): Promise<boolean> {
  if (url === 'none') return false;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/** Raw undici HTTPS POSTs at a fixed concurrency: the ceiling the worker is compared with. */
async function floor(port: number, concurrency: number, seconds: number): Promise<number> {
  const { Pool } = await import('undici');
  const pool = new Pool(`https://127.0.0.1:${port}`, { connections: 64 });
  const body = JSON.stringify({
    event_id: 'evt_01floor',
    type: 'patient.updated',
    created_at: new Date().toISOString(),
    workspace_id: 'ws_floor',
    data: { patient: { id: 'pat_1', givenName: 'Ada', familyName: 'Lovelace' }, changed: ['givenName'] },
  });
  let done = 0;
  const until = Date.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const res = await pool.request({
          path: '/floor',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await res.body.dump();
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  await pool.close();
  return rate;
}

// ---------------------------------------------------------------- one database

type OpenDatabase = typeof import('../src/platform/db/client.js').openDatabase;

/** In-memory PGlite, or a new database on the server that is dropped afterwards. */
async function freshDatabase(openDatabase: OpenDatabase, serverUrl: string | undefined) {
  if (!serverUrl) {
    const database = await openDatabase({});
    return { database, drop: () => database.close() };
  }
  const name = `atrium_bench_${Date.now().toString(36)}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 10 });
  return {
    database,
    drop: async () => {
      await database.close();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

async function benchDatabase(label: string, serverUrl: string | undefined, receiver: Receiver, backlog: number) {
  const { openDatabase } = await import('../src/platform/db/client.js');
  const { buildApp } = await import('../src/app.js');
  const { loadTestConfig } = await import('../src/config.js');
  const { withTenant, withSystem, queryRows } = await import('../src/platform/db/tenant.js');
  const { publishEvent } = await import('../src/platform/events/events.js');
  const { startWebhookWorker, DEFAULT_PER_ENDPOINT } = await import('../src/modules/webhooks/jobs/delivery-worker.js');
  const { secretKeys } = await import('../src/modules/webhooks/service.js');
  const { closeSafeClient } = await import('../src/platform/http/safe-client.js');
  const { sql } = await import('drizzle-orm');

  const testDb = await freshDatabase(openDatabase, serverUrl);
  const retryMs = 1000;
  const config = loadTestConfig({
    logLevel: 'silent',
    workerPollMs: 1000,
    webhooks: { retryDelaysMs: [retryMs], timeoutMs: 10_000, allowCidrs: ['127.0.0.0/8'] },
  });
  const app = await buildApp({ config, database: testDb.database });
  const inject = async (url: string, payload: unknown, token = config.operatorToken) => {
    const res = await app.inject({
      method: 'POST',
      url,
      payload: payload as object,
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.statusCode >= 300) throw new Error(`${url} → ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const created = await inject('/api/v1/operator/workspaces', {
    name: 'Bench clinic',
    tier: 'enterprise',
    admin: { email: `bench-${Date.now()}@example.test`, name: 'Bench Admin' },
  });
  const workspaceId: string = created.workspace.id;
  const token: string = created.admin.token;
  for (let i = 0; i < ENDPOINTS; i++) {
    await inject(
      '/api/v1/admin/webhooks',
      { url: `https://127.0.0.1:${receiver.port}/hook/${i}`, events: ['patient.updated'] },
      token,
    );
  }
  await inject(
    '/api/v1/admin/webhooks',
    { url: `https://127.0.0.1:${receiver.port}/flaky`, events: ['claim.denied'] },
    token,
  );

  const scope = { workspaceId };
  const data = (i: number) => ({
    patient: { id: `pat_${i}`, givenName: 'Ada', familyName: `Lovelace ${i}`, mrn: `MRN-${i}` },
    changed: ['familyName'],
  });
  const publish = (i: number, type: 'patient.updated' | 'claim.denied' = 'patient.updated') =>
    withTenant(testDb.database.db, scope, (tx) => publishEvent(tx, scope, type, data(i)));
  const startWorker = () =>
    startWebhookWorker({
      deps: app.atrium,
      log: app.log,
      webhooks: config.webhooks,
      keys: secretKeys(app.atrium),
      pollMs: config.workerPollMs,
    });
  const waitForCount = async (target: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { count } = await receiver.stats();
      if (count >= target || Date.now() > deadline) return count;
      await sleep(20);
    }
  };

  // 1. publish a backlog with no worker running
  const publishers = serverUrl ? 4 : 1;
  let next = 0;
  const publishStarted = performance.now();
  await Promise.all(
    Array.from({ length: publishers }, async () => {
      while (next < backlog) await publish(next++);
    }),
  );
  const publishSeconds = (performance.now() - publishStarted) / 1000;

  // 2. drain it: signed deliveries end to end
  receiver.reset();
  const expected = backlog * ENDPOINTS;
  const drainStarted = performance.now();
  let worker = await startWorker();
  const delivered = await waitForCount(expected, 90_000);
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  await worker.stop();

  // 3. the floor at the worker's concurrency (endpoints × per-endpoint cap)
  receiver.reset();
  const floorRate = await floor(receiver.port, ENDPOINTS * DEFAULT_PER_ENDPOINT, 4);

  // 4. latency at a steady publish rate
  receiver.reset();
  worker = await startWorker();
  const rate = serverUrl ? 60 : 20; // events/s, each fanned out to 10 endpoints
  const steadyEvents = rate * 4;
  const steadyStarted = Date.now();
  for (let i = 0; i < steadyEvents; i++) {
    await publish(backlog + i);
    const due = steadyStarted + ((i + 1) * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
  }
  await waitForCount(steadyEvents * ENDPOINTS, 30_000);
  const steady = await receiver.stats();

  // 5. retry punctuality: each flaky event fails once and is retried `retryMs` later
  const flaky = 50;
  for (let i = 0; i < flaky; i++) await publish(100_000 + i, 'claim.denied');
  const deadline = Date.now() + 20_000;
  let lateness: number[] = [];
  while (Date.now() < deadline) {
    const rows = await withSystem(testDb.database.db, (tx) =>
      queryRows<{ late_ms: number }>(
        tx,
        sql`SELECT extract(epoch FROM (a.attempted_at - a.scheduled_at)) * 1000 AS late_ms
              FROM webhook_attempts a WHERE a.event_type = 'claim.denied' AND a.attempt = 2`,
      ),
    );
    lateness = rows.map((r) => Number(r.late_ms));
    if (lateness.length >= flaky) break;
    await sleep(200);
  }
  await worker.stop();

  const eventsPerSecond = backlog / publishSeconds;
  const deliveriesPerSecond = delivered / drainSeconds;
  const late = percentiles(lateness);
  console.log(`\n== ${label} ==`);
  console.log(
    `events published/s (10-endpoint fan-out, ${publishers} publisher(s)): ${fmt(eventsPerSecond)}  [${backlog} events]`,
  );
  console.log(
    `signed deliveries/s end to end: ${fmt(deliveriesPerSecond)}  [${delivered}/${expected} in ${drainSeconds.toFixed(1)} s]`,
  );
  console.log(`floor, raw undici HTTPS POSTs/s (${ENDPOINTS * DEFAULT_PER_ENDPOINT} in flight): ${fmt(floorRate)}`);
  console.log(`ratio deliveries/floor: ${((100 * deliveriesPerSecond) / floorRate).toFixed(1)} %`);
  console.log(
    `publish→delivery latency at ${rate} events/s (${rate * ENDPOINTS} deliveries/s): p50 ${steady.latencies.p50} ms, p99 ${steady.latencies.p99} ms, max ${steady.latencies.max} ms [n=${steady.latencies.n}]`,
  );
  console.log(
    `retry lateness after its schedule (${retryMs} ms delay): p50 ${late.p50.toFixed(0)} ms, p99 ${late.p99.toFixed(0)} ms, max ${late.max.toFixed(0)} ms [n=${late.n}/${flaky}]`,
  );

  await app.close();
  await closeSafeClient();
  await testDb.drop();
  return { label, eventsPerSecond, deliveriesPerSecond, floorRate, late };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const receiver = await startReceiver();
  try {
    const only = process.env.BENCH_ONLY;
    if (only !== 'server') {
      await benchDatabase('PGlite (embedded)', undefined, receiver, Number(process.env.BENCH_EVENTS ?? 600));
    }
    if (only !== 'pglite') {
      if (await serverReachable(SERVER_URL)) {
        await benchDatabase('PostgreSQL server', SERVER_URL, receiver, Number(process.env.BENCH_EVENTS ?? 2000));
      } else {
        console.log(`\n(PostgreSQL server at ${SERVER_URL} not reachable: skipped)`);
      }
    }
  } finally {
    receiver.close();
  }
}

if (process.argv[2] === 'receiver') {
  runReceiver();
} else if (process.env.NODE_EXTRA_CA_CERTS !== CA) {
  // The receiver's certificate comes from the test CA; Node reads this variable only at start.
  const run = spawnSync(process.execPath, ['--import', 'tsx', HERE, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_EXTRA_CA_CERTS: CA },
  });
  process.exit(run.status ?? 1);
} else {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
