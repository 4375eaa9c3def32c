import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unusedPort } from '../../../test/helpers/ports.js';
import { UnsafeUrlError } from '../http/url-guard.js';
import { metricsRegistry } from '../metrics.js';
import { AttemptFailure, breakerCount, breakerFor, resetBreakers } from './breaker.js';
import {
  closeUpstreamPools,
  createUpstream,
  parseRetryAfterMs,
  UpstreamError,
  upstreamAppError,
  upstreamErrorRate,
  upstreamStats,
} from './index.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  remotePort: number;
  at: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

/** A plain HTTP server on 127.0.0.1 that records requests and answers with the current handler. */
async function startServer() {
  const seen: Seen[] = [];
  let handler: Handler = (_req, res) => res.end('ok');
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        remotePort: req.socket.remotePort ?? 0,
        at: Date.now(),
      };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    handle(next: Handler) {
      handler = next;
    },
    /** Answers with these statuses in turn, then 200 'ok' for ever. */
    sequence(...statuses: Array<number | [number, Record<string, string>]>) {
      let i = 0;
      handler = (_req, res) => {
        const next = statuses[i++];
        if (next === undefined) return void res.end('ok');
        const [status, headers] = Array.isArray(next) ? next : [next, {}];
        res.writeHead(status, headers).end(`status ${status}`);
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type TestServer = Awaited<ReturnType<typeof startServer>>;

async function failureOf(promise: Promise<unknown>): Promise<UpstreamError> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err as UpstreamError,
  );
}

let server: TestServer;
let n = 0;
/** A fresh upstream name per test, so breakers and stats do not leak between tests. */
const uniqueName = () => `test-${++n}`;
const fastRetries = { retryBaseDelayMs: 10, retryMaxDelayMs: 20 };

beforeAll(async () => {
  server = await startServer();
});
beforeEach(() => {
  server.seen.length = 0;
  server.handle((_req, res) => res.end('ok'));
});
afterAll(async () => {
  await closeUpstreamPools();
  await server.close();
});

describe('upstream calls against a local HTTP server', () => {
  it('sends method, path, query, JSON body and headers, and returns the answer', async () => {
    server.handle((_req, res) =>
      res.writeHead(201, { 'content-type': 'application/json', 'x-a': 'b' }).end('{"id":1}'),
    );
    const api = createUpstream({
      name: uniqueName(),
      baseUrl: `${server.url}/v1/`,
      headers: { authorization: 'Bearer k' },
    });
    const res = await api.request({
      method: 'POST',
      path: '/things',
      query: { q: 'x y', skip: undefined },
      json: { a: 1 },
    });
    expect(res).toMatchObject({ status: 201, ok: true, attempts: 1, headers: { 'x-a': 'b' } });
    expect(res.json()).toEqual({ id: 1 });
    const [req] = server.seen;
    expect(req).toMatchObject({ method: 'POST', url: '/v1/things?q=x+y', body: '{"a":1}' });
    expect(req.headers).toMatchObject({ authorization: 'Bearer k', 'content-type': 'application/json' });
  });

  it('sends form-encoded bodies (token endpoints)', async () => {
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url });
    await api.request({
      method: 'POST',
      path: '/token',
      form: { grant_type: 'refresh_token', refresh_token: 'a b&c', scope: undefined },
    });
    expect(server.seen[0].body).toBe('grant_type=refresh_token&refresh_token=a+b%26c');
    expect(server.seen[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('reuses keep-alive connections', async () => {
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url });
    for (let i = 0; i < 6; i++) await api.request({ path: `/n/${i}` });
    const ports = new Set(server.seen.map((req) => req.remotePort));
    // undici may open a second socket while the first settles; never one per request.
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it('forwards the caller request id as x-request-id', async () => {
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url });
    await api.request({ path: '/a', ctx: { requestId: 'req-ctx-1' } });
    await api.request({ path: '/b', requestId: 'req-explicit-2' });
    await api.request({ path: '/c' });
    expect(server.seen.map((req) => req.headers['x-request-id'])).toEqual(['req-ctx-1', 'req-explicit-2', undefined]);
  });

  it('times out when the headers are late, and when the body never ends', async () => {
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, timeoutMs: 200, retries: 0 });
    server.handle((_req, res) => void setTimeout(() => res.end('late'), 1500));
    const started = Date.now();
    const late = await failureOf(api.request({ path: '/slow' }));
    expect(late).toBeInstanceOf(UpstreamError);
    expect(late.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1000);

    server.handle((_req, res) => {
      res.writeHead(200);
      res.write('partial'); // and never ends
    });
    expect((await failureOf(api.request({ path: '/stuck' }))).kind).toBe('timeout');
  });

  it("stops when the caller's signal aborts, without counting it against the upstream", async () => {
    const name = uniqueName();
    const api = createUpstream({ name, baseUrl: server.url, breaker: { consecutiveFailures: 1 } });
    server.handle((_req, res) => void setTimeout(() => res.end('late'), 1000));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await failureOf(api.request({ path: '/slow', signal: controller.signal }));
    expect(err.kind).toBe('aborted');
    expect(upstreamStats(name)).toMatchObject({ errors: 0, breaker: 'closed' });
  });

  it('reports a refused connection as connect, after retrying an idempotent call', async () => {
    const api = createUpstream({
      name: uniqueName(),
      baseUrl: `http://127.0.0.1:${await unusedPort()}`,
      ...fastRetries,
    });
    const err = await failureOf(api.request({ path: '/' }));
    expect(err.kind).toBe('connect');
    expect(err.message).toContain('ECONNREFUSED');
    expect(err.details.attempts).toBe(3);
  });
});

