import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { addMember, createWorkspace, type TestWorkspace } from './helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const expectProblem = (
  res: { statusCode: number; headers: Record<string, unknown>; json(): Record<string, unknown> },
  status: number,
  code: string,
) => {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  expect(typeof body.type).toBe('string');
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body.requestId).toBe(res.headers['x-request-id']);
  return body;
};

describe('problem+json for every error', () => {
  it('400 validation_failed lists each problem', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      token: ws.admin.token,
      payload: { givenName: '', dateOfBirth: 'yesterday' },
    });
    const body = expectProblem(res, 400, 'validation_failed');
    const paths = (body.errors as { path: string }[]).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['body.givenName', 'body.familyName', 'body.dateOfBirth']));
  });

  it('400 for malformed JSON, 415 for other media types, 413 over 1 MiB', async () => {
    // Bytes that are not UTF-8 are refused, not stored as U+FFFD.
    const notUtf8 = Buffer.concat([
      Buffer.from('{"givenName":"Ana'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('","familyName":"X"}'),
    ]);
    const refused = expectProblem(
      await t.request({
        method: 'POST',
        url: '/api/v1/patients',
        token: ws.admin.token,
        payload: notUtf8,
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'validation_failed',
    );
    expect(refused.detail).toContain('UTF-8');
    expectProblem(
      await t.request({
        method: 'POST',
        url: '/api/v1/patients',
        token: ws.admin.token,
        payload: '{"givenName":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await t.request({
        method: 'POST',
        url: '/api/v1/patients',
        token: ws.admin.token,
        payload: 'givenName=x',
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
    const big = JSON.stringify({ givenName: 'x'.repeat(1024 * 1024 + 10), familyName: 'y' });
    expectProblem(
      await t.request({
        method: 'POST',
        url: '/api/v1/patients',
        token: ws.admin.token,
        payload: big,
        headers: { 'content-type': 'application/json' },
      }),
      413,
      'payload_too_large',
    );
    const list = await t.request({ method: 'GET', url: '/api/v1/patients', token: ws.admin.token });
    expect(list.json().items).toEqual([]);
  });

  it('401, 403 (role), 404 (unknown route and unknown resource)', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/patients' }), 401, 'unauthenticated');
    const member = await addMember(t, ws);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/audit', token: member.token }), 403, 'forbidden');
    expectProblem(
      await t.request({ method: 'GET', url: '/api/v1/no-such-thing', token: ws.admin.token }),
      404,
      'not_found',
    );
    expectProblem(await t.request({ method: 'GET', url: '/nothing-here.js' }), 404, 'not_found');
    expectProblem(
      await t.request({ method: 'GET', url: '/api/v1/patients/pat_missing', token: ws.admin.token }),
      404,
      'not_found',
    );
  });

  it('unknown API routes are 404 even without credentials', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/no-such-thing' }), 404, 'not_found');
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/nope', payload: {} }), 404, 'not_found');
  });

  it('decides authentication by the route reached, not the URL as written', async () => {
    const { request } = await import('node:http');
    const raw = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        const url = new URL(t.baseUrl);
        const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: text }),
          );
        });
        req.on('error', reject);
        req.end(body);
      });
    // `/%61pi/v1/…` is routed to `/api/v1/…`: it is an API request, so it needs credentials.
    for (const [method, path, body] of [
      ['GET', '/%61pi/v1/patients', undefined],
      ['POST', '/%61pi/v1/patients', '{"givenName":1}'],
      ['GET', '/api/%76%31/me', undefined],
    ] as const) {
      const res = await raw(method, path, body ? { 'content-type': 'application/json' } : {}, body);
      expect([res.status, res.type], `${method} ${path} → ${res.body}`).toEqual([
        401,
        expect.stringMatching(/^application\/problem\+json/),
      ]);
    }
    // With credentials the encoded path is the same route.
    const me = await raw('GET', '/%61pi/v1/me', { authorization: `Bearer ${ws.admin.token}` });
    expect(me.status, me.body).toBe(200);
    // An absolute-form request line is judged by its path: an unknown API route is a 404 problem, not the app.
    const absolute = await raw('GET', 'http://evil.example/api/v1/nope');
    expect([absolute.status, absolute.type]).toEqual([404, expect.stringMatching(/^application\/problem\+json/)]);
  });

  it("answers the HTTP parser's own refusals (huge headers, a broken request line) as problem+json with a request id", async () => {
    const { connect } = await import('node:net');
    const send = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const url = new URL(t.baseUrl);
        const socket = connect(Number(url.port), url.hostname, () => socket.write(text));
        let out = '';
        socket.on('data', (c) => {
          out += c;
        });
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
      });
    for (const [request, status] of [
      [`GET /api/v1/patients?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
      [`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431],
      ['NOT A REQUEST LINE\r\n\r\n', 400],
    ] as const) {
      const answer = await send(request);
      const [head, body] = answer.split('\r\n\r\n');
      expect(head, answer.slice(0, 200)).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head.toLowerCase()).toContain('content-type: application/problem+json');
      const problem = JSON.parse(body);
      expect(problem).toMatchObject({ status, requestId: expect.stringMatching(/^req_/) });
      expect(head.toLowerCase()).toContain(`x-request-id: ${problem.requestId}`);
    }
  });

  it("counts the router's own refusals in the metrics like any request", async () => {
    // Every GET answered 414 (the registry is the process's: other files' requests may add to it too).
    const count = async () =>
      (await t.request({ method: 'GET', url: '/metrics' })).body
        .split('\n')
        .filter(
          (l) =>
            l.startsWith('atrium_http_request_duration_seconds_count') &&
            l.includes('method="GET"') &&
            l.includes('status="414"'),
        )
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    const before = await count();
    const res = await t.request({ method: 'GET', url: `/api/v1/patients/${'p'.repeat(3000)}`, token: ws.admin.token });
    expect(res.statusCode).toBe(414);
    expect(await count()).toBeGreaterThanOrEqual(before + 1);
  });

  it('an empty body with a JSON content type counts as no body', async () => {
    const token = (
      await t.request({ method: 'POST', url: '/api/v1/auth/tokens', token: ws.admin.token, payload: { name: 'x' } })
    ).json().token;
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-out',
      token,
      payload: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(204);
  });

  it('422 for a well-formed but invalid request', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      token: ws.admin.token,
      payload: { givenName: 'A', familyName: 'B', preferredProviderId: 'usr_nobody' },
    });
    expectProblem(res, 422, 'unknown_provider');
  });
});

