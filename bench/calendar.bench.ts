/**
 * Calendar benchmark (`npm run bench:calendar`).
 *
 *   The merged week list over 2 connections (Google + Microsoft) × 300 events each, with both
 *   emulators answering every list after a fixed delay D. Printed: list latency p50/p95 next to
 *   the floor (one direct call to an emulator with the same delay, measured in the same run) and
 *   the target p95 ≤ D + 15 ms, which holds only if the providers are called in parallel and
 *   merging costs almost nothing. Also: events created per second through the API.
 *
 * Runs on the PostgreSQL server when ATRIUM_TEST_DATABASE_URL is set, else on PGlite. On the server
 * the providers (the emulators) answer from a second process on the same database, as real
 * providers would from their own machines: their work (reading, expanding recurrences, writing
 * JSON) then no longer shares the event loop of the app being measured. On PGlite (one process
 * only) they run in this process, and their work counts in both the list and the floor.
 * Env: BENCH_CAL_DELAY_MS (default 100), BENCH_CAL_EVENTS per connection (default 300),
 * BENCH_CAL_LISTS (default 100).
 */
import { GOOGLE_LIST_FIELDS } from '../src/modules/calendar/providers/google.js';
import { GRAPH_LIST_SELECT } from '../src/modules/calendar/providers/microsoft.js';
import { createTestApp } from '../test/helpers/app.js';
import { forkBenchChild } from './support.js';

/** The providers' process: the same app (so the same emulators and data) on the same database. */
async function serveProviders(): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { loadTestConfig } = await import('../src/config.js');
  const { openDatabase } = await import('../src/platform/db/client.js');
  const database = await openDatabase({ databaseUrl: process.env.BENCH_DB_URL!, poolSize: 5 });
  const app = await buildApp({ config: loadTestConfig({ logLevel: 'silent' }), database });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.send?.(app.atrium.selfUrl());
  process.on('message', async (msg) => {
    if (msg === 'stop') {
      await app.close();
      await database.close();
      process.exit(0);
    }
  });
}

