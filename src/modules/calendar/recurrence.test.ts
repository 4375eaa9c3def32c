// The RFC 5545 examples of contract §5.2 through both providers (adapter → emulator → adapter):
// wall-clock time kept across daylight-saving changes, BYDAY with INTERVAL and UNTIL, and
// single-occurrence changes and cancellations next to whole-series changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { MAX_COUNT, rruleProblem } from '../../platform/rrule-check.js';

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

describe('repeat rules a calendar can hold (platform/rrule-check)', () => {
  it('takes daily to yearly rules with RFC 5545 parts in range, and says what is wrong with the rest', () => {
    for (const ok of [
      'FREQ=WEEKLY;BYDAY=MO,TH;COUNT=8',
      'FREQ=MONTHLY;BYDAY=-1FR',
      'FREQ=MONTHLY;BYDAY=2TU;INTERVAL=2;UNTIL=20271231T235959Z',
      'FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=15',
      'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1',
      'freq=daily;until=20261231',
      `FREQ=DAILY;COUNT=${MAX_COUNT}`,
    ])
      expect(rruleProblem(ok), ok).toBeUndefined();
    for (const [bad, words] of [
      ['FREQ=SECONDLY', 'daily, weekly'],
      ['FREQ=MINUTELY;COUNT=1000000000', 'daily, weekly'],
      ['FREQ=HOURLY', 'daily, weekly'],
      ['FREQ=DAILY;BYHOUR=9,10', 'BYHOUR'],
      ['FREQ=WEEKLY;BYDAY=XX', 'BYDAY=XX'],
      ['FREQ=WEEKLY;BYDAY=0MO', 'BYDAY=0MO'],
      ['FREQ=DAILY;INTERVAL=0', 'INTERVAL'],
      ['FREQ=DAILY;COUNT=-5', 'COUNT'],
      [`FREQ=DAILY;COUNT=${MAX_COUNT + 1}`, 'COUNT'],
      ['FREQ=DAILY;COUNT=3;UNTIL=20261231', 'not both'],
      ['FREQ=DAILY;UNTIL=20260230', 'UNTIL'],
      ['FREQ=DAILY;FREQ=WEEKLY', 'twice'],
      ['COUNT=3', 'needs FREQ'],
      ['FREQ=DAILY;X-NAME=1', 'not part'],
      ['FREQ=MONTHLY;BYMONTHDAY=32', 'BYMONTHDAY'],
    ])
      expect(rruleProblem(bad), bad).toContain(words);
  });
});

describe.each(['google', 'microsoft'] as const)('recurrence through %s', (provider) => {
  it('refuses a rule the calendar cannot hold with 422 invalid_draft, creating and changing, and writes nothing', async () => {
    const window = { timeMin: '2027-03-01T00:00:00Z', timeMax: '2027-03-08T00:00:00Z' };
    const id = await series(provider, {
      title: `Rules ${provider}`,
      start: '2027-03-01T10:00:00Z',
      end: '2027-03-01T10:30:00Z',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    for (const rule of ['RRULE:FREQ=SECONDLY', 'RRULE:FREQ=WEEKLY;BYDAY=XX', 'RRULE:FREQ=DAILY;COUNT=-5']) {
      const created = await t.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: {
          calendar: calendars[provider],
          draft: {
            title: `Bad ${provider}`,
            start: '2027-03-02T10:00:00Z',
            end: '2027-03-02T10:30:00Z',
            recurrence: [rule],
          },
        },
      });
      expect(created.statusCode, `${rule} → ${created.body}`).toBe(422);
      expect(created.json().code).toBe('invalid_draft');
      const changed = await t.request({
        method: 'PATCH',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: { event: id, draft: { recurrence: [rule] } },
      });
      expect(changed.statusCode, `${rule} → ${changed.body}`).toBe(422);
    }
    expect(await instances(provider, 'Bad', window.timeMin, window.timeMax)).toHaveLength(0);
    expect(await instances(provider, `Rules ${provider}`, window.timeMin, window.timeMax)).toHaveLength(3);
  });

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
