/**
 * Direct-messages benchmark on the PostgreSQL server (`npm run bench:messages`).
 *
 *   sends/s into existing threads (the real app, auth + validation + audit + NOTIFY) next to a
 *   floor: a bare Fastify route doing the same statements in one transaction; p50/p99 at a fixed
 *   500 sends/s; thread-list reads/s; search p50/p95/p99 over generated messages.
 *
 * The servers run in a child process so autocannon does not share their event loop. A fresh
 * database is created and dropped. Env: ATRIUM_BENCH_DATABASE_URL (default: ATRIUM_TEST_DATABASE_URL
 * or postgres://postgres@127.0.0.1:5432/postgres), BENCH_MESSAGES (default 1000000),
 * BENCH_DURATION seconds per run (default 8).
 */
import { randomBytes } from 'node:crypto';
import type autocannon from 'autocannon';
import pg from 'pg';
import { callJson, createBenchDatabase, forkBenchChild, runAutocannon } from './support.js';

const SERVER_URL =
  process.env.ATRIUM_BENCH_DATABASE_URL ??
  process.env.ATRIUM_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const USERS = 20;
const THREADS = 60;
const OPERATOR_TOKEN = 'op_test_operator_token_0123456789';

const WORDS = (
  'patient fever pressure blood insulin dose follow up discharge pending allergy penicillin wound dressing ' +
  'appointment schedule referral cardiology imaging xray results labs glucose potassium sodium creatinine ' +
  'antibiotic infusion catheter mobility physiotherapy pain score nausea vomiting sleep diet fluids oxygen ' +
  'saturation monitor bedside round handover shift nurse doctor pharmacy prescription refill insurance ' +
  'authorization consent family call callback visit telehealth note chart vitals weight height rash cough ' +
  'swab culture sepsis escalate review urgent routine tomorrow today morning evening transfer ward clinic ' +
  'therapy session walker cane fall risk pressure ulcer turning hydration intake output stool urine sample ' +
  'anticoagulant warfarin heparin bleeding bruising platelets hemoglobin transfusion anemia diabetic foot ' +
  'ulcer podiatry dialysis kidney liver enzymes hepatitis vaccine flu covid isolation mask gown precautions'
).split(/\s+/);

const SEARCHES = [
  'fever',
  'penicillin allergy',
  '"blood pressure"',
  'insulin -glucose',
  'wound dressing',
  'dialysis or transfusion',
  'discharge tomorrow',
  'warfarin bleeding',
  'telehealth callback',
  'falls',
];

// ------------------------------------------------------------------ child: the servers under test

async function serve(): Promise<void> {
  const url = process.env.BENCH_DB_URL!;
  const { buildApp } = await import('../src/app.js');
  const { loadTestConfig } = await import('../src/config.js');
  const { openDatabase } = await import('../src/platform/db/client.js');
  const { default: Fastify } = await import('fastify');

  const database = await openDatabase({ databaseUrl: url, poolSize: 10 });
  const app = await buildApp({ config: loadTestConfig({ emulators: false, logLevel: 'silent' }), database });
  await app.listen({ port: 0, host: '127.0.0.1' });

  // The floor: the same statements as a send (seq bump, message, sender receipt, audit row, NOTIFY)
  // in one transaction under the same RLS role, with no auth, validation or framework layers.
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const floor = Fastify({ logger: false });
  floor.post<{ Params: { threadId: string }; Body: { body: string; ws: string; user: string } }>(
    '/floor/:threadId',
    async (request, reply) => {
      const { threadId } = request.params;
      const { body, ws, user } = request.body;
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query("SELECT set_config('role', 'atrium_app', true), set_config('app.workspace_id', $1, true)", [
          ws,
        ]);
        const now = new Date();
        const { rows } = await client.query(
          'UPDATE dm_threads SET last_seq = last_seq + 1, updated_at = $3 WHERE workspace_id = $1 AND id = $2 RETURNING last_seq',
          [ws, threadId, now],
        );
        const seq = rows[0].last_seq;
        const id = `msg_floor${randomBytes(8).toString('hex')}`;
        await client.query(
          `INSERT INTO dm_messages (workspace_id, id, thread_id, seq, sender_id, body, mentions, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, '[]', $7)`,
          [ws, id, threadId, seq, user, body, now],
        );
        await client.query(
          `UPDATE dm_participants SET last_read_seq = $4, last_read_message_id = $5, read_at = $6
            WHERE workspace_id = $1 AND thread_id = $2 AND user_id = $3 AND last_read_seq < $4`,
          [ws, threadId, user, seq, id, now],
        );
        await client.query(
          `INSERT INTO audit_log (workspace_id, id, kind, actor_user_id, data) VALUES ($1, $2, 'message_send', $3, $4)`,
          [
            ws,
            `aud_floor${randomBytes(8).toString('hex')}`,
            user,
            { module: 'direct-messages', threadId, messageId: id },
          ],
        );
        await client.query('SELECT pg_notify($1, $2)', [
          'atrium_dm',
          JSON.stringify({ w: ws, t: threadId, k: 'm', s: seq }),
        ]);
        await client.query('COMMIT');
        return reply.status(201).send({ id });
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
  );
  await floor.listen({ port: 0, host: '127.0.0.1' });
  const floorAddress = floor.server.address() as { port: number };
  process.send?.({ appUrl: app.atrium.selfUrl(), floorUrl: `http://127.0.0.1:${floorAddress.port}` });
  process.on('message', async (msg) => {
    if (msg === 'stop') {
      await app.close();
      await floor.close();
      await pool.end();
      await database.close();
      process.exit(0);
    }
  });
}

// ------------------------------------------------------------------ parent: setup, load, report

const call = callJson;
const run = runAutocannon;

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : String(n));

