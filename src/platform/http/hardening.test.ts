import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { buildApp } from '../../app.js';
import { ConfigError, loadConfig, loadTestConfig } from '../../config.js';
import { daySchema, instantSchema } from '../http-schemas.js';
import { findHostileText, findRefused, isHostileText, MAX_JSON_DEPTH, pathOnly } from './hardening.js';

const lines: string[] = [];
let testDb: TestDatabase;
let app: FastifyInstance;
let ws: TestWorkspace;

// A TestApp-shaped wrapper so the shared factories work on this app built with a log stream.
const t = {
  get config() {
    return app.atrium.config;
  },
  request: ({ token, headers, ...options }: InjectOptions & { token?: string }) =>
    app.inject({ ...options, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } }),
};

beforeAll(async () => {
  testDb = await createTestDatabase();
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  app = await buildApp({ config: loadTestConfig({ logLevel: 'info' }), database: testDb.database, logStream: stream });
  await app.ready();
  ws = await createWorkspace(t as never, { tier: 'standard' });
});
afterAll(async () => {
  await app?.close();
  await testDb?.drop();
});

const get = (url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ws.admin.token}`, ...headers } });

function expectProblem(res: Awaited<ReturnType<typeof get>>, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  expect(body.requestId).toMatch(/^req_/);
  expect(res.headers['x-request-id']).toBe(body.requestId);
}

describe('errors raised before a route runs', () => {
  it('an over-long path parameter is a 414 problem with a request id', async () => {
    expectProblem(await get(`/api/v1/patients/${'a'.repeat(500)}`), 414, 'uri_too_long');
  });

  it('bad percent-encoding is a 400 problem with a request id, in and outside the API', async () => {
    expectProblem(await get('/api/v1/patients/%E0%A4%A'), 400, 'validation_failed');
    expectProblem(await get('/nowhere/%zz'), 400, 'validation_failed');
  });

  it('bad percent-encoding in the query string is the same 400 problem, on every route', async () => {
    const path = (await get('/api/v1/patients/%zz')).json().detail;
    // '%' without two hex digits, and sequences that are not UTF-8 (decodeURIComponent refuses all of these).
    for (const url of [
      '/api/v1/patients?q=%zz',
      '/api/v1/patients?%zz=1',
      '/api/v1/patients?q=%',
      '/api/v1/patients?q=%4',
      '/api/v1/patients?q=ok&limit=5%',
      '/api/v1/patients?q=%C3%28',
      '/api/v1/patients?q=%ED%A0%80',
      '/api/v1/patients?q=%C0%AF',
      '/api/v1/patients?q=%E0%A4%A',
      '/api/v1/tasks?eventId=%zz',
      '/api/v1/status?x=%zz',
      '/api/v1/nonexistent?x=%zz',
      '/livez?x=%zz',
      '/nowhere?x=%zz',
      '/_emulators/video/stun?x=%zz',
    ]) {
      const res = await get(url);
      expectProblem(res, 400, 'validation_failed');
      expect(res.json().detail, url).toBe(path);
    }
    // One log line, by route pattern, without the query.
    lines.length = 0;
    await get('/api/v1/patients?q=Zebulon%zz', { 'x-request-id': 'req-bad-query-1' });
    expect(lines.filter((l) => l.includes('req-bad-query-1'))).toHaveLength(1);
    expect(JSON.parse(lines.find((l) => l.includes('req-bad-query-1')) ?? '{}')).toMatchObject({
      route: '/api/v1/patients',
      status: 400,
    });
    expect(lines.join('\n')).not.toMatch(/Zebulon/);
    // Unauthenticated too: refused before authentication does any work.
    expectProblem(await app.inject({ method: 'GET', url: '/api/v1/patients?q=%zz' }), 400, 'validation_failed');
    // Well-formed encodings (UTF-8, '+' for a space, encoded '%') still work.
    for (const url of ['/api/v1/patients?q=Ren%C3%A9e', '/api/v1/patients?q=a+b%25', '/api/v1/patients?q=']) {
      expect((await get(url)).statusCode, url).toBe(200);
    }
  });
});

describe('hostile text', () => {
  it('recognises NUL and unpaired surrogates, and accepts real pairs', () => {
    expect(isHostileText('a\u0000b')).toBe(true);
    expect(isHostileText('a\ud800b')).toBe(true);
    expect(isHostileText('\udc00')).toBe(true);
    expect(isHostileText('emoji 😀 ok')).toBe(false);
    expect(findHostileText({ a: [{ b: 'x\u0000' }] }, 'body')).toBe('body.a.0.b');
    expect(findHostileText({ 'k\u0000': 1 }, 'body')).toBe('body');
    // No depth hides it (the walk had stopped at 64 levels).
    let deep: unknown = 'x\u0000y';
    for (let i = 0; i < 5000; i++) deep = i % 2 ? { a: deep } : [deep];
    expect(findHostileText(deep, 'body')).toMatch(/^body(\.(a|0))+$/);
    expect(findHostileText({ first: 'ok', second: ['x', 'y\ud800'] }, 'body')).toBe('body.second.1');
  });

  it('NUL or a lone surrogate in a body, query or path is 400 validation_failed and stores nothing', async () => {
    const before = (await get('/api/v1/patients')).json().items.length;
    for (const payload of [
      '{"givenName":"Ann\\u0000","familyName":"Lee"}',
      '{"givenName":"Ann","familyName":"Lee\\ud800"}',
      '{"givenName":"Ann","familyName":"Lee","mrn":"\\udfff1"}',
      // Unknown members are not stored, but hostile text 70 levels down is refused all the same.
      `{"givenName":"Ann","familyName":"Lee","zz":${'{"a":'.repeat(70)}"x\\u0000y"${'}'.repeat(70)}}`,
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/patients',
        payload,
        headers: { authorization: `Bearer ${ws.admin.token}`, 'content-type': 'application/json' },
      });
      expectProblem(res, 400, 'validation_failed');
      expect(res.json().errors[0].path).toMatch(/^body\./);
    }
    expectProblem(await get('/api/v1/patients?q=a%00b'), 400, 'validation_failed');
    expectProblem(await get('/api/v1/patients/pat_%00'), 400, 'validation_failed');
    expect((await get('/api/v1/patients')).json().items.length).toBe(before);
  });
});

describe('nesting', () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('finds arrays or objects nested deeper than the limit, whatever holds them', () => {
    expect(findRefused(JSON.parse(nested(MAX_JSON_DEPTH)), 'body')).toBeUndefined();
    expect(findRefused(JSON.parse(nested(MAX_JSON_DEPTH + 1)), 'body')?.message).toMatch(/nested more than 64/);
    expect(findRefused({ a: { b: JSON.parse(nested(100)) } }, 'body')?.path).toMatch(/^body\.a\.b(\.0)+$/);
    // Hostile text is still found below the limit, and without one at any depth.
    expect(findRefused({ a: ['x\u0000'] }, 'body')).toEqual({
      path: 'body.a.0',
      message: expect.stringMatching(/NUL/),
    });
  });

  it('a body nested 10,000 deep is 400 validation_failed on every route, and stores nothing', async () => {
    const before = (await get('/api/v1/patients')).json().items.length;
    // Once a 500 (stack overflow) where the value was serialised again: a private skill's call.
    for (const [url, payload] of [
      ['/api/v1/patients', `{"givenName":"Ann","familyName":"Lee","x":${nested(10_000)}}`],
      ['/api/v1/skills/invoke', `{"slug":"probe-skill","tool":"echo","input":{"x":${nested(10_000)}}}`],
      ['/api/v1/tasks', `{"title":"Call back","x":${nested(10_000)}}`],
    ] as const) {
      const res = await app.inject({
        method: 'POST',
        url,
        payload,
        headers: { authorization: `Bearer ${ws.admin.token}`, 'content-type': 'application/json' },
      });
      expectProblem(res, 400, 'validation_failed');
      expect(res.json().detail, url).toMatch(/nested more than 64 levels/);
    }
    expect((await get('/api/v1/patients')).json().items.length).toBe(before);
    // A body within the limit is read as before.
    const ok = await app.inject({
      method: 'POST',
      url: '/api/v1/patients',
      payload: `{"givenName":"Ann","familyName":"Lee","x":${nested(40)}}`,
      headers: { authorization: `Bearer ${ws.admin.token}`, 'content-type': 'application/json' },
    });
    expect(ok.statusCode, ok.body).toBe(201);
  });
});

describe('caching and logs', () => {
  it('API responses with patient data, credentials and audit rows are no-store', async () => {
    for (const url of ['/api/v1/patients', '/api/v1/me', '/api/v1/auth/tokens', '/api/v1/audit']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
    expect((await get('/api/v1/patients/pat_unknown')).headers['cache-control']).toBe('no-store');
  });

  it('one log line per request, with the route pattern and never the query string', async () => {
    lines.length = 0;
    const res = await get('/api/v1/patients?q=Maria%20Lopez', { 'x-request-id': 'req-log-probe-1' });
    expect(res.statusCode).toBe(200);
    await get('/api/v1/patients/pat_does_not_exist', { 'x-request-id': 'req-log-probe-2' });
    const mine = lines.filter((l) => l.includes('req-log-probe-1'));
    expect(mine).toHaveLength(1);
    const entry = JSON.parse(mine[0]);
    expect(entry).toMatchObject({ route: '/api/v1/patients', status: 200, method: 'GET' });
    expect(lines.join('\n')).not.toMatch(/Maria|Lopez|q=/);
    const second = lines.filter((l) => l.includes('req-log-probe-2'));
    expect(second).toHaveLength(1);
    expect(JSON.parse(second[0]).route).toBe('/api/v1/patients/:id');
    // A path no route matched is what the sender wrote: only the app's own route words are logged.
    const unmatched = await get('/api/v1/nonexistent/Zebulon-Quixote/MRN-PHI-777?dob=1980-02-03', {
      'x-request-id': 'req-log-probe-3',
    });
    expect(unmatched.statusCode).toBe(404);
    const third = lines.filter((l) => l.includes('req-log-probe-3'));
    expect(third).toHaveLength(1);
    expect(JSON.parse(third[0])).toMatchObject({ status: 404, path: '/api/v1/:x/:x/:x' });
    expect(lines.join('\n')).not.toMatch(/Zebulon|MRN-PHI|nonexistent|1980/);
    await get('/api/v1/patients/pat_1/Zebulon-Quixote', { 'x-request-id': 'req-log-probe-4' });
    const fourth = lines.find((l) => l.includes('req-log-probe-4'));
    expect(JSON.parse(fourth ?? '{}').path).toBe('/api/v1/patients/:x/:x');
  });

  it("a failed statement is logged with its text and the database's reason, never its parameters", async () => {
    let failure: unknown;
    try {
      await testDb.database.db.execute(
        sql`SELECT ${'Referral for Zelda Quartermaine'}::text AS subject, ${'not a number'}::int AS n`,
      );
    } catch (err) {
      failure = err;
    }
    expect(String((failure as Error).message)).toContain('Zelda'); // Drizzle's own message quotes it
    lines.length = 0;
    app.log.error({ err: failure }, 'unhandled error');
    const logged = lines.join('\n');
    expect(logged).toContain('Failed query: SELECT');
    expect(logged).toContain('invalid input syntax for type integer');
    expect(logged).not.toMatch(/Zelda|Quartermaine|not a number/);
  });

  it('never logs the parameters when one of them is an address, a number or a URL with a query', async () => {
    // The scrub of addresses ran first and changed the "params: …" line, which then no longer matched the
    // parameters to drop: the name, a password hash and the text beside the address were all logged.
    let failure: unknown;
    try {
      await testDb.database.db.execute(
        sql`SELECT ${'zelda@example.com'}::text, ${'Zelda Quux'}::text, ${'scrypt$16384$8$1$secrethash'}::text,
                   ${'+15551234567'}::text, ${'line one\nZebulon on line two'}::text, ${'https://x.example/?q=Quux'}::text,
                   ${'not a number'}::int`,
      );
    } catch (err) {
      failure = err;
    }
    lines.length = 0;
    app.log.error({ err: failure }, 'unhandled error');
    const logged = lines.join('\n');
    expect(logged).toContain('Failed query: SELECT');
    expect(logged).toContain('params: [not logged]');
    expect(logged).not.toMatch(/Zelda|Quux|secrethash|5551234567|Zebulon|not a number/);
  });

  it('pathOnly drops the query', () => {
    expect(pathOnly('/a/b?q=Maria')).toBe('/a/b');
    expect(pathOnly('/a')).toBe('/a');
  });
});

describe('metrics', () => {
  it('records latency for every route by its pattern', async () => {
    await get('/api/v1/me');
    await get('/api/v1/patients/pat_x');
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(
      /atrium_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/me",status="200"\}/,
    );
    expect(text).toMatch(/route="\/api\/v1\/patients\/:id",status="404"/);
    expect(text).not.toContain('pat_x');
  });
});

describe('OpenAPI media types', () => {
  it('documents every error as application/problem+json and the event stream as text/event-stream', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    let errorResponses = 0;
    for (const [path, item] of Object.entries(doc.paths) as [
      string,
      Record<string, { responses?: Record<string, { content?: object }> }>,
    ][]) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          if (!/^[45]/.test(status) || !response.content) continue;
          errorResponses++;
          // The cron health checks answer a failing run as health+json with 503 (contract §9).
          const expected =
            path.startsWith('/api/v1/cron/') && status === '503'
              ? 'application/health+json'
              : 'application/problem+json';
          expect(Object.keys(response.content), `${path} ${status}`).toEqual([expected]);
        }
      }
    }
    expect(errorResponses).toBeGreaterThan(20);
    const stream = doc.paths['/api/v1/direct-messages/{threadId}/events'].get.responses['200'];
    expect(Object.keys(stream.content)).toEqual(['text/event-stream']);
  });
});

describe('times and days a request may carry', () => {
  it('are refused outside the years PostgreSQL stores (no year 0), before any query', () => {
    const ok = (schema: typeof instantSchema | typeof daySchema, v: string) => schema.safeParse(v).success;
    expect(ok(instantSchema, '2026-11-24T10:00:00Z')).toBe(true);
    expect(ok(instantSchema, '0001-01-01T00:00:00Z')).toBe(true);
    expect(ok(instantSchema, '9999-12-31T23:59:59Z')).toBe(true);
    expect(ok(instantSchema, '0000-01-01T00:00:00Z')).toBe(false);
    // Year 1 in its own time, but year 0 in UTC, which is what the database is given.
    expect(ok(instantSchema, '0001-01-01T00:00:00+14:00')).toBe(false);
    expect(ok(daySchema, '2024-02-29')).toBe(true);
    expect(ok(daySchema, '2023-02-29')).toBe(false);
    expect(ok(daySchema, '0000-01-01')).toBe(false);
  });
});

describe('configuration', () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  it('a bad ATRIUM_WEBHOOK_ALLOW_CIDRS stops the start naming the variable', () => {
    expect(() =>
      loadConfig({
        ATRIUM_ENCRYPTION_KEY: key,
        ATRIUM_DATA_DIR: '/tmp/atrium-cfg',
        ATRIUM_WEBHOOK_ALLOW_CIDRS: '10.0.0.0/33',
      }),
    ).toThrow(/ATRIUM_WEBHOOK_ALLOW_CIDRS/);
    expect(() =>
      loadConfig({
        ATRIUM_ENCRYPTION_KEY: key,
        ATRIUM_DATA_DIR: '/tmp/atrium-cfg',
        ATRIUM_WEBHOOK_ALLOW_CIDRS: 'nonsense',
      }),
    ).toThrow(ConfigError);
    const ok = loadConfig({
      ATRIUM_ENCRYPTION_KEY: key,
      ATRIUM_DATA_DIR: '/tmp/atrium-cfg',
      ATRIUM_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8, ::1/128',
    });
    expect(ok.webhooks.allowCidrs).toEqual(['127.0.0.0/8', '::1/128']);
  });

  it('NODE_ENV is compared without regard to case', () => {
    expect(() => loadConfig({ NODE_ENV: 'Production', ATRIUM_EMULATORS: 'on', ATRIUM_ENCRYPTION_KEY: key })).toThrow(
      ConfigError,
    );
    expect(
      loadConfig({ NODE_ENV: 'PRODUCTION', ATRIUM_ENCRYPTION_KEY: key, ATRIUM_OPERATOR_TOKEN: 'x'.repeat(20) }).env,
    ).toBe('production');
  });
});

describe('OpenAPI response check used by every integration test', () => {
  it('refuses an undocumented status, a wrong media type and a body off its schema', async () => {
    const { assertMatchesOpenApi } = await import('../../../test/helpers/openapi-check.js');
    const fake = (statusCode: number, contentType: string, body: string) =>
      ({ statusCode, headers: { 'content-type': contentType, 'x-request-id': 'req_fake' }, body }) as never;
    const me = await get('/api/v1/me');
    expect(() => assertMatchesOpenApi(app, 'GET', '/api/v1/me', me)).not.toThrow();
    expect(() => assertMatchesOpenApi(app, 'GET', '/api/v1/me', fake(200, 'text/plain', 'hi'))).toThrow(/text\/plain/);
    expect(() => assertMatchesOpenApi(app, 'GET', '/api/v1/me', fake(200, 'application/json', '{"user":1}'))).toThrow(
      /schema/,
    );
    expect(() => assertMatchesOpenApi(app, 'GET', '/api/v1/me', fake(401, 'application/json', me.body))).toThrow(
      /application\/problem\+json/,
    );
  });
});