describe('retries', () => {
  it('retries a GET on 503 and returns the later success', async () => {
    server.sequence(503);
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, ...fastRetries });
    const res = await api.request({ path: '/flaky' });
    expect(res).toMatchObject({ status: 200, attempts: 2 });
    expect(server.seen.map((req) => req.method)).toEqual(['GET', 'GET']);
  });

  it('never retries a POST, even on 503 or a timeout', async () => {
    server.sequence(503);
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, timeoutMs: 150, ...fastRetries });
    const res = await api.request({ method: 'POST', path: '/charge', body: 'x' });
    expect(res).toMatchObject({ status: 503, attempts: 1, ok: false });
    expect(server.seen).toHaveLength(1);

    server.handle((_req, res) => void setTimeout(() => res.end('late'), 500));
    const err = await failureOf(api.request({ method: 'POST', path: '/charge', body: 'y' }));
    expect(err.kind).toBe('timeout');
    expect(server.seen).toHaveLength(2);
  });

  it('retries a POST the caller marks idempotent (e.g. one carrying an idempotency key)', async () => {
    server.sequence(502, 504);
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, ...fastRetries });
    const res = await api.request({
      method: 'POST',
      path: '/pay',
      headers: { 'idempotency-key': 'k1' },
      idempotent: true,
    });
    expect(res).toMatchObject({ status: 200, attempts: 3 });
    expect(server.seen).toHaveLength(3);
  });

  it('retryUnsent: a message send is retried only when the upstream certainly did not act on it', async () => {
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, timeoutMs: 150, ...fastRetries });
    const send = (body: string) => api.request({ method: 'POST', path: '/send', body, retryUnsent: true });
    // Rate limited: refused before anything was done, so sent again (after Retry-After).
    server.sequence([429, { 'retry-after': '0' }]);
    expect(await send('a')).toMatchObject({ status: 200, attempts: 2 });
    expect(server.seen).toHaveLength(2);
    // A 503 may have been half-done: answered as it is.
    server.seen.length = 0;
    server.sequence(503);
    expect(await send('b')).toMatchObject({ status: 503, attempts: 1 });
    // A timeout: the send may have happened, so never again.
    server.seen.length = 0;
    server.handle((_req, res) => void setTimeout(() => res.end('late'), 500));
    expect((await failureOf(send('c'))).kind).toBe('timeout');
    expect(server.seen).toHaveLength(1);
    // A reset after the request was read: it may have been acted on, so not retried either.
    server.seen.length = 0;
    server.handle((req) => req.socket.destroy());
    const reset = await failureOf(send('d'));
    expect(reset.kind).toBe('connect');
    expect(reset.details.attempts).toBe(1);
    expect(server.seen).toHaveLength(1);
    // Refused: the request never left, so it is tried again up to the budget.
    const closed = createUpstream({
      name: uniqueName(),
      baseUrl: `http://127.0.0.1:${await unusedPort()}`,
      ...fastRetries,
    });
    const refused = await failureOf(closed.request({ method: 'POST', path: '/send', body: 'e', retryUnsent: true }));
    expect(refused.details).toMatchObject({ code: 'ECONNREFUSED', attempts: 3 });
    const once = await failureOf(closed.request({ method: 'POST', path: '/send', body: 'f' }));
    expect(once.details.attempts).toBe(1);
  });

  it('does not retry statuses that will not change (500, 4xx)', async () => {
    server.sequence(500);
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, ...fastRetries });
    expect((await api.request({ path: '/bug' })).status).toBe(500);
    server.sequence(404);
    expect((await api.request({ path: '/missing' })).status).toBe(404);
    expect(server.seen).toHaveLength(2);
  });

  it('gives up after the retry budget and returns the last answer', async () => {
    server.sequence(503, 503, 503, 503);
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, retries: 2, ...fastRetries });
    expect(await api.request({ path: '/down' })).toMatchObject({ status: 503, attempts: 3 });
    expect(server.seen).toHaveLength(3);
  });

  it('waits as long as Retry-After asks, within the cap', async () => {
    server.sequence([429, { 'retry-after': '1' }]);
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, ...fastRetries });
    const res = await api.request({ path: '/limited' });
    expect(res).toMatchObject({ status: 200, attempts: 2 });
    const [first, second] = server.seen;
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
  });

  it('does not wait for a Retry-After past the cap: the answer comes back at once', async () => {
    server.sequence([503, { 'retry-after': '120' }]);
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, retryAfterCapMs: 5000, ...fastRetries });
    const started = Date.now();
    const res = await api.request({ path: '/maintenance' });
    expect(res).toMatchObject({ status: 503, attempts: 1, headers: { 'retry-after': '120' } });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(server.seen).toHaveLength(1);
  });

  it('reads a retry hint from the body where the upstream puts it there (retryAfterFromBody), within the cap', async () => {
    // Telegram's 429: the wait in the body, no Retry-After header.
    const limited = (seconds: number, headers: Record<string, string> = {}) =>
      server.handle((_req, res, seen) => {
        if (server.seen.indexOf(seen) > 0) return void res.end('ok');
        res
          .writeHead(429, { 'content-type': 'application/json', ...headers })
          .end(JSON.stringify({ ok: false, error_code: 429, parameters: { retry_after: seconds } }));
      });
    const fromBody = (body: Buffer) =>
      (JSON.parse(body.toString('utf8')) as { parameters: { retry_after: number } }).parameters.retry_after * 1000;
    const api = createUpstream({
      name: uniqueName(),
      baseUrl: server.url,
      retryAfterCapMs: 5000,
      retryAfterFromBody: fromBody,
      ...fastRetries,
    });
    const send = () => api.request({ method: 'POST', path: '/send', body: 'hi', retryUnsent: true });
    // A send (retried only because a 429 certainly did nothing) waits the second it was told.
    limited(1);
    expect(await send()).toMatchObject({ status: 200, attempts: 2 });
    expect(server.seen[1].at - server.seen[0].at).toBeGreaterThanOrEqual(950);
    // Past the cap: the 429 comes back at once, not retried.
    server.seen.length = 0;
    limited(60);
    const started = Date.now();
    expect(await send()).toMatchObject({ status: 429, attempts: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(server.seen).toHaveLength(1);
    // A readable Retry-After header wins over the body.
    server.seen.length = 0;
    limited(60, { 'retry-after': '0' });
    expect(await send()).toMatchObject({ status: 200, attempts: 2 });
    // The hint changes only how long to wait, never what is retried: a plain POST is still sent once.
    server.seen.length = 0;
    limited(0);
    expect(await api.request({ method: 'POST', path: '/send', body: 'once' })).toMatchObject({
      status: 429,
      attempts: 1,
    });
    // A body the reader cannot read (it throws) means the usual backoff.
    server.seen.length = 0;
    server.sequence(429);
    expect(await send()).toMatchObject({ status: 200, attempts: 2 });
    expect(server.seen[1].at - server.seen[0].at).toBeLessThan(500);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfterMs('3', now)).toBe(3000);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon', now)).toBeNull();
    expect(parseRetryAfterMs(undefined, now)).toBeNull();
  });
});

