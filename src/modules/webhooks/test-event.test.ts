// Contract §7.1: "Send test event" and the delivery detail (exact request and response), over HTTPS
// to a real local receiver.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../../test/helpers/https-receiver.js';
import { closeSafeClient } from '../../platform/http/safe-client.js';
import type { Background } from '../../workers.js';

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;
let receiver: HttpsReceiver;
let background: Background;

beforeAll(async () => {
  if (!process.env.NODE_EXTRA_CA_CERTS) throw new Error('Run with NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem');
  t = await createTestApp({ webhooks: { retryDelaysMs: [60_000], timeoutMs: 2000, allowCidrs: ['127.0.0.0/8'] } });
  ws = await createWorkspace(t, { tier: 'advanced' });
  other = await createWorkspace(t, { tier: 'advanced' });
  receiver = await startHttpsReceiver();
  background = await t.startBackground();
});
afterAll(async () => {
  await background?.stop?.();
  await t?.close();
  await receiver?.close();
  await closeSafeClient();
});

async function createEndpoint(owner: TestWorkspace, payload: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: '/api/v1/admin/webhooks', token: owner.admin.token, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

async function attemptsOf(endpointId: string) {
  for (let i = 0; i < 200; i++) {
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/admin/webhooks/${endpointId}/deliveries`,
      token: ws.admin.token,
    });
    const items = res.json().items as { id: string; eventId: string; eventType: string; outcome: string }[];
    if (items.length > 0) return items;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no attempt recorded');
}

describe('send test event', () => {
  it('reaches an endpoint whose filter excludes it, signed, and shows request and response in the detail', async () => {
    receiver.respondWith({ status: 202, body: `{"received":true,"pad":"${'x'.repeat(6000)}"}` });
    const endpoint = await createEndpoint(ws, { url: `${receiver.url}/hooks/test`, events: ['claim.paid'] });
    const sent = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpoint.id}/test`,
      token: ws.admin.token,
    });
    expect(sent.statusCode, sent.body).toBe(202);
    const { eventId } = sent.json() as { eventId: string };

    const [req] = await receiver.waitFor(1);
    const payload = new Webhook(endpoint.secret).verify(req.body, req.headers) as Record<string, unknown>;
    expect(payload).toMatchObject({
      event_id: eventId,
      type: 'webhook.test',
      data: { endpointId: endpoint.id, sentBy: ws.admin.userId },
    });

    const [attempt] = await attemptsOf(endpoint.id);
    expect(attempt).toMatchObject({ eventId, eventType: 'webhook.test', outcome: 'success' });
    const detail = await t.request({
      method: 'GET',
      url: `/api/v1/admin/webhooks/${endpoint.id}/deliveries/${attempt.id}`,
      token: ws.admin.token,
    });
    expect(detail.statusCode, detail.body).toBe(200);
    const body = detail.json();
    expect(body.request.url).toBe(`${receiver.url}/hooks/test`);
    expect(body.request.body).toBe(req.body);
    expect(body.request.headers['webhook-signature']).toBe(req.headers['webhook-signature']);
    expect(body.request.headers['webhook-id']).toBe(eventId);
    expect(body.response.status).toBe(202);
    expect(body.response.truncated).toBe(true);
    expect(Buffer.byteLength(body.response.body)).toBe(4096);
    expect(body.response.body.startsWith('{"received":true')).toBe(true);
    // The secret itself never appears, in any form.
    expect(detail.body).not.toContain(endpoint.secret);
    expect(detail.body).not.toContain(endpoint.secret.slice('whsec_'.length));

    // Only that endpoint got it; another endpoint (filter '*') did not.
    receiver.requests.length = 0;
  });

  it('is refused for another workspace, a member, and below Advanced; unknown attempts are 404', async () => {
    const endpoint = await createEndpoint(ws, { url: `${receiver.url}/hooks/other` });
    const foreign = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpoint.id}/test`,
      token: other.admin.token,
    });
    expect(foreign.statusCode).toBe(404);
    const member = await addMember(t, ws, { role: 'member' });
    const asMember = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpoint.id}/test`,
      token: member.token,
    });
    expect(asMember.statusCode).toBe(403);
    const missing = await t.request({
      method: 'GET',
      url: `/api/v1/admin/webhooks/${endpoint.id}/deliveries/dlv_nope`,
      token: ws.admin.token,
    });
    expect(missing.statusCode).toBe(404);
    const standard = await createWorkspace(t, { tier: 'standard' });
    const low = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpoint.id}/test`,
      token: standard.admin.token,
    });
    expect(low.statusCode).toBe(403);
    expect(low.json().code).toBe('tier_required');
  });
});
