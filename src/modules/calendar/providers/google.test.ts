// The Google adapter against Google's own rules, through the emulator: PATCH merges nested objects
// (so timed ⇄ all-day must clear the other kind's members).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/helpers/app.js';
import { connectCalendar } from '../../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../../test/helpers/factories.js';
import { mintEmulatorTokens } from '../../../emulators/calendar/index.js';
import { fromGoogle, googleCalendar, toGoogle } from './google.js';
import type { ProviderSession } from './types.js';

let t: TestApp;
let ws: TestWorkspace;
let calendarId: string;
let email: string;
let session: ProviderSession;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'enterprise' });
  email = `gpatch-${ws.id}@google.example`;
  calendarId = (await connectCalendar(t, ws.admin.token, 'google', email)).calendarId;
  const token = mintEmulatorTokens('google', email).access_token;
  session = {
    baseUrl: `${t.baseUrl}/_emulators/google/calendar/v3`,
    timeoutMs: 10_000,
    connectionId: `test-${ws.id}`,
    token: async () => token,
    refreshedToken: async () => token,
  };
}, 60_000);
afterAll(async () => t?.close());

interface Answer {
  id: string;
  start?: unknown;
  end?: unknown;
  timeZone?: string;
  extendedProperties?: unknown;
  error: { code: number; message: string; errors: { reason: string }[] };
}

/** A call straight at the (emulated) Google Calendar API. */
async function google(method: string, path: string, body?: unknown) {
  const res = await fetch(`${session.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${await session.token()}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

const timed = {
  summary: 'Timed',
  start: { dateTime: '2026-12-01T09:00:00Z', timeZone: 'Europe/Berlin' },
  end: { dateTime: '2026-12-01T10:00:00Z', timeZone: 'Europe/Berlin' },
};

describe('toGoogle', () => {
  it('clears the other kind of time, so a PATCH between timed and all-day does not merge both', () => {
    expect(toGoogle({ start: '2026-12-01T00:00:00Z', end: '2026-12-02T00:00:00Z', allDay: true })).toMatchObject({
      start: { date: '2026-12-01', dateTime: null, timeZone: null },
      end: { date: '2026-12-02', dateTime: null, timeZone: null },
    });
    expect(
      toGoogle({ start: '2026-12-01T09:00:00Z', end: '2026-12-01T10:00:00Z', allDay: false, timeZone: 'Asia/Tokyo' }),
    ).toMatchObject({
      start: { dateTime: '2026-12-01T09:00:00Z', timeZone: 'Asia/Tokyo', date: null },
      end: { dateTime: '2026-12-01T10:00:00Z', timeZone: 'Asia/Tokyo', date: null },
    });
  });
});

describe('the Google emulator merges a PATCH as Google does', () => {
  it('refuses an event left with both date and dateTime, or neither, in Google’s error shape', async () => {
    const made = await google('POST', '/calendars/primary/events', timed);
    expect(made.status).toBe(200);
    const both = await google('PATCH', `/calendars/primary/events/${made.body.id}`, {
      start: { date: '2026-12-01' },
      end: { date: '2026-12-02' },
    });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({
      error: {
        code: 400,
        message: 'Invalid start time.',
        errors: [{ domain: 'global', reason: 'invalid', message: 'Invalid start time.' }],
        status: 'INVALID_ARGUMENT',
      },
    });
    const neither = await google('PATCH', `/calendars/primary/events/${made.body.id}`, {
      start: { dateTime: null },
    });
    expect(neither.status).toBe(400);
    expect(neither.body.error.errors[0].reason).toBe('required');
    // Nothing was changed by the refusals.
    expect((await google('GET', `/calendars/primary/events/${made.body.id}`)).body.start).toEqual(timed.start);
  });

  it('keeps what a patch leaves out of a nested object and removes what it sets to null', async () => {
    const made = await google('POST', '/calendars/primary/events', timed);
    const moved = await google('PATCH', `/calendars/primary/events/${made.body.id}`, {
      start: { dateTime: '2026-12-01T08:00:00Z' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.start).toEqual({ dateTime: '2026-12-01T08:00:00Z', timeZone: 'Europe/Berlin' });
    const allDay = await google('PATCH', `/calendars/primary/events/${made.body.id}`, {
      start: { date: '2026-12-01', dateTime: null, timeZone: null },
      end: { date: '2026-12-02', dateTime: null, timeZone: null },
    });
    expect(allDay.status).toBe(200);
    expect([allDay.body.start, allDay.body.end]).toEqual([{ date: '2026-12-01' }, { date: '2026-12-02' }]);
    const back = await google('PATCH', `/calendars/primary/events/${made.body.id}`, {
      start: { dateTime: '2026-12-01T09:00:00Z', timeZone: 'UTC', date: null },
    });
    expect(back.status).toBe(400);
    expect(back.body.error.message).toBe('Invalid end time.');
    const extended = await google('PATCH', `/calendars/primary/events/${made.body.id}`, {
      extendedProperties: { private: { a: '1', b: '2' } },
    });
    expect(extended.status).toBe(200);
    const merged = await google('PATCH', `/calendars/primary/events/${made.body.id}`, {
      extendedProperties: { private: { a: null, c: '3' } },
    });
    expect(merged.body.extendedProperties).toEqual({ private: { b: '2', c: '3' } });
  });

  it('a refused patch changes nothing, not even the members before the one refused', async () => {
    const made = await google('POST', '/calendars/primary/events', timed);
    const before = await google('GET', `/calendars/primary/events/${made.body.id}`);
    const refused = [
      { summary: 'Changed', description: 'Changed too', transparency: 'sometimes' },
      { summary: 'Changed', recurrence: ['RRULE:FREQ=SOMETIMES'] },
    ];
    for (const body of refused) {
      const answer = await google('PATCH', `/calendars/primary/events/${made.body.id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    expect((await google('GET', `/calendars/primary/events/${made.body.id}`)).body).toEqual(before.body);
  });
});

