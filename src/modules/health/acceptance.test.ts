// Acceptance-rate probes (contract §9, issue 13): only refusals that say something about the source
// count — a real connection whose signature does not verify, mail from the relay with a wrong secret —
// never calls that carry no credential or name no connection (anyone on the internet can send those,
// and they must not open incidents, e-mail on-call or raise banners); and a probe fails only on at
// least MIN_REFUSED_TO_FAIL refusals in its window, from at least MIN_NETWORKS_TO_FAIL client networks
// (a provider's fleet; one machine looping forged signatures at a connection's URL can only warn).

import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { type Connected, connectChannel } from '../../../test/helpers/channels.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { countAccepted, countRefused, measureAcceptance } from '../../platform/acceptance.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';

/** MIN_REFUSED_TO_FAIL in platform/acceptance.ts, as docs/health.md gives it. */
const MIN_REFUSED_TO_FAIL = 5;

let t: TestApp;
let ws: TestWorkspace;
let telegram: Connected;

type Checks = Record<string, { status: string; output?: string; observedValue: unknown }[]>;
const probes = async () =>
  (
    (await t.request({ method: 'GET', url: '/api/v1/cron/services-health', token: t.config.operatorToken })).json() as {
      checks: Checks;
    }
  ).checks;

const mail = (authorization?: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/mail/inbound',
    headers: { 'content-type': 'message/rfc822', ...(authorization ? { authorization } : {}) },
    payload: 'From: a@example.com\r\nTo: b@example.com\r\nSubject: hi\r\n\r\nhello\r\n',
  });

const telegramUpdate = (query: string, secret?: string, remoteAddress?: string) =>
  t.request({
    method: 'POST',
    remoteAddress,
    url: `/api/v1/telegram/webhook${query}`,
    headers: { 'content-type': 'application/json', ...(secret ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
    payload: { update_id: 1, message: { message_id: 1, date: 1, chat: { id: 1, type: 'private' }, text: 'hi' } },
  });

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  telegram = await connectChannel(t, ws.admin.token, 'telegram');
}, 60_000);
afterAll(async () => t?.close());

describe('what counts against a source', () => {
  // First in this file: the probes' window (60 s) must hold no refusal from another test.
  it('calls without credentials, naming no connection or an unknown one, are not counted', async () => {
    for (let i = 0; i < 2 * MIN_REFUSED_TO_FAIL; i++) {
      expect((await mail()).statusCode).toBe(401);
      expect((await telegramUpdate('?connection=bogus')).statusCode).toBe(401);
      expect((await telegramUpdate('?connection=chn_01m8unknown00000000000000', 'guess')).statusCode).toBe(401);
      expect((await telegramUpdate('')).statusCode).toBe(401);
      expect(
        (
          await t.request({
            method: 'POST',
            url: '/api/v1/payments/webhook',
            headers: { 'content-type': 'application/json' },
            payload: { type: 'checkout.session.completed' },
          })
        ).statusCode,
      ).toBe(401);
    }
    const checks = await probes();
    for (const id of ['mail:acceptance-rate', 'chat-telegram:acceptance-rate', 'payments:webhook-ingress'])
      expect(checks[id][0], id).toMatchObject({ status: 'pass', output: 'No traffic in the last 60 s' });
  });

  it("a real connection's failing signature from one machine (forged, or one host out of step) only warns", async () => {
    // One IPv4 address, then addresses of one IPv6 /64: each is one client network.
    for (let i = 0; i < 2 * MIN_REFUSED_TO_FAIL; i++) {
      const from = i % 2 ? '203.0.113.9' : `2001:db8:77:1::${(i + 1).toString(16)}`;
      expect((await telegramUpdate(`?connection=${telegram.id}`, 'not-the-secret', from)).statusCode).toBe(401);
    }
    expect((await probes())['chat-telegram:acceptance-rate'][0]).toMatchObject({
      status: 'warn',
      observedValue: 0,
      output: `0 accepted, ${2 * MIN_REFUSED_TO_FAIL} refused in the last 60 s (refused from 2 client networks, fewer than 3: too few to fail)`,
    });
  });

  it("a real connection's failing signature from the provider's fleet is counted and fails the probe", async () => {
    for (const from of ['198.51.100.1', '198.51.100.2', '198.51.100.3'])
      expect((await telegramUpdate(`?connection=${telegram.id}`, 'not-the-secret', from)).statusCode).toBe(401);
    expect((await probes())['chat-telegram:acceptance-rate'][0]).toMatchObject({
      status: 'fail',
      observedValue: 0,
      output: `0 accepted, ${2 * MIN_REFUSED_TO_FAIL + 3} refused in the last 60 s`,
    });
  });

  it('mail with a wrong credential (a secret out of step at the relay, one host) is counted and fails the probe', async () => {
    for (let i = 0; i < MIN_REFUSED_TO_FAIL; i++) expect((await mail('Bearer not-the-secret')).statusCode).toBe(401);
    expect((await probes())['mail:acceptance-rate'][0]).toMatchObject({ status: 'fail', observedValue: 0 });
  });
});

