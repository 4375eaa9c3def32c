/**
 * Skill runtime benchmark (`npx tsx bench/skills.bench.ts`, also run by `npm run bench`).
 *
 *   1. POST /skills/invoke through the full dispatcher (auth, install lookup, scope check, ajv,
 *      tool, audit row) for a tool without data access (soap-structurer) and one reading patients
 *      (patient-lookup): requests/s and latency percentiles under autocannon.
 *   2. The spam classifier alone: classifications/s.
 *
 * Uses a fresh database: the PostgreSQL server when ATRIUM_BENCH_DATABASE_URL /
 * ATRIUM_TEST_DATABASE_URL is set, else in-memory PGlite. BENCH_DURATION seconds per run (default 5).
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
if (process.env.ATRIUM_BENCH_DATABASE_URL) process.env.ATRIUM_TEST_DATABASE_URL = process.env.ATRIUM_BENCH_DATABASE_URL;

async function main(): Promise<void> {
  // Imported after the env is set: the helper reads ATRIUM_TEST_DATABASE_URL when it loads.
  const { createTestDatabase } = await import('../test/helpers/db.js');
  const { buildApp } = await import('../src/app.js');
  const { loadTestConfig } = await import('../src/config.js');
  const { spamModel, loadCorpus } = await import('../src/modules/skills/catalog/mail-spam-filter/classifier.js');
  const testDb = await createTestDatabase();
  const config = loadTestConfig({ logLevel: 'silent' });
  const app = await buildApp({ config, database: testDb.database });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = app.atrium.selfUrl();
  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${await res.text()}`);
    return res.json();
  };
  const ws = await call('POST', '/api/v1/operator/workspaces', config.operatorToken, {
    name: 'Bench',
    tier: 'enterprise',
    admin: { email: 'bench@example.test', name: 'Bench' },
  });
  const token = ws.admin.token as string;
  for (let i = 0; i < 200; i++) {
    await call('POST', '/api/v1/patients', token, { givenName: `Given${i}`, familyName: `Family${i}`, mrn: `M${i}` });
  }
  await call('POST', '/api/v1/marketplace/install', token, { slug: 'soap-structurer', scopes: [] });
  await call('POST', '/api/v1/marketplace/install', token, { slug: 'patient-lookup', scopes: ['patients:read'] });

  const runs = [
    {
      name: 'invoke soap-structurer.structure_note',
      body: {
        slug: 'soap-structurer',
        tool: 'structure_note',
        input: { text: 'Patient reports cough. BP 120/80. Plan: follow up.' },
      },
    },
    {
      name: 'invoke patient-lookup.find_patient',
      body: { slug: 'patient-lookup', tool: 'find_patient', input: { query: 'Family1', limit: 5 } },
    },
  ];
  console.log(`database: ${testDb.database.kind}, ${DURATION}s per run, 10 connections`);
  for (const run of runs) {
    const result = await autocannon({
      url: `${base}/api/v1/skills/invoke`,
      method: 'POST',
      connections: 10,
      duration: DURATION,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(run.body),
    });
    const errors = result.non2xx + result.errors;
    console.log(
      `${run.name}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${errors}`,
    );
  }

  const texts = loadCorpus().map((e) => e.text);
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < 1000) {
    spamModel.classify(texts[n % texts.length]);
    n++;
  }
  console.log(`spam classifier: ${n} classifications/s (single thread)`);
  await app.close();
  await testDb.drop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
