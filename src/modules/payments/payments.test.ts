// Payments end to end over the emulator: a payment link, the patient pays, the provider's signed
// webhook marks it paid; forged, stale and unsigned webhooks change nothing; a retry is harmless.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { captureLogs } from '../../../test/helpers/logs.js';
import { EMULATOR_WEBHOOK_SECRET, signPayload } from './stripe.js';

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
});
