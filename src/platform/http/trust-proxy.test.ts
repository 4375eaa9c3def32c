import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { ConfigError, loadConfig } from '../../config.js';
import { parseTrustedProxies, trustProxyFunction } from './trust-proxy.js';

describe('ATRIUM_TRUST_PROXY parsing', () => {
  it('accepts addresses and CIDRs, IPv4 and IPv6', () => {
    expect(parseTrustedProxies(' 10.0.0.1, 192.168.0.0/16 ,::1,fd00::/8 ')).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
      'fd00::/8',
    ]);
    expect(parseTrustedProxies('')).toEqual([]);
  });

  it('stops the start with a message naming the variable', () => {
    for (const bad of ['10.0.0.300', 'proxy.internal', '10.0.0.0/40', '*']) {
      const load = () =>
        loadConfig({ ATRIUM_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), ATRIUM_TRUST_PROXY: bad });
      expect(load, bad).toThrow(ConfigError);
      expect(load, bad).toThrow(/ATRIUM_TRUST_PROXY/);
    }
  });

  it('trusts only the listed peers, IPv4-mapped IPv6 included', () => {
    expect(trustProxyFunction([])).toBe(false);
    const trust = trustProxyFunction(['127.0.0.1', '10.1.0.0/16', '::1']);
    if (!trust) throw new Error('expected a function');
    expect(trust('127.0.0.1', 0)).toBe(true);
    expect(trust('::ffff:127.0.0.1', 0)).toBe(true);
    expect(trust('10.1.200.3', 0)).toBe(true);
    expect(trust('::1', 0)).toBe(true);
    expect(trust('10.2.0.1', 0)).toBe(false);
    expect(trust('203.0.113.9', 1)).toBe(false);
    expect(trust('not-an-address', 0)).toBe(false);
  });
});

/** Sign-in limits key on request.ip: with addressLimit 2, the third failure from one client is refused. */
describe('client address behind a proxy (real HTTP)', () => {
  let direct: TestApp;
  let proxied: TestApp;
  const signIn = { accountLimit: 100, accountCeiling: 1000, addressLimit: 2, windowMs: 60_000, backoffMs: 1_000 };
  beforeAll(async () => {
    [direct, proxied] = await Promise.all([
      createTestApp({ signIn }),
      createTestApp({ signIn, trustProxy: ['127.0.0.1', '::1'] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([direct?.close(), proxied?.close()]);
  });

  const attempt = (t: TestApp, forwardedFor: string, email: string) =>
    fetch(`${t.baseUrl}/api/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify({ email, password: 'wrong-password-here' }),
    }).then((r) => r.status);

  it('ignores X-Forwarded-For without ATRIUM_TRUST_PROXY (every client shares the socket address)', async () => {
    expect(await attempt(direct, '198.51.100.1', 'a@example.test')).toBe(401);
    expect(await attempt(direct, '198.51.100.1', 'b@example.test')).toBe(401);
    // A forged header does not buy a fresh bucket.
    expect(await attempt(direct, '198.51.100.2', 'c@example.test')).toBe(429);
  });

  it('gives each forwarded client its own bucket when the peer is a trusted proxy', async () => {
    expect(await attempt(proxied, '198.51.100.1', 'a@example.test')).toBe(401);
    expect(await attempt(proxied, '198.51.100.1', 'b@example.test')).toBe(401);
    expect(await attempt(proxied, '198.51.100.1', 'c@example.test')).toBe(429);
    expect(await attempt(proxied, '198.51.100.2', 'd@example.test')).toBe(401);
    // Only the hop added by the trusted proxy counts: a client-supplied earlier entry is not believed.
    expect(await attempt(proxied, '198.51.100.1, 198.51.100.3', 'e@example.test')).toBe(401);
    expect(await attempt(proxied, '198.51.100.1, 198.51.100.3', 'f@example.test')).toBe(401);
    expect(await attempt(proxied, '198.51.100.7, 198.51.100.3', 'g@example.test')).toBe(429);
  });
});