describe('the Google emulator replaces an event on PUT (events.update) as Google does', () => {
  type Resource = Answer & Record<string, unknown>;
  const full = {
    ...timed,
    description: 'Bring the referral',
    location: 'Room 2',
    attendees: [{ email: 'nurse@example.org', responseStatus: 'accepted' }],
    transparency: 'transparent',
    extendedProperties: { private: { visit: '1' } },
  };

  it('what a PUT leaves out returns to Google’s default (transparency opaque, no description, location, guests or extended properties); a PATCH keeps it', async () => {
    const made = await google('POST', '/calendars/primary/events', full);
    expect(made.status).toBe(200);
    const path = `/calendars/primary/events/${made.body.id}`;
    const kept = {
      description: full.description,
      location: full.location,
      attendees: [{ email: 'nurse@example.org', responseStatus: 'accepted' }],
      transparency: 'transparent',
      extendedProperties: full.extendedProperties,
    };
    const patched = await google('PATCH', path, { summary: 'Patched' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ summary: 'Patched', ...kept });

    const put = await google('PUT', path, { summary: 'Replaced', start: timed.start, end: timed.end });
    expect(put.status).toBe(200);
    const replaced = put.body as Resource;
    expect(replaced).toMatchObject({
      id: made.body.id,
      summary: 'Replaced',
      transparency: 'opaque',
      start: timed.start,
    });
    for (const key of Object.keys(kept).filter((k) => k !== 'transparency')) expect(replaced).not.toHaveProperty(key);
    expect(replaced.created).toBe((made.body as Resource).created);
    expect(replaced.sequence).toBe(2);
    expect((await google('GET', path)).body).toEqual(replaced);

    // A PUT is the whole event: without start and end it is refused, and a refused one changes nothing.
    const noTimes = await google('PUT', path, { summary: 'No times', transparency: 'transparent' });
    expect([noTimes.status, noTimes.body.error.errors[0].reason]).toEqual([400, 'required']);
    const bad = await google('PUT', path, { ...full, summary: 'Bad', transparency: 'sometimes' });
    expect([bad.status, bad.body.error.message]).toEqual([400, 'Invalid transparency value.']);
    expect((await google('GET', path)).body).toEqual(replaced);
    // All of it given again: all of it back.
    const again = await google('PUT', path, full);
    expect(again.body).toMatchObject({ summary: 'Timed', ...kept });
    expect(await google('PUT', '/calendars/primary/events/nosuchevent1', full)).toMatchObject({ status: 404 });
  });

  it('a PUT of one occurrence that leaves transparency out makes it opaque, not free like its series', async () => {
    const series = await google('POST', '/calendars/primary/events', {
      summary: 'Walk-in hour',
      transparency: 'transparent',
      start: { dateTime: '2027-04-05T14:00:00Z', timeZone: 'UTC' },
      end: { dateTime: '2027-04-05T15:00:00Z', timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    const list = async () =>
      (
        (
          await google(
            'GET',
            '/calendars/primary/events?singleEvents=true&timeMin=2027-04-05T00:00:00Z&timeMax=2027-04-08T00:00:00Z',
          )
        ).body as unknown as { items: Resource[] }
      ).items;
    const [, second] = await list();
    const put = await google('PUT', `/calendars/primary/events/${second.id}`, {
      summary: 'Walk-in hour (covered)',
      start: second.start,
      end: second.end,
    });
    expect(put.status).toBe(200);
    expect((await list()).map((e) => [e.summary, e.transparency])).toEqual([
      ['Walk-in hour', 'transparent'],
      ['Walk-in hour (covered)', 'opaque'],
      ['Walk-in hour', 'transparent'],
    ]);
    // The series itself PUT without transparency: opaque, still repeating (its recurrence given again).
    const whole = await google('PUT', `/calendars/primary/events/${series.body.id}`, {
      summary: 'Walk-in hour',
      start: { dateTime: '2027-04-05T14:00:00Z', timeZone: 'UTC' },
      end: { dateTime: '2027-04-05T15:00:00Z', timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    expect(whole.status).toBe(200);
    expect((await list()).map((e) => e.transparency)).toEqual(['opaque', 'opaque', 'opaque']);
  });

  it('takes faults as events.update', async () => {
    const made = await google('POST', '/calendars/primary/events', timed);
    const fault = (body?: unknown) =>
      fetch(`${t.baseUrl}/_emulators/google/faults`, {
        method: body ? 'POST' : 'DELETE',
        headers: body ? { 'content-type': 'application/json' } : {},
        body: body ? JSON.stringify(body) : undefined,
      });
    await fault({ operation: 'events.update', status: 503, times: 1 });
    try {
      const put = await google('PUT', `/calendars/primary/events/${made.body.id}`, { ...timed, summary: 'Later' });
      expect(put.status).toBe(503);
    } finally {
      await fault();
    }
    expect((await google('GET', `/calendars/primary/events/${made.body.id}`)).body).toMatchObject({ summary: 'Timed' });
  });
});

describe('changing an event between timed and all-day through Atrium', () => {
  it('works in both directions', async () => {
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: {
        calendar: calendarId,
        draft: { title: 'Flip', start: '2026-12-03T09:00:00Z', end: '2026-12-03T10:00:00Z', timeZone: 'UTC' },
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const eventId = made.json().eventId;
    const toAllDay = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: eventId, draft: { allDay: true, start: '2026-12-03T00:00:00Z', end: '2026-12-04T00:00:00Z' } },
    });
    expect(toAllDay.statusCode, toAllDay.body).toBe(200);
    expect(toAllDay.json().event).toMatchObject({
      allDay: true,
      start: '2026-12-03T00:00:00.000Z',
      end: '2026-12-04T00:00:00.000Z',
    });
    const toTimed = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: eventId, draft: { allDay: false, start: '2026-12-03T14:00:00Z', end: '2026-12-03T15:00:00Z' } },
    });
    expect(toTimed.statusCode, toTimed.body).toBe(200);
    expect(toTimed.json().event).toMatchObject({ allDay: false, start: '2026-12-03T14:00:00.000Z' });
  });
});

describe('a write Google took is not answered as failed', () => {
  it("when the read of the calendar's zone after it fails, the draft's zone stands in", async () => {
    const fault = (body?: unknown) =>
      fetch(`${t.baseUrl}/_emulators/google/faults`, {
        method: body ? 'POST' : 'DELETE',
        headers: body ? { 'content-type': 'application/json' } : {},
        body: body ? JSON.stringify(body) : undefined,
      });
    // An all-day event has no zone of its own: the calendar's is read after the insert, and that read fails.
    await fault({ operation: 'calendars.get', status: 503, times: 1 });
    try {
      const made = await t.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: {
          calendar: calendarId,
          draft: {
            title: 'All-day home visits',
            start: '2027-01-14T00:00:00Z',
            end: '2027-01-15T00:00:00Z',
            allDay: true,
            timeZone: 'America/Chicago',
            attendees: [{ email: 'nurse@example.org' }],
          },
        },
      });
      expect(made.statusCode, made.body).toBe(201);
      expect(made.json().event).toMatchObject({ allDay: true, timeZone: 'America/Chicago' });
    } finally {
      await fault();
    }
  });
});

