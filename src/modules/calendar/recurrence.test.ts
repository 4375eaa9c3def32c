// The RFC 5545 examples of contract §5.2 through both providers (adapter → emulator → adapter):
// wall-clock time kept across daylight-saving changes, BYDAY with INTERVAL and UNTIL, and
// single-occurrence changes and cancellations next to whole-series changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
const calendars: Record<'google' | 'microsoft', string> = { google: '', microsoft: '' };

interface Ev {
  id: string;
  title: string;
  start: string;
  recurringEventId: string | null;
}

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  calendars.google = (await connectCalendar(t, ws.admin.token, 'google', `rec-${ws.id}@google.example`)).calendarId;
  calendars.microsoft = (
    await connectCalendar(t, ws.admin.token, 'microsoft', `rec-${ws.id}@microsoft.example`)
  ).calendarId;
}, 60_000);
afterAll(async () => t?.close());

async function series(provider: 'google' | 'microsoft', draft: Record<string, unknown>) {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/calendar/events',
    token: ws.admin.token,
    payload: { calendar: calendars[provider], draft },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().eventId as string;
}

async function instances(provider: 'google' | 'microsoft', title: string, timeMin: string, timeMax: string) {
  const res = await t.request({
    method: 'GET',
    url: `/api/v1/calendar/events?${new URLSearchParams({ timeMin, timeMax, calendar: calendars[provider] })}`,
    token: ws.admin.token,
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().warnings).toEqual([]);
  return (res.json().items as Ev[]).filter((e) => e.title.startsWith(title));
}

describe.each(['google', 'microsoft'] as const)('recurrence through %s', (provider) => {
  it('keeps 09:00 New York across the November change (13:00Z before, 14:00Z after)', async () => {
    await series(provider, {
      title: `DST NY ${provider}`,
      start: '2026-10-20T13:00:00Z',
      end: '2026-10-20T13:30:00Z',
      timeZone: 'America/New_York',
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=4'],
    });
    const got = await instances(provider, `DST NY ${provider}`, '2026-10-19T00:00:00Z', '2026-11-30T00:00:00Z');
    expect(got.map((e) => e.start)).toEqual([
      '2026-10-20T13:00:00.000Z',
      '2026-10-27T13:00:00.000Z',
      '2026-11-03T14:00:00.000Z',
      '2026-11-10T14:00:00.000Z',
    ]);
    expect(new Set(got.map((e) => e.recurringEventId)).size).toBe(1);
    expect(new Set(got.map((e) => e.id)).size).toBe(4);
  });

  it('keeps 09:00 Berlin across the October change (07:00Z before, 08:00Z after)', async () => {
    await series(provider, {
      title: `DST BER ${provider}`,
      start: '2026-10-19T07:00:00Z',
      end: '2026-10-19T08:00:00Z',
      timeZone: 'Europe/Berlin',
      recurrence: ['RRULE:FREQ=DAILY;INTERVAL=7;COUNT=3'],
    });
    const got = await instances(provider, `DST BER ${provider}`, '2026-10-01T00:00:00Z', '2026-11-20T00:00:00Z');
    expect(got.map((e) => e.start)).toEqual([
      '2026-10-19T07:00:00.000Z',
      '2026-10-26T08:00:00.000Z',
      '2026-11-02T08:00:00.000Z',
    ]);
  });

  it('expands BYDAY with INTERVAL and UNTIL', async () => {
    await series(provider, {
      title: `Biweekly ${provider}`,
      start: '2026-11-03T15:00:00Z',
      end: '2026-11-03T15:45:00Z',
      timeZone: 'America/New_York',
      recurrence: ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20261210T235959Z'],
    });
    const got = await instances(provider, `Biweekly ${provider}`, '2026-11-01T00:00:00Z', '2026-12-31T00:00:00Z');
    expect(got.map((e) => e.start.slice(0, 10))).toEqual([
      '2026-11-03',
      '2026-11-05',
      '2026-11-17',
      '2026-11-19',
      '2026-12-01',
      '2026-12-03',
    ]);
  });

  it('changes or cancels one occurrence, then the whole series', async () => {
    await series(provider, {
      title: `Therapy ${provider}`,
      start: '2026-11-16T15:00:00Z',
      end: '2026-11-16T16:00:00Z',
      timeZone: 'UTC',
      recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4'],
    });
    const window = ['2026-11-15T00:00:00Z', '2026-12-20T00:00:00Z'] as const;
    const [first, second, third] = await instances(provider, `Therapy ${provider}`, ...window);
    const moved = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: {
        event: second.id,
        draft: { title: `Therapy ${provider} (moved)`, start: '2026-11-24T15:00:00Z', end: '2026-11-24T16:00:00Z' },
      },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const cancelled = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/events?event=${third.id}`,
      token: ws.admin.token,
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    let now = await instances(provider, `Therapy ${provider}`, ...window);
    expect(now.map((e) => [e.title, e.start.slice(0, 10)])).toEqual([
      [`Therapy ${provider}`, '2026-11-16'],
      [`Therapy ${provider} (moved)`, '2026-11-24'],
      [`Therapy ${provider}`, '2026-12-07'],
    ]);

    const whole = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: first.recurringEventId, draft: { location: 'Room 4' } },
    });
    expect(whole.statusCode, whole.body).toBe(200);
    const listed = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?${new URLSearchParams({ timeMin: window[0], timeMax: window[1], calendar: calendars[provider] })}`,
      token: ws.admin.token,
    });
    now = (listed.json().items as (Ev & { location: string | null })[]).filter((e) =>
      e.title.startsWith(`Therapy ${provider}`),
    );
    expect(now).toHaveLength(3);
    expect(
      (now as unknown as { location: string | null }[]).filter((e) => e.location === 'Room 4').length,
    ).toBeGreaterThanOrEqual(2);
  });
});