describe('circuit breaker', () => {
  const breaker = { consecutiveFailures: 3, halfOpenAfterMs: 300 };

  it('opens after N failures, then fails fast without touching the server', async () => {
    server.handle((_req, res) => res.writeHead(500).end('down'));
    const name = uniqueName();
    const api = createUpstream({ name, baseUrl: server.url, breaker, retries: 0 });
    for (let i = 0; i < 3; i++) expect((await api.request({ method: 'POST', path: '/x' })).status).toBe(500);
    expect(upstreamStats(name).breaker).toBe('open');

    const err = await failureOf(api.request({ method: 'POST', path: '/x' }));
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err.kind).toBe('breaker_open');
    expect(server.seen).toHaveLength(3);
    expect(upstreamStats(name)).toMatchObject({ count: 3, errors: 3, errorRate: 1, rejected: 1 });

    const problem = upstreamAppError(err, 'The test API');
    expect(problem).toMatchObject({ code: 'unavailable', status: 503 });
  });

  it('opens on transport failures too, and stops retries at once', async () => {
    const name = uniqueName();
    const api = createUpstream({
      name,
      baseUrl: `http://127.0.0.1:${await unusedPort()}`,
      breaker: { consecutiveFailures: 2, halfOpenAfterMs: 60_000 },
      ...fastRetries,
    });
    // A GET is retried: its second attempt is the second failure, the third finds the breaker open.
    const err = await failureOf(api.request({ path: '/' }));
    expect(err.kind).toBe('breaker_open');
    expect(upstreamStats(name)).toMatchObject({ count: 2, errors: 2, rejected: 1, breaker: 'open' });
  });

  it('half-opens after the cool-down and closes after a success', async () => {
    server.handle((_req, res) => res.writeHead(503).end('down'));
    const name = uniqueName();
    const api = createUpstream({ name, baseUrl: server.url, breaker, retries: 0 });
    for (let i = 0; i < 3; i++) await api.request({ path: '/y' });
    expect((await failureOf(api.request({ path: '/y' }))).kind).toBe('breaker_open');

    await new Promise((resolve) => setTimeout(resolve, 350));
    // Still failing: the half-open test call reaches the server and opens the breaker again.
    expect((await api.request({ path: '/y' })).status).toBe(503);
    expect(server.seen).toHaveLength(4);
    expect((await failureOf(api.request({ path: '/y' }))).kind).toBe('breaker_open');

    await new Promise((resolve) => setTimeout(resolve, 350));
    server.handle((_req, res) => res.end('back'));
    expect((await api.request({ path: '/y' })).text()).toBe('back');
    expect(upstreamStats(name).breaker).toBe('closed');
    for (let i = 0; i < 3; i++) expect((await api.request({ path: '/y' })).status).toBe(200);
    expect(server.seen).toHaveLength(8);
  });

  it('opens on a failure ratio even without N failures in a row', async () => {
    let i = 0;
    server.handle((_req, res) => res.writeHead(i++ % 2 === 0 ? 502 : 200).end());
    const name = uniqueName();
    const api = createUpstream({
      name,
      baseUrl: server.url,
      retries: 0,
      breaker: { consecutiveFailures: 2, failureRatio: 0.4, windowSize: 10, minimumCalls: 6 },
    });
    // Fail, ok, fail, ok, fail, ok, fail: never 2 in a row, but 4 of 7 (> 40 %) once 6 calls are in.
    for (let call = 0; call < 7; call++) await api.request({ path: '/z' });
    expect(upstreamStats(name).breaker).toBe('open');
  });

  it('keeps one breaker per origin and breaker key', async () => {
    const other = await startServer();
    try {
      server.handle((_req, res) => res.writeHead(500).end());
      const name = uniqueName();
      const config = { name, breaker, retries: 0 };
      const api = createUpstream(config);
      for (let i = 0; i < 3; i++) await api.request({ url: `${server.url}/a` });
      expect((await failureOf(api.request({ url: `${server.url}/a` }))).kind).toBe('breaker_open');
      expect((await api.request({ url: `${other.url}/a` })).status).toBe(200);
      expect((await api.request({ url: `${server.url}/a`, breakerKey: 'tenant-2' })).status).toBe(500);
    } finally {
      await other.close();
    }
  });

  it('the error-rate probe: an open breaker with no calls in the window does not fail it', async () => {
    server.handle((_req, res) => res.writeHead(503).end('down'));
    const name = uniqueName();
    const api = createUpstream({ name, baseUrl: server.url, breaker, retries: 0 });
    for (let i = 0; i < 3; i++) await api.request({ path: '/e' });
    // While the failures are in the window, and while the breaker refuses calls, the probe fails.
    expect(upstreamErrorRate(name, 60_000)).toMatchObject({ status: 'fail', observedValue: 100 });
    expect((await failureOf(api.request({ path: '/e' }))).kind).toBe('breaker_open');
    await new Promise((resolve) => setTimeout(resolve, 350));
    // The upstream has recovered; nobody has called since the cool-down, so cockatiel still says Open
    // (it half-opens on the next call only). Over a window holding no call, that alone is no failure.
    server.handle((_req, res) => res.end('ok'));
    expect(upstreamStats(name).breaker).toBe('open');
    const quiet = upstreamErrorRate(name, 200);
    expect(quiet.status, quiet.output).toBe('pass');
    expect(quiet).toMatchObject({ observedValue: 0, output: expect.stringContaining('0 of 0 calls failed') });
    // The next real call half-opens and closes it: the probe passes.
    expect((await api.request({ path: '/e' })).status).toBe(200);
    expect(upstreamErrorRate(name, 200)).toMatchObject({ status: 'pass' });
  });

  it('the breaker map stays bounded yet keeps new breakers: idle ones are evicted whatever their state, held or cooling ones not', async () => {
    resetBreakers();
    const fail = () => {
      throw new AttemptFailure(new Error('down'));
    };
    const open = async (scope: string, halfOpenAfterMs: number) => {
      const b = breakerFor('evict-open', scope, { consecutiveFailures: 1, halfOpenAfterMs });
      await b.policy.execute(fail).catch(() => undefined);
      b.release();
      return b;
    };
    try {
      // Private-skill breakers are per origin and workspace: many dead endpoints open many breakers.
      let last: Awaited<ReturnType<typeof open>> | undefined;
      for (let i = 0; i < 2100; i++) last = await open(`dead-${i}`, 1000);
      // Still cooling down: kept (forgetting them would let the dead origins be called at once), the
      // newest too: its origin's next call finds it open.
      expect(breakerCount()).toBe(2100);
      const again = breakerFor('evict-open', 'dead-2099', {});
      again.release();
      expect(again).toBe(last);
      await new Promise((r) => setTimeout(r, 1050));
      // Past their cool-down they are idle: the next new breaker evicts them down to the limit.
      breakerFor('evict-open', 'one-more', {}).release();
      expect(breakerCount()).toBeLessThanOrEqual(2000);
      // Breakers that stay open and cool down for long are kept up to a hard cap, then evicted anyway.
      resetBreakers();
      for (let i = 0; i < 4100; i++) await open(`cooling-${i}`, 60_000);
      expect(breakerCount()).toBeLessThanOrEqual(4000);
      expect(breakerCount()).toBeGreaterThan(2000);
    } finally {
      resetBreakers();
    }
  });

  it('a breaker held by a call in flight is not evicted, however many are created meanwhile', async () => {
    resetBreakers();
    try {
      const name = uniqueName();
      const api = createUpstream({ name, baseUrl: server.url, breaker: { consecutiveFailures: 2 }, retries: 0 });
      server.handle((_req, res) => res.writeHead(500).end());
      expect((await api.request({ path: '/held' })).status).toBe(500);
      // The second call is held by the server while thousands of other breakers come and go.
      let answer: (() => void) | undefined;
      server.handle((_req, res) => {
        answer = () => res.writeHead(500).end();
      });
      const second = api.request({ path: '/held' });
      while (!answer) await new Promise((r) => setTimeout(r, 5));
      for (let i = 0; i < 2500; i++) breakerFor('evict-flood', `origin-${i}`, {}).release();
      answer();
      expect((await second).status).toBe(500);
      // Its second failure in a row went to the breaker the calls share: open, the next call fails fast.
      expect((await failureOf(api.request({ path: '/held' }))).kind).toBe('breaker_open');
      expect(server.seen).toHaveLength(2);
    } finally {
      resetBreakers();
    }
  });

  it('can be turned off', async () => {
    server.handle((_req, res) => res.writeHead(500).end());
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, breaker: false, retries: 0 });
    for (let i = 0; i < 8; i++) expect((await api.request({ path: '/w' })).status).toBe(500);
    expect(server.seen).toHaveLength(8);
  });
});