describe('events without their own zone are in their calendar’s', () => {
  /** The session with a count of the calls made through it. */
  const counted = () => {
    let calls = 0;
    const s: ProviderSession = {
      ...session,
      token: async () => {
        calls++;
        return session.token();
      },
    };
    return { session: s, calls: () => calls };
  };

  it('reads the calendar’s zone (once per operation, none after a list) and keeps it on a change', async () => {
    const zoned = await google('PATCH', '/calendars/primary', { timeZone: 'America/New_York' });
    expect(zoned.status).toBe(200);
    expect(zoned.body.timeZone).toBe('America/New_York');
    // Made elsewhere with a UTC offset and no timeZone: Google shows none.
    const made = await google('POST', '/calendars/primary/events', {
      summary: 'No zone',
      start: { dateTime: '2026-12-05T15:00:00Z' },
      end: { dateTime: '2026-12-05T16:00:00Z' },
    });
    expect(made.status).toBe(200);
    expect(made.body.start).toEqual({ dateTime: '2026-12-05T15:00:00Z' });

    const op = counted();
    const read = await googleCalendar.getEvent(op.session, email, made.body.id);
    expect(read.timeZone).toBe('America/New_York');
    const renamed = await googleCalendar.patchEvent(op.session, email, made.body.id, { title: 'Renamed' });
    expect(renamed.timeZone).toBe('America/New_York');
    expect(op.calls()).toBe(3); // the event, the calendar once, the patch

    const listed = counted();
    await googleCalendar.listEvents(listed.session, email, {
      timeMin: '2026-12-05T00:00:00Z',
      timeMax: '2026-12-06T00:00:00Z',
    });
    expect((await googleCalendar.getEvent(listed.session, email, made.body.id)).timeZone).toBe('America/New_York');
    expect(listed.calls()).toBe(2); // the list gave the zone

    // An event with its own zone needs no calendar read.
    const own = await google('POST', '/calendars/primary/events', timed);
    const plain = counted();
    expect((await googleCalendar.getEvent(plain.session, email, own.body.id)).timeZone).toBe('Europe/Berlin');
    expect(plain.calls()).toBe(1);
  });

  it('a change of its times through Atrium writes the calendar’s zone to Google, not UTC', async () => {
    await google('PATCH', '/calendars/primary', { timeZone: 'America/New_York' });
    const made = await google('POST', '/calendars/primary/events', {
      summary: 'Offset only',
      start: { dateTime: '2026-12-07T15:00:00Z' },
      end: { dateTime: '2026-12-07T16:00:00Z' },
    });
    const list = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?timeMin=2026-12-07T00:00:00Z&timeMax=2026-12-08T00:00:00Z&calendar=${calendarId}`,
      token: ws.admin.token,
    });
    const listed = list.json().items.find((e: { title: string }) => e.title === 'Offset only');
    expect(listed.timeZone).toBe('America/New_York');
    const moved = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: listed.id, draft: { start: '2026-12-07T17:00:00Z', end: '2026-12-07T18:00:00Z' } },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().event.timeZone).toBe('America/New_York');
    const raw = await google('GET', `/calendars/primary/events/${made.body.id}`);
    expect(raw.body.start).toEqual({ dateTime: '2026-12-07T17:00:00Z', timeZone: 'America/New_York' });
  });
});

describe('all-day events in a list window', () => {
  it('overlap the window as their days in the calendar’s zone, as Google evaluates them', async () => {
    await google('PATCH', '/calendars/primary', { timeZone: 'America/New_York' });
    const single = await google('POST', '/calendars/primary/events', {
      summary: 'Holiday',
      start: { date: '2026-12-10' },
      end: { date: '2026-12-11' },
    });
    expect(single.status).toBe(200);
    const series = await google('POST', '/calendars/primary/events', {
      summary: 'Course',
      start: { date: '2026-12-20' },
      end: { date: '2026-12-21' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    expect(series.status).toBe(200);
    const titles = async (timeMin: string, timeMax: string) => {
      const list = await google(
        'GET',
        `/calendars/primary/events?singleEvents=true&timeMin=${timeMin}&timeMax=${timeMax}`,
      );
      return (list.body as unknown as { items: { summary: string; start: { date?: string } }[] }).items.map(
        (e) => `${e.summary} ${e.start.date}`,
      );
    };
    // 10 December in New York is 05:00Z on the 10th to 05:00Z on the 11th.
    expect(await titles('2026-12-11T00:00:00Z', '2026-12-11T04:00:00Z')).toEqual(['Holiday 2026-12-10']);
    expect(await titles('2026-12-10T00:00:00Z', '2026-12-10T04:00:00Z')).toEqual([]);
    expect(await titles('2026-12-23T00:00:00Z', '2026-12-23T04:00:00Z')).toEqual(['Course 2026-12-22']);
    expect(await titles('2026-12-20T00:00:00Z', '2026-12-20T04:00:00Z')).toEqual([]);
    // Through the adapter: the day at 00:00Z, end exclusive.
    const listed = await googleCalendar.listEvents(session, email, {
      timeMin: '2026-12-11T00:00:00Z',
      timeMax: '2026-12-11T04:00:00Z',
    });
    expect(listed.map((e) => [e.title, e.start, e.end, e.allDay])).toEqual([
      ['Holiday', '2026-12-10T00:00:00.000Z', '2026-12-11T00:00:00.000Z', true],
    ]);
  });
});

describe('free/busy: Google’s transparency', () => {
  type Flags = { id: string; transparency?: string; eventType?: string; summary?: string };
  const flags = (body: Answer) => body as unknown as Flags;

  it('reads opaque (the default, also when absent) as busy, transparent as free, an out-of-office block as busy', () => {
    const read = (extra: Record<string, unknown>) =>
      fromGoogle(
        {
          id: 'e',
          start: { dateTime: '2027-03-01T09:00:00Z' },
          end: { dateTime: '2027-03-01T10:00:00Z' },
          ...extra,
        } as never,
        'UTC',
      ).showAs;
    expect(read({})).toBe('busy');
    expect(read({ transparency: 'opaque' })).toBe('busy');
    expect(read({ transparency: 'transparent' })).toBe('free');
    expect(read({ transparency: 'transparent', eventType: 'outOfOffice' })).toBe('busy');
    expect(toGoogle({ showAs: 'free' })).toEqual({ transparency: 'transparent' });
    expect(toGoogle({ showAs: 'busy' })).toEqual({ transparency: 'opaque' });
    expect(toGoogle({ title: 'x' })).not.toHaveProperty('transparency');
  });

  it('the emulator keeps transparency and eventType as Google names them, opaque when absent, per occurrence too', async () => {
    const plain = await google('POST', '/calendars/primary/events', {
      summary: 'No flag',
      start: { date: '2027-03-02' },
      end: { date: '2027-03-03' },
    });
    expect(plain.status).toBe(200);
    expect(flags(plain.body)).toMatchObject({ transparency: 'opaque', eventType: 'default' });
    const away = await google('POST', '/calendars/primary/events', {
      summary: 'Away',
      eventType: 'outOfOffice',
      start: { dateTime: '2027-03-02T13:00:00Z' },
      end: { dateTime: '2027-03-02T17:00:00Z' },
    });
    expect(flags(away.body)).toMatchObject({ eventType: 'outOfOffice', transparency: 'opaque' });
    const bad = await google('POST', '/calendars/primary/events', { ...timed, transparency: 'sometimes' });
    expect([bad.status, bad.body.error.errors[0].reason]).toEqual([400, 'invalid']);

    // A series marked free: its occurrences are free; one occurrence made opaque holds it alone.
    const series = await google('POST', '/calendars/primary/events', {
      summary: 'Open lab',
      transparency: 'transparent',
      start: { dateTime: '2027-03-08T14:00:00Z', timeZone: 'UTC' },
      end: { dateTime: '2027-03-08T15:00:00Z', timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    expect(flags(series.body).transparency).toBe('transparent');
    const list = async () =>
      (
        (
          await google(
            'GET',
            '/calendars/primary/events?singleEvents=true&timeMin=2027-03-08T00:00:00Z&timeMax=2027-03-11T00:00:00Z',
          )
        ).body as unknown as { items: Flags[] }
      ).items;
    const instances = await list();
    expect(instances.map((e) => e.transparency)).toEqual(['transparent', 'transparent', 'transparent']);
    const second = await google('PATCH', `/calendars/primary/events/${instances[1].id}`, { transparency: 'opaque' });
    expect(second.status).toBe(200);
    expect(flags(second.body).transparency).toBe('opaque');
    expect((await list()).map((e) => e.transparency)).toEqual(['transparent', 'opaque', 'transparent']);
  });

  it('the adapter writes and reads it: inserted, changed, listed (occurrences included)', async () => {
    const made = await googleCalendar.insertEvent(session, email, {
      title: 'Notice',
      start: '2027-03-15T00:00:00Z',
      end: '2027-03-16T00:00:00Z',
      allDay: true,
      showAs: 'free',
    });
    expect(made.showAs).toBe('free');
    expect(flags((await google('GET', `/calendars/primary/events/${made.providerEventId}`)).body).transparency).toBe(
      'transparent',
    );
    const changed = await googleCalendar.patchEvent(session, email, made.providerEventId, { showAs: 'busy' });
    expect(changed.showAs).toBe('busy');
    expect(flags((await google('GET', `/calendars/primary/events/${made.providerEventId}`)).body).transparency).toBe(
      'opaque',
    );
    const daily = await googleCalendar.insertEvent(session, email, {
      title: 'Drop-in hour',
      start: '2027-03-16T14:00:00Z',
      end: '2027-03-16T15:00:00Z',
      timeZone: 'UTC',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=2'],
      showAs: 'free',
    });
    const listed = await googleCalendar.listEvents(session, email, {
      timeMin: '2027-03-15T00:00:00Z',
      timeMax: '2027-03-18T00:00:00Z',
    });
    expect(listed.map((e) => [e.title, e.showAs])).toEqual([
      ['Notice', 'busy'],
      ['Drop-in hour', 'free'],
      ['Drop-in hour', 'free'],
    ]);
    expect(listed[1].recurringEventId).toBe(daily.providerEventId);
  });

  it('through Atrium: a new event is busy when timed and free when all-day unless it says, and a change writes it', async () => {
    const create = (draft: Record<string, unknown>) =>
      t.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: { calendar: calendarId, draft },
      });
    const visit = await create({ title: 'Timed', start: '2027-03-22T09:00:00Z', end: '2027-03-22T10:00:00Z' });
    const notice = await create({
      title: 'Holiday',
      start: '2027-03-23T00:00:00Z',
      end: '2027-03-24T00:00:00Z',
      allDay: true,
    });
    const away = await create({
      title: 'At a conference',
      start: '2027-03-24T00:00:00Z',
      end: '2027-03-25T00:00:00Z',
      allDay: true,
      showAs: 'busy',
    });
    expect([visit, notice, away].map((r) => [r.statusCode, r.json().event.showAs])).toEqual([
      [201, 'busy'],
      [201, 'free'],
      [201, 'busy'],
    ]);
    const changed = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: visit.json().eventId, draft: { showAs: 'free' } },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().event.showAs).toBe('free');
    const listed = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?timeMin=2027-03-22T00:00:00Z&timeMax=2027-03-25T00:00:00Z&calendar=${calendarId}`,
      token: ws.admin.token,
    });
    expect(listed.json().items.map((e: { title: string; showAs: string }) => [e.title, e.showAs])).toEqual([
      ['Timed', 'free'],
      ['Holiday', 'free'],
      ['At a conference', 'busy'],
    ]);
    const bad = await create({ title: 'X', start: '2027-03-22T11:00:00Z', end: '2027-03-22T12:00:00Z', showAs: 'oof' });
    expect(bad.statusCode).toBe(400);
  });
});
