// Speech over the tts emulator: the primary voice answers; when it fails the fallback voice (another
// protocol) answers and the response says so; both failing is a clear 502.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const speak = (text: string) =>
  t.request({ method: 'POST', url: '/api/v1/speech', token: ws.admin.token, payload: { text } });
const fault = (operation: string, times = 1) =>
  t.request({ method: 'POST', url: '/_emulators/tts/faults', payload: { operation, status: 503, times } });

describe('speech', () => {
  it('answers WAV audio from the primary voice, from the fallback when the primary fails, 502 when both do', async () => {
    const ok = await speak('Your appointment is tomorrow at nine.');
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toContain('audio/wav');
    expect(ok.headers['x-voice-provider']).toBe('primary');
    expect(ok.rawPayload.subarray(0, 4).toString()).toBe('RIFF');
    await fault('speech');
    const fallback = await speak('Please arrive ten minutes early.');
    expect(fallback.statusCode).toBe(200);
    expect(fallback.headers['x-voice-provider']).toBe('fallback');
    await fault('speech');
    await fault('fallback.speech');
    const failed = await speak('Hello');
    expect(failed.statusCode).toBe(502);
    expect(failed.json().code).toBe('upstream_failed');
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/speech', token: ws.admin.token, payload: { text: '' } }))
        .statusCode,
    ).toBe(400);
  });

  it('the tts probes see a failing primary and a working fallback', async () => {
    await fault('speech');
    const res = await t.request({
      method: 'GET',
      url: '/api/v1/cron/tts-health',
      headers: { authorization: `Bearer ${t.config.cronSecret}` },
    });
    expect(res.statusCode).toBe(503);
    const checks = res.json().checks as Record<string, { status: string; time: string; output?: string }[]>;
    expect(checks['tts:latency'][0].status).toBe('fail');
    expect(checks['tts:fallback'][0].status).toBe('pass');
    // Every check is in the answer (§9); those it did not run are as last recorded (here: never yet).
    expect(Object.keys(checks).length).toBe(t.app.atrium.monitors.length);
    expect(checks['database:reachability'][0]).toMatchObject({ status: 'warn', output: 'not checked yet' });
    await t.request({
      method: 'GET',
      url: '/api/v1/cron/services-health',
      headers: { authorization: `Bearer ${t.config.cronSecret}` },
    });
    const again = await t.request({
      method: 'GET',
      url: '/api/v1/cron/tts-health',
      headers: { authorization: `Bearer ${t.config.cronSecret}` },
    });
    // Recorded now (warn rather than pass only when SELECT 1 took over 100 ms on a busy machine).
    const recorded = again.json().checks['database:reachability'][0];
    expect(['pass', 'warn']).toContain(recorded.status);
    expect(recorded.output).not.toBe('not checked yet');
    expect(typeof recorded.observedValue).toBe('number');
  });
});
