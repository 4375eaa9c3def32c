// Payments end to end over the emulator: a payment link, the patient pays, the provider's signed
// webhook marks it paid; forged, stale and unsigned webhooks change nothing; a retry is harmless.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { captureLogs } from '../../../test/helpers/logs.js';
import { allPages } from '../../../test/helpers/paging.js';
import { withSystem } from '../../platform/db/tenant.js';
import { newId } from '../../platform/ids.js';
import { EMULATOR_WEBHOOK_SECRET, signPayload } from './stripe.js';
import { payments } from './tables.js';

let t: TestApp;
let ws: TestWorkspace;
const logs = captureLogs();

beforeAll(async () => {
  t = await createTestApp({ logLevel: 'debug' }, { logStream: logs.stream });
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const webhook = (body: string, signature?: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/payments/webhook',
    headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) },
    payload: body,
  });
const signed = (event: unknown) => {
  const body = JSON.stringify(event);
  const now = Math.floor(Date.now() / 1000);
  return webhook(body, `t=${now},v1=${signPayload(EMULATOR_WEBHOOK_SECRET, now, body)}`);
};

describe('payments', () => {
  it("a refused checkout is logged without the provider's words, which quote the description (contract §1)", async () => {
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Ottilie', familyName: 'Brandtner' });
    const fault = await t.request({
      method: 'POST',
      url: '/_emulators/payments/faults',
      payload: {
        operation: 'sessions.create',
        status: 400,
        times: 1,
        body: {
          error: {
            type: 'invalid_request_error',
            code: 'parameter_invalid_string',
            param: 'line_items[0][price_data][product_data][name]',
            message: 'Invalid string: Copay for Ottilie Brandtner, visit of Dec 1',
          },
        },
      },
    });
    expect(fault.statusCode).toBe(201);
    const refused = await t.request({
      method: 'POST',
      url: '/api/v1/payments',
      token: ws.admin.token,
      payload: { amountCents: 2500, description: 'Copay for Ottilie Brandtner, visit of Dec 1', patientId: patient.id },
    });
    expect([refused.statusCode, refused.json().code]).toEqual([502, 'provider_refused']);
    const logged = logs.lines.filter((l) => l.includes(refused.json().requestId)).join('\n');
    expect(logged).toContain('provider_refused');
    expect(logs.text()).not.toContain('Brandtner');
    // The provider's machine words stay, for whoever reads the problem or the log.
    expect(refused.json().detail).toBe(
      'The payments provider refused the checkout (HTTP 400: parameter_invalid_string, line_items[0][price_data][product_data][name])',
    );
  });

  it('a payment link is created at the provider; paying it marks it paid through the signed webhook', async () => {
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Ada', familyName: 'Pay' });
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/payments',
      token: ws.admin.token,
      payload: { amountCents: 2500, description: 'Copay, visit of Dec 1', patientId: patient.id },
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ status: 'open', amountCents: 2500, currency: 'usd' });
    const sessionId = made.json().checkoutUrl.split('/').pop();
    const paid = await t.request({ method: 'POST', url: `/_emulators/payments/sessions/${sessionId}/pay` });
    expect(paid.json(), paid.body).toMatchObject({ delivered: true, status: 200 });
    const list = await t.request({
      method: 'GET',
      url: `/api/v1/payments?patientId=${patient.id}`,
      token: ws.admin.token,
    });
    expect(list.json().items[0]).toMatchObject({ id: made.json().id, status: 'paid' });
    expect(list.json().items[0].paidAt).toBeTruthy();
    const unknown = await t.request({
      method: 'POST',
      url: '/api/v1/payments',
      token: ws.admin.token,
      payload: { amountCents: 2500, description: 'x', patientId: 'pat_nope' },
    });
    expect(unknown.statusCode).toBe(422);
    const empty = await t.request({
      method: 'POST',
      url: '/api/v1/payments',
      token: ws.admin.token,
      payload: { amountCents: 2500, description: 'x', patientId: '' },
    });
    expect([empty.statusCode, empty.json().code]).toEqual([400, 'validation_failed']);
  });

  it('refuses unsigned, forged and stale webhooks (401) and accepts a valid retry harmlessly', async () => {
    const body = JSON.stringify({ type: 'checkout.session.completed', data: { object: { id: 'cs_test_unknown' } } });
    const now = Math.floor(Date.now() / 1000);
    const unsigned = await webhook(body);
    expect(unsigned.statusCode).toBe(401);
    // Contract §1: an invalid credential is `unauthenticated`, whatever the credential.
    expect(unsigned.json().code).toBe('unauthenticated');
    expect((await webhook(body, `t=${now},v1=${'0'.repeat(64)}`)).statusCode).toBe(401);
    expect(
      (await webhook(body, `t=${now - 900},v1=${signPayload(EMULATOR_WEBHOOK_SECRET, now - 900, body)}`)).statusCode,
    ).toBe(401);
    expect(
      (await webhook(`${body} `, `t=${now},v1=${signPayload(EMULATOR_WEBHOOK_SECRET, now, body)}`)).statusCode,
    ).toBe(401);
    const ok = await webhook(body, `t=${now},v1=bogus,v1=${signPayload(EMULATOR_WEBHOOK_SECRET, now, body)}`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual({ received: true, handled: false });
  });

  it('a completed checkout still unpaid (a delayed method) stays open; the async outcome decides', async () => {
    const ask = async () => {
      const made = await t.request({
        method: 'POST',
        url: '/api/v1/payments',
        token: ws.admin.token,
        payload: { amountCents: 4000, description: 'No-show fee' },
      });
      expect(made.statusCode, made.body).toBe(201);
      return { id: made.json().id as string, session: made.json().checkoutUrl.split('/').pop() as string };
    };
    const statusOf = async (id: string) => {
      const list = await t.request({ method: 'GET', url: '/api/v1/payments?limit=200', token: ws.admin.token });
      return list.json().items.find((p: { id: string }) => p.id === id);
    };
    const event = (type: string, session: string, paymentStatus: string) => ({
      id: `evt_${session}`,
      object: 'event',
      type,
      data: { object: { object: 'checkout.session', id: session, status: 'complete', payment_status: paymentStatus } },
    });

    const debit = await ask();
    const completed = await signed(event('checkout.session.completed', debit.session, 'unpaid'));
    expect(completed.json()).toEqual({ received: true, handled: false });
    expect(await statusOf(debit.id)).toMatchObject({ status: 'open', paidAt: null });
    const cleared = await signed(event('checkout.session.async_payment_succeeded', debit.session, 'paid'));
    expect(cleared.json()).toEqual({ received: true, handled: true });
    expect(await statusOf(debit.id)).toMatchObject({ status: 'paid', paidAt: expect.any(String) });

    // There is no failed status: a failed debit leaves the payment open (not paid).
    const bounced = await ask();
    await signed(event('checkout.session.completed', bounced.session, 'unpaid'));
    const failed = await signed(event('checkout.session.async_payment_failed', bounced.session, 'unpaid'));
    expect(failed.json()).toEqual({ received: true, handled: false });
    expect(await statusOf(bounced.id)).toMatchObject({ status: 'open', paidAt: null });

    // Nothing owed once a discount applied: settled, not open for ever.
    const waived = await ask();
    const free = await signed(event('checkout.session.completed', waived.session, 'no_payment_required'));
    expect(free.json()).toEqual({ received: true, handled: true });
    expect(await statusOf(waived.id)).toMatchObject({ status: 'paid', paidAt: expect.any(String) });
  });

  it('pages the list newest first (contract §1: limit 50 by default, at most 200, opaque cursor)', async () => {
    const own = await createWorkspace(t, { tier: 'standard' });
    const patient = await createPatient(t, own.admin.token, { givenName: 'Many', familyName: 'Payments' });
    // One statement: every row shares its created time, so the id is what orders them.
    const rows = Array.from({ length: 230 }, (_, i) => ({
      workspaceId: own.id,
      id: newId('pay'),
      patientId: i % 2 === 0 ? patient.id : null,
      description: `Copay ${i}`,
      amountCents: 2500,
      currency: 'usd',
      providerSessionId: `cs_test_paging_${own.id}_${i}`,
      checkoutUrl: `https://pay.example/${i}`,
      createdBy: own.admin.userId,
    }));
    await withSystem(t.app.atrium.db, (tx) => tx.insert(payments).values(rows));
    const later = await t.request({
      method: 'POST',
      url: '/api/v1/payments',
      token: own.admin.token,
      payload: { amountCents: 2500, description: 'Newest', patientId: patient.id },
    });
    expect(later.statusCode, later.body).toBe(201);
    const list = (query: string) =>
      t.request({ method: 'GET', url: `/api/v1/payments${query}`, token: own.admin.token });
    const all = (query: string, limit: number) =>
      allPages(t, { url: '/api/v1/payments', token: own.admin.token, query, limit });
    const newestFirst = (keep: (r: (typeof rows)[number]) => boolean) => [
      later.json().id,
      ...rows
        .filter(keep)
        .map((r) => r.id)
        .reverse(),
    ];

    const first = await list('');
    expect(first.json().items).toHaveLength(50);
    expect(first.json().items[0].id).toBe(later.json().id);
    expect(first.json().nextCursor).toEqual(expect.any(String));
    expect(await all('', 200)).toEqual(newestFirst(() => true));
    expect(await all('', 13)).toEqual(newestFirst(() => true));
    expect(await all(`patientId=${patient.id}`, 40)).toEqual(newestFirst((r) => r.patientId === patient.id));

    const forged = Buffer.from(JSON.stringify(['2026-12-01', 'pay_x'])).toString('base64url');
    for (const query of ['limit=0', 'limit=5000', 'cursor=garbage', `cursor=${forged}`]) {
      const res = await list(`?${query}`);
      expect([res.statusCode, res.json().code], query).toEqual([400, 'validation_failed']);
      expect(res.headers['content-type'], query).toContain('application/problem+json');
    }
  });
});
