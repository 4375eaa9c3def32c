import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/helpers/app.js';
import { createWorkspace, type TestWorkspace } from '../../../../test/helpers/factories.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../../../test/helpers/https-receiver.js';
import { loadTestConfig } from '../../../config.js';

let t: TestApp;
let provider: HttpsReceiver;
let ws: TestWorkspace;

beforeAll(async () => {
  provider = await startHttpsReceiver({ response: { status: 503, body: 'overloaded' } });
  t = await createTestApp({
    ai: { ...loadTestConfig().ai, baseUrl: `${provider.url}/v1`, apiKey: 'sk-test', model: 'real-model' },
  });
  ws = await createWorkspace(t, { tier: 'standard' });
  await t.request({
    method: 'POST',
    url: '/api/v1/marketplace/install',
    token: ws.admin.token,
    payload: { slug: 'soap-structurer', scopes: [] },
  });
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});

const chat = (content: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/chat',
    token: ws.admin.token,
    payload: { messages: [{ role: 'user', content }] },
  });

describe('model provider chain', () => {
  it('uses the configured OpenAI-compatible provider first, with the key, model and granted tools', async () => {
    provider.respondWith({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Hello from the real model' } }] }),
    });
    const before = provider.requests.length;
    const res = await chat('hi');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      message: { content: 'Hello from the real model' },
      model: { provider: 'configured', name: 'real-model', offline: false },
    });
    const sent = provider.requests[before];
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    // The caller's request id travels to the provider (platform/upstream).
    expect(sent.headers['x-request-id']).toBe(res.headers['x-request-id']);
    const body = JSON.parse(sent.body);
    expect(body.model).toBe('real-model');
    expect(body.tools.map((x: { function: { name: string } }) => x.function.name)).toEqual([
      'soap-structurer__structure_note',
    ]);
  });

  it('refuses and audits a function the model was never offered', async () => {
    let round = 0;
    provider.respondWith(() => {
      round++;
      const message =
        round === 1
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'c1', type: 'function', function: { name: 'billing-codes__suggest_codes', arguments: '{}' } },
              ],
            }
          : { role: 'assistant', content: 'Done' };
      return {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ choices: [{ message }] }),
      };
    });
    const res = await chat('suggest billing codes');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().toolCalls).toEqual([]);
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=skill_invocation', token: ws.admin.token });
    expect(audit.json().items[0]).toMatchObject({
      toolName: 'billing-codes__suggest_codes',
      outcome: 'denied',
      caller: ws.admin.userId,
    });
  });

  it('falls back to the offline model when the configured provider fails', async () => {
    provider.respondWith({ status: 503, body: 'overloaded' });
    const res = await chat('Structure this note: Patient reports cough. Plan: follow up in a week.');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().model).toMatchObject({ provider: 'emulator', offline: true });
    expect(res.json().provider).toBe('emulator');
    expect(res.json().fallbacks[0]).toMatchObject({ provider: 'configured', error: 'answered 503' });
    expect(res.json().toolCalls[0]).toMatchObject({ slug: 'soap-structurer', tool: 'structure_note', outcome: 'ok' });
  });

  it('answers 502 problem+json when every provider fails', async () => {
    for (const operation of ['chat.completions', 'fallback.chat.completions']) {
      await fetch(`${t.baseUrl}/_emulators/ai/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation, status: 500 }),
      });
    }
    const res = await chat('hi');
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'upstream_failed' });
    expect(res.json().failures.map((f: { provider: string }) => f.provider)).toEqual([
      'configured',
      'emulator',
      'emulator-fallback',
    ]);
  });

  it("opens the configured provider's breaker after repeated failures and goes straight to the fallback", async () => {
    await fetch(`${t.baseUrl}/_emulators/ai/faults`, { method: 'DELETE' });
    provider.respondWith({ status: 503, body: 'overloaded' });
    // Five failures in a row open the breaker (the earlier tests already failed it a few times).
    for (let i = 0; i < 5; i++) expect((await chat('hi')).statusCode).toBe(200);
    const before = provider.requests.length;
    const res = await chat('hi');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().model).toMatchObject({ provider: 'emulator', offline: true });
    expect(res.json().fallbacks[0]).toMatchObject({
      provider: 'configured',
      error: expect.stringMatching(/circuit open/),
    });
    expect(provider.requests.length).toBe(before);
  });
});
