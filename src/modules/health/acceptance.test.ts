// Acceptance-rate probes (contract §9, issue 13): only refusals that say something about the source
// count — a real connection whose signature does not verify, mail from the relay with a wrong secret —
// never calls that carry no credential or name no connection (anyone on the internet can send those,
// and they must not open incidents, e-mail on-call or raise banners); and a probe fails only on at
// least MIN_REFUSED_TO_FAIL refusals in its window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { type Connected, connectChannel } from '../../../test/helpers/channels.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { countAccepted, countRefused, measureAcceptance } from '../../platform/acceptance.js';

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

const telegramUpdate = (query: string, secret?: string) =>
  t.request({
    method: 'POST',
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

  it("a real connection's failing signature is counted and fails the probe", async () => {
    for (let i = 0; i < MIN_REFUSED_TO_FAIL; i++)
      expect((await telegramUpdate(`?connection=${telegram.id}`, 'not-the-secret')).statusCode).toBe(401);
    expect((await probes())['chat-telegram:acceptance-rate'][0]).toMatchObject({
      status: 'fail',
      observedValue: 0,
      output: `0 accepted, ${MIN_REFUSED_TO_FAIL} refused in the last 60 s`,
    });
  });

  it('mail with a wrong credential (a secret out of step at the relay) is counted and fails the probe', async () => {
    for (let i = 0; i < MIN_REFUSED_TO_FAIL; i++) expect((await mail('Bearer not-the-secret')).statusCode).toBe(401);
    expect((await probes())['mail:acceptance-rate'][0]).toMatchObject({ status: 'fail', observedValue: 0 });
  });
});

describe('the minimum of refusals', () => {
  it(`fewer than ${MIN_REFUSED_TO_FAIL} refused calls in the window warn, never fail`, async () => {
    for (let i = 0; i < MIN_REFUSED_TO_FAIL - 1; i++) countRefused(t.app.atrium, 'test:few');
    expect(await measureAcceptance(t.app.atrium, 'test:few', 60_000)).toMatchObject({
      status: 'warn',
      observedValue: 0,
      output: expect.stringContaining('too few to fail'),
    });
    countRefused(t.app.atrium, 'test:few');
    expect(await measureAcceptance(t.app.atrium, 'test:few', 60_000)).toMatchObject({
      status: 'fail',
      observedValue: 0,
    });
  });

  it('a high enough rate passes or warns whatever the count', async () => {
    for (let i = 0; i < 19; i++) countAccepted(t.app.atrium, 'test:busy');
    countRefused(t.app.atrium, 'test:busy');
    expect(await measureAcceptance(t.app.atrium, 'test:busy', 60_000)).toMatchObject({
      status: 'pass',
      observedValue: 95,
    });
  });
});
