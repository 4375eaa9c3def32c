// Every emulator fault operation of contract §11 through the adapters, on both providers: each
// injected status comes back as its write-result code (or a list warning), and the next call works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
const cal: Record<string, string> = {};
const WINDOW = 'timeMin=2026-11-23T00:00:00Z&timeMax=2026-11-30T00:00:00Z';
const draft = { title: 'Fault probe', start: '2026-11-25T15:00:00Z', end: '2026-11-25T15:30:00Z' };

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  cal.google = (await connectCalendar(t, ws.admin.token, 'google', `f-${ws.id}@google.example`)).calendarId;
  cal.microsoft = (await connectCalendar(t, ws.admin.token, 'microsoft', `f-${ws.id}@microsoft.example`)).calendarId;
}, 60_000);
afterAll(async () => t?.close());

const inject = (provider: string, operation: string, status: number) =>
  fetch(`${t.baseUrl}/_emulators/${provider}/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ operation, status }),
  });

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token: ws.admin.token, payload: payload as Record<string, unknown> });

const EXPECTED: [number, string, number][] = [
  [429, 'rate_limited', 429],
  [403, 'provider_forbidden', 403],
  [404, 'event_not_found', 404],
  // A URL too long for the provider names no event it has (a made-up id): not the provider's failure.
  [414, 'event_not_found', 404],
  [409, 'provider_conflict', 409],
  [503, 'provider_unavailable', 502],
];

describe.each(['google', 'microsoft'])('%s faults', (provider) => {
  it.each(EXPECTED)('events.patch and events.delete answering %i become %s', async (status, code, answered) => {
    const made = await call('POST', '/calendar/events', { calendar: cal[provider], draft });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().eventId;
    await inject(provider, 'events.patch', status);
    const patched = await call('PATCH', '/calendar/events', { event: id, draft: { title: 'changed' } });
    expect([patched.statusCode, patched.json().code]).toEqual([answered, code]);
    await inject(provider, 'events.delete', status);
    const deleted = await call('DELETE', `/calendar/events?event=${encodeURIComponent(id)}`);
    expect([deleted.statusCode, deleted.json().code]).toEqual([answered, code]);
    // The fault was used up: the next call goes through.
    expect((await call('DELETE', `/calendar/events?event=${encodeURIComponent(id)}`)).statusCode).toBe(200);
  });

  it('a made-up event id too long for the provider is 404 event_not_found, not a provider failure', async () => {
    const forged = `cev_${Buffer.from(`${cal[provider]}\n${'x'.repeat(300)}`).toString('base64url')}`;
    const deleted = await call('DELETE', `/calendar/events?event=${forged}`);
    expect([deleted.statusCode, deleted.json().code]).toEqual([404, 'event_not_found']);
    const patched = await call('PATCH', '/calendar/events', { event: forged, draft: { title: 'changed' } });
    expect([patched.statusCode, patched.json().code]).toEqual([404, 'event_not_found']);
  });

  it('events.insert 400 is invalid_draft; calendars.list failing keeps the stored calendars', async () => {
    await inject(provider, 'events.insert', 400);
    const made = await call('POST', '/calendar/events', { calendar: cal[provider], draft });
    expect([made.statusCode, made.json().code]).toEqual([422, 'invalid_draft']);
    await inject(provider, 'calendars.list', 500);
    const cals = await call('GET', '/calendar/calendars');
    expect(cals.statusCode).toBe(200);
    expect(cals.json().items.map((c: { id: string }) => c.id)).toContain(cal[provider]);
  });

  it('events.list failing is a warning naming the provider and its code', async () => {
    await inject(provider, 'events.list', 429);
    const res = await call('GET', `/calendar/events?${WINDOW}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().warnings).toEqual([{ provider, calendar: cal[provider], code: 'rate_limited' }]);
  });

  it('a delay on events.list is the provider’s latency: the answer comes no sooner, and is complete', async () => {
    await fetch(`${t.baseUrl}/_emulators/${provider}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'events.list', delayMs: 400, times: 2 }),
    });
    const started = Date.now();
    const res = await call('GET', `/calendar/events?${WINDOW}&calendar=${cal[provider]}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBe(200);
    expect(res.json().warnings).toEqual([]);
    await fetch(`${t.baseUrl}/_emulators/${provider}/faults`, { method: 'DELETE' });
  });
});