describe('the minimum of refusals', () => {
  it(`fewer than ${MIN_REFUSED_TO_FAIL} refused calls in the window warn, never fail`, async () => {
    const fleet = (i: number) => `192.0.2.${i % 3}`;
    for (let i = 0; i < MIN_REFUSED_TO_FAIL - 1; i++) countRefused(t.app.atrium, 'test:few', fleet(i));
    expect(await measureAcceptance(t.app.atrium, 'test:few', 60_000)).toMatchObject({
      status: 'warn',
      observedValue: 0,
      output: expect.stringContaining('too few to fail'),
    });
    countRefused(t.app.atrium, 'test:few', fleet(0));
    expect(await measureAcceptance(t.app.atrium, 'test:few', 60_000)).toMatchObject({
      status: 'fail',
      observedValue: 0,
    });
  });

  it('a high enough rate passes or warns whatever the count', async () => {
    for (let i = 0; i < 19; i++) countAccepted(t.app.atrium, 'test:busy');
    countRefused(t.app.atrium, 'test:busy', '192.0.2.1');
    expect(await measureAcceptance(t.app.atrium, 'test:busy', 60_000)).toMatchObject({
      status: 'pass',
      observedValue: 95,
    });
  });
});

describe('the minimum of client networks', () => {
  it('refusals from fewer networks than the source asks for warn; one more network fails; no address is stored', async () => {
    for (let i = 0; i < 3 * MIN_REFUSED_TO_FAIL; i++) countRefused(t.app.atrium, 'test:nets', `192.0.2.${i % 2}`);
    expect(await measureAcceptance(t.app.atrium, 'test:nets', 60_000)).toMatchObject({
      status: 'warn',
      output: expect.stringContaining('refused from 2 client networks, fewer than 3: too few to fail'),
    });
    // A source whose traffic comes from one host (the mail relay) asks for fewer.
    expect(await measureAcceptance(t.app.atrium, 'test:nets', 60_000, { minNetworks: 1 })).toMatchObject({
      status: 'fail',
    });
    countRefused(t.app.atrium, 'test:nets', '2001:db8:5::1');
    expect(await measureAcceptance(t.app.atrium, 'test:nets', 60_000)).toMatchObject({ status: 'fail' });
    const stored = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ refused_from: string[] }>(
        tx,
        sql`SELECT refused_from FROM inbound_acceptance WHERE source = 'test:nets'`,
      ),
    );
    const keys = stored.flatMap((r) => r.refused_from);
    expect(new Set(keys).size).toBe(3);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{16}$/);
    // Keyed: a plain hash of the address (reversible by trying every IPv4 address) is not what is kept.
    const plain = ['192.0.2.0', '192.0.2.1'].map((a) => createHash('sha256').update(a).digest('hex').slice(0, 16));
    for (const p of plain) expect(keys).not.toContain(p);
  });
});

describe('a payments webhook out of step', () => {
  it("opens an incident only from several networks, and its banner says what users notice (not the checkout's words)", async () => {
    const forged = (remoteAddress: string) =>
      t.request({
        method: 'POST',
        url: '/api/v1/payments/webhook',
        remoteAddress,
        headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
        payload: { type: 'checkout.session.completed' },
      });
    const paymentBanners = async () =>
      (
        (await t.request({ method: 'GET', url: '/api/v1/health/banners', token: ws.admin.token })).json().items as {
          feature: string;
          message: string;
        }[]
      ).filter((b) => b.feature === 'payments');
    // One machine: three runs of refusals warn, nothing opens.
    for (let run = 0; run < 3; run++) {
      for (let i = 0; i < MIN_REFUSED_TO_FAIL; i++) expect((await forged('203.0.113.50')).statusCode).toBe(401);
      expect((await probes())['payments:webhook-ingress'][0].status).toBe('warn');
    }
    expect(await paymentBanners()).toEqual([]);
    // The provider's fleet: three failing runs open the incident.
    for (let run = 0; run < 3; run++) {
      for (const from of ['198.51.100.21', '198.51.100.22', '198.51.100.23']) await forged(from);
      expect((await probes())['payments:webhook-ingress'][0].status).toBe('fail');
    }
    expect(await paymentBanners()).toEqual([
      expect.objectContaining({ status: 'degraded', message: 'Payments may not show as paid right away.' }),
    ]);
  });
});