describe('metrics and stats', () => {
  it('records latency and errors per upstream', async () => {
    const name = uniqueName();
    const api = createUpstream({ name, baseUrl: server.url, retries: 0 });
    server.handle((req, res) => void setTimeout(() => res.writeHead(req.url === '/bad' ? 502 : 200).end(), 20));
    for (let i = 0; i < 3; i++) await api.request({ path: '/good' });
    await api.request({ path: '/bad' });

    const stats = upstreamStats(name);
    expect(stats).toMatchObject({
      upstream: name,
      count: 4,
      errors: 1,
      errorRate: 0.25,
      rejected: 0,
      breaker: 'closed',
    });
    expect(stats.p50Ms).toBeGreaterThanOrEqual(15);
    expect(stats.p95Ms).toBeGreaterThanOrEqual(stats.p50Ms ?? 0);
    expect(upstreamStats('never-called')).toMatchObject({ count: 0, errorRate: 0, p50Ms: null, breaker: 'closed' });

    const text = await metricsRegistry.metrics();
    expect(text).toContain(`atrium_upstream_request_duration_seconds_count{upstream="${name}",outcome="ok"} 3`);
    expect(text).toContain(`atrium_upstream_request_duration_seconds_count{upstream="${name}",outcome="http_5xx"} 1`);
    expect(text).toContain(`atrium_upstream_errors_total{upstream="${name}",kind="http_5xx"} 1`);
    expect(text).toContain(`atrium_upstream_breaker_state{upstream="${name}"} 0`);
  });
});