async function main(): Promise<void> {
  const started = Date.now();
  const database = await createBenchDatabase(SERVER_URL);
  let servers: Awaited<ReturnType<typeof forkBenchChild<{ appUrl: string; floorUrl: string }>>> | undefined;
  try {
    servers = await forkBenchChild<{ appUrl: string; floorUrl: string }>(import.meta.url, 'serve', {
      BENCH_DB_URL: database.url,
    });
    const { appUrl, floorUrl } = servers.ready;

    // Workspace, members, threads.
    const created = await call<{ workspace: { id: string }; admin: { userId: string; token: string } }>(
      appUrl,
      'POST',
      '/api/v1/operator/workspaces',
      OPERATOR_TOKEN,
      { name: 'Bench clinic', tier: 'standard', admin: { email: 'bench-admin@example.test', name: 'Bench Admin' } },
    );
    const ws = created.workspace.id;
    const users = [created.admin];
    for (let i = 1; i < USERS; i++) {
      users.push(
        await call(appUrl, 'POST', `/api/v1/operator/workspaces/${ws}/members`, OPERATOR_TOKEN, {
          email: `bench-${i}@example.test`,
          name: `Member ${i}`,
          role: 'member',
        }),
      );
    }
    const threads: { id: string; sender: { userId: string; token: string } }[] = [];
    for (let i = 0; i < THREADS; i++) {
      const sender = users[i % USERS];
      const others = [users[(i + 1 + Math.floor(i / USERS)) % USERS]];
      if (i % 3 === 0) others.push(users[(i + 7) % USERS]);
      const res = await call<{ threadId: string }>(appUrl, 'POST', '/api/v1/direct-messages', sender.token, {
        recipients: others.map((u) => u.userId),
        body: `Kick-off ${i}`,
      });
      threads.push({ id: res.threadId, sender });
    }

    // Generated history for search and realistic table sizes (owner connection: set-based SQL, no RLS role).
    const genStarted = Date.now();
    const owner = new pg.Client({ connectionString: database.url });
    await owner.connect();
    await owner.query('DROP INDEX dm_messages_search_idx');
    await owner.query(
      `INSERT INTO dm_messages (workspace_id, id, thread_id, seq, sender_id, body, mentions, created_at)
       SELECT $1,
              'msg_0gen' || lpad(g::text, 9, '0'),
              ($2::text[])[1 + g % array_length($2::text[], 1)],
              1000 + g,
              ($3::text[])[1 + (g * 7) % array_length($3::text[], 1)],
              (SELECT string_agg(($4::text[])[1 + floor(power(random(), 1.6) * array_length($4::text[], 1))::int], ' ')
                 FROM generate_series(1, 6 + (g % 15))),
              '[]'::jsonb,
              now() - make_interval(secs => ($5 - g) * 3)
         FROM generate_series(1, $5) AS g`,
      [ws, threads.map((t) => t.id), users.map((u) => u.userId), WORDS, MESSAGES],
    );
    // As migration 0028 leaves it.
    await owner.query('CREATE INDEX dm_messages_search_idx ON dm_messages USING gin (search) WITH (fastupdate = off)');
    await owner.query(
      `UPDATE dm_threads t SET last_seq = s.max_seq
         FROM (SELECT thread_id, max(seq) AS max_seq FROM dm_messages GROUP BY thread_id) s
        WHERE s.thread_id = t.id`,
    );
    await owner.query('VACUUM ANALYZE dm_messages');
    await owner.query('ANALYZE dm_threads');
    await owner.query('ANALYZE dm_participants');
    // The generated history is set-up, not the measured load: write it out now, so that the checkpoint
    // its WAL would force does not land in the middle of a measured run.
    await owner.query('CHECKPOINT');
    await owner.end();
    const genSeconds = (Date.now() - genStarted) / 1000;

    const sendRequests = threads.map((t, i) => ({
      method: 'POST' as const,
      path: `/api/v1/direct-messages/${t.id}`,
      headers: { authorization: `Bearer ${t.sender.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: `Bench message ${i}: please check the fever chart and call back` }),
    }));
    const floorRequests = threads.map((t, i) => ({
      method: 'POST' as const,
      path: `/floor/${t.id}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        body: `Bench message ${i}: please check the fever chart and call back`,
        ws,
        user: t.sender.userId,
      }),
    }));
    const listRequests = users.map((u) => ({
      method: 'GET' as const,
      path: '/api/v1/direct-messages?limit=50',
      headers: { authorization: `Bearer ${u.token}` },
    }));

    // Warm-up, then the measured runs.
    await run({ url: appUrl, connections: 4, duration: 2, requests: sendRequests });
    await run({ url: floorUrl, connections: 4, duration: 2, requests: floorRequests });
    const appSends = await run({ url: appUrl, connections: 10, duration: DURATION, requests: sendRequests });
    const floorSends = await run({ url: floorUrl, connections: 10, duration: DURATION, requests: floorRequests });
    const at500 = await run({
      url: appUrl,
      connections: 25,
      duration: DURATION,
      overallRate: 500,
      requests: sendRequests,
    });
    const lists = await run({ url: appUrl, connections: 10, duration: DURATION, requests: listRequests });

    // Search: sequential requests, so each latency is one search (p95 computed here; autocannon has none).
    const searchLatencies: number[] = [];
    const matches: Record<string, number> = {};
    const admin0 = users[0];
    for (let round = 0; round < 12; round++) {
      for (const q of SEARCHES) {
        const t0 = performance.now();
        const res = await call<{ items: unknown[] }>(
          appUrl,
          'GET',
          `/api/v1/direct-messages/search?q=${encodeURIComponent(q)}&limit=20`,
          admin0.token,
        );
        if (round > 1) searchLatencies.push(performance.now() - t0);
        matches[q] = res.items.length;
      }
    }
    searchLatencies.sort((a, b) => a - b);

    const errors = (r: autocannon.Result) => r.errors + r.non2xx + r.timeouts;
    const ratio = appSends.requests.average / floorSends.requests.average;
    const search95 = pct(searchLatencies, 95);
    console.log(
      `\nDirect messages benchmark — PostgreSQL server, ${DURATION}s per run, ${USERS} users, ${THREADS} threads`,
    );
    console.log(
      `Generated ${MESSAGES.toLocaleString('en-US')} messages in ${genSeconds.toFixed(1)}s` +
        (MESSAGES < 1_000_000 ? ' (fewer than 1M: set BENCH_MESSAGES=1000000 for the full size)' : ''),
    );
    console.table({
      'app sends (max)': {
        'req/s': fmt(appSends.requests.average),
        p50_ms: appSends.latency.p50,
        p99_ms: appSends.latency.p99,
        errors: errors(appSends),
      },
      'floor sends (bare Fastify + same SQL)': {
        'req/s': fmt(floorSends.requests.average),
        p50_ms: floorSends.latency.p50,
        p99_ms: floorSends.latency.p99,
        errors: errors(floorSends),
      },
      'app sends @ 500/s': {
        'req/s': fmt(at500.requests.average),
        p50_ms: at500.latency.p50,
        p99_ms: at500.latency.p99,
        errors: errors(at500),
      },
      'thread list reads': {
        'req/s': fmt(lists.requests.average),
        p50_ms: lists.latency.p50,
        p99_ms: lists.latency.p99,
        errors: errors(lists),
      },
      search: {
        'req/s': fmt(1000 / (searchLatencies.reduce((a, b) => a + b, 0) / searchLatencies.length)),
        p50_ms: fmt(pct(searchLatencies, 50)),
        p99_ms: fmt(pct(searchLatencies, 99)),
        errors: 0,
      },
    });
    console.log(
      `search p95: ${fmt(search95)} ms over ${searchLatencies.length} queries; hits per query: ${JSON.stringify(matches)}`,
    );
    const check = (ok: boolean, text: string) => console.log(`${ok ? 'PASS' : 'MISS'}  ${text}`);
    check(ratio >= 0.5, `app/floor send throughput ratio ${(ratio * 100).toFixed(0)}% (target ≥ 50%)`);
    check(
      at500.latency.p99 < 50 && at500.requests.average >= 475,
      `p99 ${at500.latency.p99} ms at ${fmt(at500.requests.average)} sends/s (target < 50 ms at 500/s)`,
    );
    check(search95 < 100, `search p95 ${fmt(search95)} ms (target < 100 ms)`);
    console.log(`total ${(Date.now() - started) / 1000}s`);
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
