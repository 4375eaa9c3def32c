/**
 * Inbound channels benchmark on the PostgreSQL server (`npm run bench:channels`).
 *
 *   Verified inbound WhatsApp messages per second end to end: signed webhook → verified on the raw
 *   bytes → stored once (contact, conversation, message, event, NOTIFY) → visible in the list; next
 *   to a floor, a bare Fastify route that only verifies the same signature. Every request carries a
 *   new message id, so nothing is skipped as a duplicate. Target: ≥ 50 % of the floor.
 *
 * Servers run in a child process so autocannon does not share their event loop; a fresh database is
 * created and dropped. Env: ATRIUM_BENCH_DATABASE_URL (default ATRIUM_TEST_DATABASE_URL or
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_DURATION seconds per run (default 8),
 * BENCH_CONNECTIONS (default 50).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type autocannon from 'autocannon';
import pg from 'pg';
import { callJson, createBenchDatabase, forkBenchChild, runAutocannon } from './support.js';

const SERVER_URL =
  process.env.ATRIUM_BENCH_DATABASE_URL ??
  process.env.ATRIUM_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const OPERATOR_TOKEN = 'op_test_operator_token_0123456789';
const APP_SECRET = 'bench-whatsapp-app-secret-0123';
const SENDERS = 200;
/**
 * Concurrent connections of the sender (both runs): Meta and Twilio deliver a burst over many
 * connections at once; BENCH_CONNECTIONS changes it.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function serve(): Promise<void> {
  const url = process.env.BENCH_DB_URL!;
  const { buildApp } = await import('../src/app.js');
  const { loadTestConfig } = await import('../src/config.js');
  const { openDatabase } = await import('../src/platform/db/client.js');
  const { default: Fastify } = await import('fastify');
  const database = await openDatabase({ databaseUrl: url, poolSize: 10 });
  const app = await buildApp({ config: loadTestConfig({ emulators: false, logLevel: 'silent' }), database });
  await app.listen({ port: 0, host: '127.0.0.1' });

  // The floor: raw bytes in, the same HMAC-SHA256 check, 200 out. No parsing, no database.
  const floor = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024 });
  floor.removeAllContentTypeParsers();
  floor.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  floor.post('/floor', async (request, reply) => {
    const given = String(request.headers['x-hub-signature-256'] ?? '').slice(7);
    const expected = createHmac('sha256', APP_SECRET)
      .update(request.body as Buffer)
      .digest('hex');
    const ok = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    return reply.status(ok ? 200 : 401).send({ ok });
  });
  await floor.listen({ port: 0, host: '127.0.0.1' });
  const floorAddress = floor.server.address() as { port: number };
  process.send?.({ appUrl: app.atrium.selfUrl(), floorUrl: `http://127.0.0.1:${floorAddress.port}` });
  const { inboundBatchStats } = await import('../src/modules/channels/service.js');
  process.on('message', async (msg) => {
    if (msg === 'stats') process.send?.({ stats: inboundBatchStats(app.atrium) });
    if (msg === 'stop') {
      await app.close();
      await floor.close();
      await database.close();
      process.exit(0);
    }
  });
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : String(n));

/** One signed WhatsApp notification per call, each with a fresh wamid, from one of SENDERS numbers. */
function signedRequests(path: string): autocannon.Request[] {
  let n = 0;
  return [
    {
      method: 'POST',
      path,
      setupRequest: (request) => {
        n += 1;
        const from = `1555${String(n % SENDERS).padStart(7, '0')}`;
        const body = JSON.stringify({
          object: 'whatsapp_business_account',
          entry: [
            {
              id: '102290129340398',
              changes: [
                {
                  field: 'messages',
                  value: {
                    messaging_product: 'whatsapp',
                    metadata: { display_phone_number: '15550783881', phone_number_id: '109876543210' },
                    contacts: [{ profile: { name: `Patient ${n % SENDERS}` }, wa_id: from }],
                    messages: [
                      {
                        from,
                        id: `wamid.bench${n}${randomBytes(6).toString('hex')}`,
                        timestamp: String(Math.floor(Date.now() / 1000)),
                        type: 'text',
                        text: { body: `Hello, can I book a follow-up visit next week? (${n})` },
                      },
                    ],
                  },
                },
              ],
            },
          ],
        });
        const signature = createHmac('sha256', APP_SECRET).update(body).digest('hex');
        return {
          ...request,
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}` },
          body,
        };
      },
    },
  ];
}

async function main(): Promise<void> {
  const database = await createBenchDatabase(SERVER_URL);
  let servers: Awaited<ReturnType<typeof forkBenchChild<{ appUrl: string; floorUrl: string }>>> | undefined;
  try {
    servers = await forkBenchChild<{ appUrl: string; floorUrl: string }>(import.meta.url, 'serve', {
      BENCH_DB_URL: database.url,
    });
    const { appUrl, floorUrl } = servers.ready;
    const child = servers.child;
    const created = await callJson<{ workspace: { id: string }; admin: { token: string } }>(
      appUrl,
      'POST',
      '/api/v1/operator/workspaces',
      OPERATOR_TOKEN,
      { name: 'Bench clinic', tier: 'standard', admin: { email: 'bench-admin@example.test', name: 'Bench Admin' } },
    );
    const token = created.admin.token;
    const connection = await callJson<{ id: string }>(appUrl, 'POST', '/api/v1/channels', token, {
      channel: 'whatsapp',
      name: 'Bench WhatsApp',
      credentials: {
        appSecret: APP_SECRET,
        verifyToken: 'bench-verify',
        accessToken: 'EAAGbenchtoken',
        phoneNumberId: '109876543210',
      },
    });
    const appPath = `/api/v1/whatsapp/webhook?connection=${connection.id}`;

    await runAutocannon({ url: appUrl, connections: 4, duration: 2, requests: signedRequests(appPath) });
    await runAutocannon({ url: floorUrl, connections: 4, duration: 2, requests: signedRequests('/floor') });
    const owner = new pg.Client({ connectionString: database.url });
    await owner.connect();
    const countStored = async () =>
      Number((await owner.query('SELECT count(*)::int AS n FROM channel_messages')).rows[0].n);
    const before = await countStored();
    const app = await runAutocannon({
      url: appUrl,
      connections: CONNECTIONS,
      duration: DURATION,
      requests: signedRequests(appPath),
    });
    const stored = (await countStored()) - before;
    const batches = await new Promise<{ batches: number; items: number; largest: number }>((resolve) => {
      child.once('message', (m) =>
        resolve((m as { stats: { batches: number; items: number; largest: number } }).stats),
      );
      child.send('stats');
    });
    const floor = await runAutocannon({
      url: floorUrl,
      connections: CONNECTIONS,
      duration: DURATION,
      requests: signedRequests('/floor'),
    });
    await owner.end();
    // Visible in the list: the inbox answers with the newest messages.
    const list = await callJson<{ items: unknown[] }>(appUrl, 'GET', '/api/v1/channels/messages?limit=200', token);

    const errors = (r: autocannon.Result) => r.errors + r.non2xx + r.timeouts;
    const ok = app.requests.total - errors(app);
    const ratio = app.requests.average / floor.requests.average;
    console.log(
      `\nInbound channels benchmark — PostgreSQL server, WhatsApp webhooks, ${DURATION}s per run, ${CONNECTIONS} connections`,
    );
    console.table({
      'app: verify + store + list-visible': {
        'msg/s': fmt(app.requests.average),
        p50_ms: app.latency.p50,
        p99_ms: app.latency.p99,
        errors: errors(app),
      },
      'floor: bare Fastify, signature only': {
        'msg/s': fmt(floor.requests.average),
        p50_ms: floor.latency.p50,
        p99_ms: floor.latency.p99,
        errors: errors(floor),
      },
    });
    console.log(
      `stored ${stored} messages for ${ok} accepted requests; the list shows ${list.items.length} of the newest`,
    );
    console.log(
      `group commit since start: ${batches.items} webhooks in ${batches.batches} transactions (${(batches.items / Math.max(1, batches.batches)).toFixed(1)} per transaction, largest ${batches.largest})`,
    );
    const check = (pass: boolean, text: string) => console.log(`${pass ? 'PASS' : 'MISS'}  ${text}`);
    // Requests still in flight when autocannon stops counting are stored but not counted as answered.
    const sent = app.requests.sent;
    check(
      stored >= ok && stored <= sent,
      `every accepted message stored once: ${stored} stored, ${ok} answered 2xx, ${sent} sent`,
    );
    check(ratio >= 0.5, `app/floor throughput ratio ${(ratio * 100).toFixed(0)}% (target ≥ 50%)`);
  } finally {
    await servers?.stop();
    await database.drop();
  }
}

if (process.argv[2] === 'serve') {
  await serve();
} else {
  await main();
  process.exit(0);
}