describe('request ids and headers', () => {
  it('echoes a sane X-Request-Id and generates one otherwise', async () => {
    const echoed = await t.request({ method: 'GET', url: '/livez', headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const generated = await t.request({ method: 'GET', url: '/livez', headers: { 'x-request-id': 'bad id <script>' } });
    expect(generated.headers['x-request-id']).toMatch(/^req_/);
  });

  it('sets security headers', async () => {
    const res = await t.request({ method: 'GET', url: '/livez' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
  });
});

describe('health, metrics and docs', () => {
  it('/livez, /readyz and /metrics answer without credentials', async () => {
    expect((await t.request({ method: 'GET', url: '/livez' })).json()).toEqual({ status: 'pass' });
    expect((await t.request({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'pass' });
    const metrics = await t.request({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('atrium_http_request_duration_seconds');
    expect(metrics.body).toContain('process_cpu_user_seconds_total');
  });

  it('with ATRIUM_METRICS_TOKEN set, /metrics needs it (or the operator token)', async () => {
    const real = t.app.atrium.config;
    t.app.atrium.config = { ...real, metricsToken: 'metrics-token-0123456789' };
    try {
      expectProblem(await t.request({ method: 'GET', url: '/metrics' }), 401, 'unauthenticated');
      expectProblem(await t.request({ method: 'GET', url: '/metrics', token: 'wrong-token' }), 401, 'unauthenticated');
      for (const token of ['metrics-token-0123456789', real.operatorToken]) {
        const res = await t.request({ method: 'GET', url: '/metrics', token });
        expect(res.statusCode).toBe(200);
        expect(res.body).toContain('atrium_http_request_duration_seconds');
      }
    } finally {
      t.app.atrium.config = real;
    }
    expect(() => loadConfig({ ATRIUM_METRICS_TOKEN: 'short' })).toThrow(/ATRIUM_METRICS_TOKEN/);
  });

  it('serves OpenAPI 3.1 generated from the route schemas, and the docs UI', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const path of [
      '/api/v1/patients',
      '/api/v1/patients/{id}',
      '/api/v1/auth/sign-in',
      '/api/v1/me',
      '/api/v1/audit',
      '/api/v1/operator/workspaces',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.paths['/api/v1/patients'].post.requestBody.content['application/json'].schema.required).toEqual(
      expect.arrayContaining(['givenName', 'familyName']),
    );
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(doc.info).toMatchObject({ title: 'Atrium API', version });
    // An emulator answers as its provider does: every emulator operation documents that other answer.
    const emulated = Object.entries(doc.paths as Record<string, Record<string, { responses?: object }>>).filter(
      ([path]) => path.startsWith('/_emulators/'),
    );
    expect(emulated.length).toBeGreaterThan(10);
    for (const [path, item] of emulated)
      for (const [method, operation] of Object.entries(item))
        expect(operation.responses, `${method} ${path}`).toHaveProperty('default');
    const docs = await t.request({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toMatch(/swagger/i);
    // The page carries the product's own title and version.
    expect(docs.body).toContain(`<title>Atrium API ${version}</title>`);
  });
});
