import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type HttpsReceiver, startHttpsReceiver } from '../../../test/helpers/https-receiver.js';
import { unusedPort } from '../../../test/helpers/ports.js';
import {
  closeSafeClient,
  MAX_RESPONSE_BYTES,
  OutboundError,
  type SafeRequestInit,
  safeRequest,
} from './safe-client.js';
import type { HostResolver } from './url-guard.js';
import { UnsafeUrlError } from './url-guard.js';

const base: SafeRequestInit = { timeoutMs: 3000, allowCidrs: ['127.0.0.0/8'] };

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (err: unknown) => err,
  );
}

describe('safeRequest against local HTTPS servers', () => {
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    if (!process.env.NODE_EXTRA_CA_CERTS) {
      throw new Error('Run with NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem so the test CA is trusted');
    }
    receiver = await startHttpsReceiver();
  });
  afterEach(() => {
    receiver.requests.length = 0;
    receiver.respondWith({ status: 200, body: 'ok' });
  });
  afterAll(async () => {
    await closeSafeClient();
    await receiver.close();
  });

  it('delivers a POST and returns a 2xx response', async () => {
    receiver.respondWith({ status: 202, headers: { 'x-receiver': 'yes' }, body: 'accepted' });
    const res = await safeRequest(`${receiver.url}/hooks/in?q=1`, {
      ...base,
      headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' },
      body: '{"hello":"world"}',
    });
    expect(res).toMatchObject({ status: 202, body: 'accepted', headers: { 'x-receiver': 'yes' } });
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
    const [req] = await receiver.waitFor(1);
    expect(req).toMatchObject({ method: 'POST', path: '/hooks/in?q=1', body: '{"hello":"world"}' });
    expect(req.headers['webhook-id']).toBe('evt_1');
    expect(req.headers.host).toBe(`127.0.0.1:${receiver.port}`);
  });

  it('sends GET without a body', async () => {
    const res = await safeRequest(`${receiver.url}/status`, { ...base, method: 'GET' });
    expect(res.status).toBe(200);
    expect(receiver.requests[0]).toMatchObject({ method: 'GET', path: '/status', body: '' });
  });

  it('reuses keep-alive connections for consecutive requests', async () => {
    for (const body of ['a', 'b', 'c', 'd', 'e', 'f']) await safeRequest(receiver.url, { ...base, body });
    const ports = (await receiver.waitFor(6)).map((req) => req.remotePort);
    // undici may open a second socket while the first is still settling; it must not open one per request.
    expect(new Set(ports).size).toBeLessThanOrEqual(2);
  });

  it('returns a 3xx as-is and does not follow it', async () => {
    const target = await startHttpsReceiver();
    try {
      receiver.respondWith({ status: 302, headers: { location: `${target.url}/elsewhere` } });
      const res = await safeRequest(receiver.url, base);
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(`${target.url}/elsewhere`);
      expect(target.requests).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('returns a 500 as a response, not an error', async () => {
    receiver.respondWith({ status: 500, body: 'boom' });
    expect(await safeRequest(receiver.url, base)).toMatchObject({ status: 500, body: 'boom' });
  });

  it('caps the response body it keeps', async () => {
    receiver.respondWith({ status: 200, body: 'x'.repeat(MAX_RESPONSE_BYTES * 3) });
    const res = await safeRequest(receiver.url, base);
    expect(res.body.length).toBe(MAX_RESPONSE_BYTES);
  });

  it('times out when the headers are late', async () => {
    receiver.respondWith({ status: 200, delayMs: 2000 });
    const started = Date.now();
    const err = await failureOf(safeRequest(receiver.url, { ...base, timeoutMs: 200 }));
    expect(err).toBeInstanceOf(OutboundError);
    expect((err as OutboundError).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('counts the body against the same timeout', async () => {
    receiver.respondWith((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial…'); // and never ends
      return undefined;
    });
    const err = await failureOf(safeRequest(receiver.url, { ...base, timeoutMs: 300 }));
    expect((err as OutboundError).kind).toBe('timeout');
  });

  it('reports a refused connection', async () => {
    const err = await failureOf(safeRequest(`https://127.0.0.1:${await unusedPort()}/`, base));
    expect(err).toBeInstanceOf(OutboundError);
    expect((err as OutboundError).kind).toBe('connection');
    expect((err as OutboundError).message).toContain('ECONNREFUSED');
  });

  it('reports a certificate from an untrusted CA as a TLS failure', async () => {
    const untrusted = await startHttpsReceiver({ tls: 'untrusted' });
    try {
      const err = await failureOf(safeRequest(untrusted.url, base));
      expect(err).toBeInstanceOf(OutboundError);
      expect((err as OutboundError).kind).toBe('tls');
      expect(untrusted.requests).toHaveLength(0);
    } finally {
      await untrusted.close();
    }
  });

  it('refuses unsafe URLs before connecting', async () => {
    const blocked = await failureOf(safeRequest(receiver.url, { ...base, allowCidrs: [] }));
    expect(blocked).toBeInstanceOf(UnsafeUrlError);
    expect((blocked as UnsafeUrlError).reason).toBe('blocked_address');
    const plain = await failureOf(safeRequest(`http://127.0.0.1:${receiver.port}/`, base));
    expect((plain as UnsafeUrlError).reason).toBe('scheme');
    expect(receiver.requests).toHaveLength(0);
  });

  it('pins the connection to the checked address (DNS rebinding)', async () => {
    // pinned.localhost is in the test certificate but not in any resolver: without the pin the
    // connection could not be made at all. Later answers point at the metadata service.
    let calls = 0;
    const resolve = vi.fn<HostResolver>(async () => (calls++ === 0 ? ['127.0.0.1'] : ['169.254.169.254']));
    const url = `https://pinned.localhost:${receiver.port}/hook`;

    const res = await safeRequest(url, { ...base, resolve });
    expect(res.status).toBe(200);
    expect(resolve).toHaveBeenCalledTimes(1);
    const [req] = await receiver.waitFor(1);
    expect(req.headers.host).toBe(`pinned.localhost:${receiver.port}`);

    // Every attempt is checked again: the rebound answer is refused before any connection.
    const err = await failureOf(safeRequest(url, { ...base, resolve }));
    expect((err as UnsafeUrlError).reason).toBe('blocked_address');
    expect(resolve).toHaveBeenCalledTimes(2);
    expect(receiver.requests).toHaveLength(1);
  });

  it('counts slow DNS against the timeout', async () => {
    const resolve: HostResolver = () => new Promise((resolve) => setTimeout(() => resolve(['127.0.0.1']), 1000));
    const err = await failureOf(
      safeRequest(`https://pinned.localhost:${receiver.port}/`, { ...base, resolve, timeoutMs: 100 }),
    );
    expect((err as OutboundError).kind).toBe('timeout');
  });
});