describe('response size cap', () => {
  it('fails with body_too_large past the cap, declared or streamed', async () => {
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url, maxResponseBytes: 1000, retries: 0 });
    server.handle((_req, res) => res.end('x'.repeat(5000)));
    expect((await failureOf(api.request({ path: '/big' }))).kind).toBe('body_too_large');

    server.handle((_req, res) => {
      res.writeHead(200); // chunked: no content-length to judge by
      for (let i = 0; i < 10; i++) res.write('y'.repeat(500));
      res.end();
    });
    expect((await failureOf(api.request({ path: '/stream' }))).kind).toBe('body_too_large');

    server.handle((_req, res) => res.end('z'.repeat(1000)));
    expect((await api.request({ path: '/exact' })).body.length).toBe(1000);
  });

  it('keeps the first bytes in truncate mode', async () => {
    const api = createUpstream({
      name: uniqueName(),
      baseUrl: server.url,
      maxResponseBytes: 100,
      oversize: 'truncate',
    });
    server.handle((_req, res) => res.end('q'.repeat(5000)));
    const res = await api.request({ path: '/big' });
    expect(res).toMatchObject({ status: 200, truncated: true });
    expect(res.text()).toBe('q'.repeat(100));
  });
});

describe('errors', () => {
  it('throws http_status for 4xx/5xx when asked, with the status and a body excerpt', async () => {
    server.handle((_req, res) => res.writeHead(400).end('{"error":"invalid_grant"}'));
    const api = createUpstream({ name: uniqueName(), baseUrl: server.url });
    const err = await failureOf(api.request({ method: 'POST', path: '/token', throwOnHttpError: true }));
    expect(err).toMatchObject({ kind: 'http_status', status: 400, details: { body: '{"error":"invalid_grant"}' } });
    expect(upstreamAppError(err, 'The provider')).toMatchObject({ code: 'upstream_failed', status: 502 });
  });

  it('applies the customer URL policy before connecting', async () => {
    const api = createUpstream({ name: uniqueName(), customerUrls: { allowCidrs: [] } });
    const plain = await failureOf(api.request({ method: 'POST', url: `${server.url}/hook` }));
    expect(plain).toBeInstanceOf(UnsafeUrlError);
    expect((plain as unknown as UnsafeUrlError).reason).toBe('scheme');
    const port = new URL(server.url).port;
    const blocked = await failureOf(api.request({ method: 'POST', url: `https://127.0.0.1:${port}/hook` }));
    expect((blocked as unknown as UnsafeUrlError).reason).toBe('blocked_address');
    expect(server.seen).toHaveLength(0);
  });
});
