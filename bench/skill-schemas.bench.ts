/**
 * Tool-input validation benchmark (`npx tsx bench/skill-schemas.bench.ts`, also run by `npm run bench`).
 *
 *   1. In process: what the dispatcher does per invoke (cache lookup by skill version + validate a
 *      patterned schema read fresh from the database) against the floor of calling an already
 *      compiled validator, printed as a ratio; and the catastrophic `^(a+)+$` input on RE2.
 *   2. Over HTTP: N POST /skills/invoke calls, req/s and the ratio to GET /livez in the same run;
 *      heap after a full GC before and after (the old compile-per-invoke grew 67 → 141 MB over
 *      6,000 calls) and the validator cache's counters (compiles should be 0 once warm).
 *
 * In-memory PGlite unless ATRIUM_BENCH_DATABASE_URL / ATRIUM_TEST_DATABASE_URL is set.
 * BENCH_INVOKES (default 6000) calls in part 2.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import autocannon from 'autocannon';

const INVOKES = Number(process.env.BENCH_INVOKES ?? 6000);
if (process.env.ATRIUM_BENCH_DATABASE_URL) process.env.ATRIUM_TEST_DATABASE_URL = process.env.ATRIUM_BENCH_DATABASE_URL;

// A full collection without --expose-gc, so heap numbers are live objects, not garbage.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

const schema = {
  type: 'object',
  properties: {
    code: { type: 'string', pattern: '^[A-Z]\\d{2}(\\.\\d{1,4})?$' },
    email: { type: 'string', format: 'email' },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z-]{1,30}$' }, maxItems: 20 },
  },
  patternProperties: { '^x-': { type: 'string' } },
  required: ['code'],
};
const input = { code: 'E11.9', email: 'dr.lee@clinic.example', tags: ['diabetes', 'follow-up'], 'x-src': 'bench' };

function opsPerSecond(fn: () => void, ms = 1000): number {
  for (let i = 0; i < 1000; i++) fn();
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < ms) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
  }
  return n / ((performance.now() - started) / 1000);
}

async function inProcess(): Promise<void> {
  const { ValidatorCache } = await import('../src/modules/skills/validators.js');
  const { createAjv } = await import('../packages/skill-sdk/src/ajv.js');
  const stored = JSON.stringify(schema);
  const floorValidate = createAjv().compile(JSON.parse(stored));
  // Both sides parse the stored schema, as the dispatcher receives it from the database each time.
  const floor = opsPerSecond(() => JSON.parse(stored) && floorValidate(input));
  const cache = new ValidatorCache();
  const key = { skillId: 'skl_bench', version: '1.0.0', tool: 'lookup' };
  // The dispatcher gets a fresh object from the database on every invoke.
  const cached = opsPerSecond(() => cache.get(key, JSON.parse(stored))(input));
  console.log(
    `validate (cache lookup + patterns on RE2): ${cached.toFixed(0)}/s; floor (an already compiled validator) ${floor.toFixed(0)}/s; ratio ${(cached / floor).toFixed(2)}`,
  );
  const evil = cache.get({ ...key, tool: 'evil' }, { type: 'object', properties: { s: { pattern: '^(a+)+$' } } });
  const evilInput = { s: `${'a'.repeat(30)}!` };
  console.log(`catastrophic ^(a+)+$ on 31 characters: ${opsPerSecond(() => evil(evilInput), 300).toFixed(0)}/s`);
}

async function overHttp(): Promise<void> {
  const { createTestDatabase } = await import('../test/helpers/db.js');
  const { buildApp } = await import('../src/app.js');
  const { loadTestConfig } = await import('../src/config.js');
  const { toolValidators } = await import('../src/modules/skills/validators.js');
  const testDb = await createTestDatabase();
  const config = loadTestConfig({ logLevel: 'silent' });
  const app = await buildApp({ config, database: testDb.database });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = app.atrium.selfUrl();
  const call = async (url: string, token: string, body: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${url} → ${res.status} ${await res.text()}`);
    return res.json();
  };
  const ws = await call('/api/v1/operator/workspaces', config.operatorToken, {
    name: 'Bench',
    tier: 'enterprise',
    admin: { email: 'bench@example.test', name: 'Bench' },
  });
  const token = ws.admin.token as string;
  await call('/api/v1/marketplace/install', token, { slug: 'soap-structurer', scopes: [] });
  const body = JSON.stringify({
    slug: 'soap-structurer',
    tool: 'structure_note',
    input: { text: 'Patient reports cough. BP 120/80. Plan: follow up.' },
  });
  const run = (amount: number) =>
    autocannon({
      url: `${base}/api/v1/skills/invoke`,
      method: 'POST',
      connections: 10,
      amount,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
  await run(500); // warm-up: JIT, pools, caches
  const livez = await autocannon({ url: `${base}/livez`, connections: 10, amount: INVOKES });
  const before = heapMb();
  const stats = toolValidators.stats();
  const result = await run(INVOKES);
  const after = heapMb();
  const now = toolValidators.stats();
  console.log(
    `${INVOKES} invokes: ${result.requests.average.toFixed(0)} req/s (ratio to the /livez floor ${livez.requests.average.toFixed(0)} req/s: ${(result.requests.average / livez.requests.average).toFixed(3)}), errors ${result.non2xx + result.errors}; heap after GC ${before.toFixed(1)} → ${after.toFixed(1)} MB (${(after - before >= 0 ? '+' : '') + (after - before).toFixed(1)} MB); validator compiles ${now.misses - stats.misses}, cache hits ${now.hits - stats.hits}`,
  );
  await app.close();
  await testDb.drop();
}

async function main(): Promise<void> {
  await inProcess();
  await overHttp();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
