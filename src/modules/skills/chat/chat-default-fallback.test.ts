// The default chain (emulators on, no ATRIUM_AI_BASE_URL) has a real fallback (contract §9: when the AI
// provider is degraded, chat answers from the next provider and says which): the AI emulator's
// separate fallback endpoint, which a fault on the primary (`chat.completions`) does not touch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/helpers/app.js';
import { createWorkspace, type TestWorkspace } from '../../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;

const fault = (operation: string) =>
  t.request({ method: 'POST', url: '/_emulators/ai/faults', payload: { operation, status: 500, times: 1000 } });
const clearFaults = () => t.request({ method: 'DELETE', url: '/_emulators/ai/faults' });
const chat = (content: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/chat',
    token: ws.admin.token,
    payload: { messages: [{ role: 'user', content }] },
  });

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  await t.request({
    method: 'POST',
    url: '/api/v1/marketplace/install',
    token: ws.admin.token,
    payload: { slug: 'soap-structurer', scopes: [] },
  });
});
afterAll(async () => t?.close());

describe('the default model chain', () => {
  it('answers from the fallback model while the primary fails, and says which', async () => {
    await fault('chat.completions');
    try {
      const res = await chat('Structure this note: Patient reports cough. Plan: follow up in a week.');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        provider: 'emulator-fallback',
        model: { provider: 'emulator-fallback', name: 'atrium-offline-fallback-1', offline: true },
      });
      // One entry per model round (the tool call, then the answer), each the primary's 500.
      const fallbacks = res.json().fallbacks as { provider: string; error: string }[];
      expect(fallbacks.length).toBeGreaterThan(0);
      for (const f of fallbacks) expect(f).toEqual({ provider: 'emulator', error: 'answered 500' });
      expect(res.json().toolCalls[0]).toMatchObject({ slug: 'soap-structurer', tool: 'structure_note', outcome: 'ok' });
    } finally {
      await clearFaults();
    }
  });

  it('in production (no emulators) falls back to the provider of ATRIUM_AI_FALLBACK_BASE_URL', async () => {
    const real = t.app.atrium.config;
    // Two real-looking providers: the emulator's two endpoints, named by URL as an operator would.
    t.app.atrium.config = {
      ...real,
      emulators: false,
      ai: {
        ...real.ai,
        baseUrl: `${t.baseUrl}/_emulators/ai/v1`,
        model: 'primary-model',
        fallback: { baseUrl: `${t.baseUrl}/_emulators/ai/fallback/v1`, model: 'backup-model' },
      },
    };
    await fault('chat.completions');
    try {
      const res = await chat('Structure this note: Patient reports cough. Plan: follow up in a week.');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ provider: 'configured-fallback', model: { provider: 'configured-fallback' } });
      expect(res.json().fallbacks[0]).toMatchObject({ provider: 'configured' });
    } finally {
      t.app.atrium.config = real;
      await clearFaults();
    }
  });

  it('answers 502 upstream_failed only when the fallback fails too', async () => {
    await fault('chat.completions');
    await fault('fallback.chat.completions');
    try {
      const res = await chat('hi');
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ code: 'upstream_failed' });
      expect(res.json().failures.map((f: { provider: string }) => f.provider)).toEqual([
        'emulator',
        'emulator-fallback',
      ]);
    } finally {
      await clearFaults();
    }
  });

  it('the ai:fallback probe checks the fallback itself: it fails with it and passes while only the primary fails', async () => {
    const probe = async () =>
      (
        (await t.request({ method: 'GET', url: '/api/v1/cron/services-health', token: t.config.operatorToken })).json()
          .checks as Record<string, { status: string; output?: string }[]>
      )['ai:fallback'][0];
    await fault('chat.completions');
    try {
      expect(await probe()).toMatchObject({ status: 'pass', output: 'emulator-fallback (atrium-offline-fallback-1)' });
    } finally {
      await clearFaults();
    }
    await fault('fallback.chat.completions');
    try {
      expect(await probe()).toMatchObject({ status: 'fail', output: 'emulator-fallback answered 500' });
    } finally {
      await clearFaults();
    }
  });
});