const D = Number(process.env.BENCH_CAL_DELAY_MS ?? 100);
const EVENTS = Number(process.env.BENCH_CAL_EVENTS ?? 300);
const LISTS = Number(process.env.BENCH_CAL_LISTS ?? 100);

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function main() {
  const t = await createTestApp({ logLevel: 'silent' });
  const op = t.config.operatorToken;
  const ws = await t.request({
    method: 'POST',
    url: '/api/v1/operator/workspaces',
    token: op,
    payload: { name: 'Bench clinic', tier: 'enterprise', admin: { email: 'bench@example.test', name: 'Bench' } },
  });
  const token: string = ws.json().admin.token;

  async function connect(provider: 'google' | 'microsoft') {
    const start = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/connections',
      token,
      payload: { provider },
    });
    const consent = await fetch(start.json().authorizeUrl, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location')!);
    await t.request({ method: 'GET', url: `${back.pathname}${back.search}` });
  }
  await connect('google');
  await connect('microsoft');
  const calendars = (await t.request({ method: 'GET', url: '/api/v1/calendar/calendars', token })).json().items;

  const weekStart = Date.parse('2026-11-23T00:00:00Z');
  const created = performance.now();
  let n = 0;
  for (const cal of calendars.filter((c: { primary: boolean }) => c.primary)) {
    const batch = [];
    for (let i = 0; i < EVENTS; i++) {
      const start = new Date(weekStart + ((i * 17) % (7 * 24 * 4)) * 15 * 60_000).toISOString();
      const end = new Date(Date.parse(start) + 30 * 60_000).toISOString();
      batch.push(
        t.request({
          method: 'POST',
          url: '/api/v1/calendar/events',
          token,
          payload: { calendar: cal.id, draft: { title: `Visit ${i}`, start, end } },
        }),
      );
      if (batch.length === 10) {
        for (const r of await Promise.all(batch.splice(0))) if (r.statusCode === 201) n++;
      }
    }
    for (const r of await Promise.all(batch)) if (r.statusCode === 201) n++;
  }
  const createSeconds = (performance.now() - created) / 1000;

  // On the server: from here on the app reaches the providers in their own process.
  const providers = t.testDb.url
    ? await forkBenchChild<string>(import.meta.url, 'providers', { BENCH_DB_URL: t.testDb.url })
    : undefined;
  const providersUrl = providers?.ready ?? t.baseUrl;
  if (providers) t.config.publicUrl = providersUrl;

  for (const name of ['google', 'microsoft']) {
    await fetch(`${providersUrl}/_emulators/${name}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'events.list', delayMs: D, times: 10_000 }),
    });
  }
  const query = 'timeMin=2026-11-23T00:00:00Z&timeMax=2026-11-30T00:00:00Z';

  // Floor: both providers' list calls straight to the emulators, in parallel, as the adapters make
  // them (on PGlite the emulators run in this process, so their own work counts in both figures).
  const { mintEmulatorTokens } = await import('../src/emulators/calendar/index.js');
  const google = mintEmulatorTokens('google', 'demo@google.example').access_token;
  const microsoft = mintEmulatorTokens('microsoft', 'demo@microsoft.example').access_token;
  const msCalendar = (
    (await (
      await fetch(`${providersUrl}/_emulators/microsoft/v1.0/me/calendars`, {
        headers: { authorization: `Bearer ${microsoft}` },
      })
    ).json()) as {
      value: { id: string }[];
    }
  ).value[0].id;
  // The same calls the adapters make (one page each, only the fields they read).
  const googleQuery = new URLSearchParams({
    timeMin: '2026-11-23T00:00:00Z',
    timeMax: '2026-11-30T00:00:00Z',
    singleEvents: 'true',
    orderBy: 'startTime',
    maxResults: '2500',
    fields: GOOGLE_LIST_FIELDS,
  });
  const graphQuery = new URLSearchParams({
    startDateTime: '2026-11-23T00:00:00Z',
    endDateTime: '2026-11-30T00:00:00Z',
    $top: '1000',
    $select: GRAPH_LIST_SELECT,
  });
  const floor: number[] = [];
  for (let i = 0; i < LISTS; i++) {
    const s = performance.now();
    await Promise.all([
      fetch(`${providersUrl}/_emulators/google/calendar/v3/calendars/primary/events?${googleQuery}`, {
        headers: { authorization: `Bearer ${google}` },
      }).then((r) => r.arrayBuffer()),
      fetch(`${providersUrl}/_emulators/microsoft/v1.0/me/calendars/${msCalendar}/calendarView?${graphQuery}`, {
        headers: { authorization: `Bearer ${microsoft}`, prefer: 'outlook.timezone="UTC"' },
      }).then((r) => r.arrayBuffer()),
    ]);
    floor.push(performance.now() - s);
  }

  const lat: number[] = [];
  let items = 0;
  for (let i = 0; i < LISTS; i++) {
    const s = performance.now();
    // Over HTTP, as a client sees it (the test helper's OpenAPI check of each answer is not ours to count).
    const res = await fetch(`${t.baseUrl}/api/v1/calendar/events?${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as { items: unknown[] };
    lat.push(performance.now() - s);
    items = body.items.length;
  }
  const p50 = pct(lat, 50);
  const p95 = pct(lat, 95);
  const f95 = pct(floor, 95);
  console.log(
    `calendar: ${n} events created in ${createSeconds.toFixed(1)} s = ${(n / createSeconds).toFixed(0)} events/s`,
  );
  console.log(
    `calendar: merged week list of ${items} events over 2 connections, provider delay D = ${D} ms; providers ${providers ? 'in their own process' : 'in this process (PGlite)'}`,
  );
  console.log(
    `calendar: list p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms; floor (both providers called directly, in parallel) p50 ${pct(floor, 50).toFixed(1)} ms, p95 ${f95.toFixed(1)} ms`,
  );
  console.log(
    `calendar: p95 − D = ${(p95 - D).toFixed(1)} ms (target ≤ 15 ms: ${p95 - D <= 15 ? 'met' : 'NOT met'}); p95 − floor p95 = ${(p95 - f95).toFixed(1)} ms; ratio to floor ${(p95 / f95).toFixed(2)}`,
  );
  await providers?.stop();
  await t.close();
}

if (process.argv[2] === 'providers') {
  serveProviders().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
