// The Graph adapter against Graph's own shapes: Windows zone names from Outlook, and the emulator
// answering as Graph does (it accepts every Windows name and echoes the one the client sent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/helpers/app.js';
import { connectCalendar } from '../../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../../test/helpers/factories.js';
import { mintEmulatorTokens } from '../../../emulators/calendar/index.js';
import { fromGraph, microsoftCalendar } from './microsoft.js';
import type { ProviderSession } from './types.js';
import { ianaZoneOf, isTimeZone, WINDOWS_ZONES } from './zoned.js';

const graph = (extra: Record<string, unknown>) =>
  fromGraph({
    id: 'e',
    start: { dateTime: '2026-11-24T17:00:00.0000000', timeZone: 'UTC' },
    end: { dateTime: '2026-11-24T17:30:00.0000000', timeZone: 'UTC' },
    ...extra,
  } as never);

describe('zones from Graph', () => {
  it('reads Windows names as IANA zones (CLDR), keeps IANA names, and falls back to UTC', () => {
    expect(graph({ originalStartTimeZone: 'Pacific Standard Time' }).timeZone).toBe('America/Los_Angeles');
    expect(graph({ originalStartTimeZone: 'Tokyo Standard Time' }).timeZone).toBe('Asia/Tokyo');
    expect(graph({ originalStartTimeZone: 'W. Europe Standard Time' }).timeZone).toBe('Europe/Berlin');
    expect(graph({ originalStartTimeZone: 'UTC-11' }).timeZone).toBe('Etc/GMT+11');
    expect(graph({ originalStartTimeZone: 'UTC' }).timeZone).toBe('UTC');
    expect(graph({ originalStartTimeZone: 'Europe/Lisbon' }).timeZone).toBe('Europe/Lisbon');
    expect(graph({ originalStartTimeZone: 'tzone://Microsoft/Utc' }).timeZone).toBe('UTC');
    expect(graph({ originalStartTimeZone: 'tzone://Microsoft/Custom' }).timeZone).toBe('UTC');
    expect(graph({ originalStartTimeZone: 'Atlantis Standard Time' }).timeZone).toBe('UTC');
    expect(graph({}).timeZone).toBe('UTC');
  });

  it('maps every Windows name of the table to a zone Intl knows, the emulator holding the same table', () => {
    expect(Object.keys(WINDOWS_ZONES).length).toBeGreaterThan(130);
    for (const [windows, iana] of Object.entries(WINDOWS_ZONES)) {
      expect(isTimeZone(iana), `${windows} → ${iana}`).toBe(true);
      expect(() => new Intl.DateTimeFormat('en', { timeZone: ianaZoneOf(windows) })).not.toThrow();
    }
  });
});

let t: TestApp;
let ws: TestWorkspace;
let calendarId: string;
let email: string;
let session: ProviderSession;
let graphCalendarId: string;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'enterprise' });
  email = `zones-${ws.id}@microsoft.example`;
  calendarId = (await connectCalendar(t, ws.admin.token, 'microsoft', email)).calendarId;
  const token = mintEmulatorTokens('microsoft', email).access_token;
  session = {
    baseUrl: `${t.baseUrl}/_emulators/microsoft/v1.0`,
    timeoutMs: 10_000,
    connectionId: `test-${ws.id}`,
    token: async () => token,
    refreshedToken: async () => token,
  };
  graphCalendarId = (await microsoftCalendar.listCalendars(session))[0].providerCalendarId;
}, 60_000);
afterAll(async () => t?.close());

/** An event made the way Outlook makes one: straight at Graph, with a Windows zone name. */
async function outlookEvent(zone: string, start: string, end: string) {
  const token = await session.token();
  return fetch(`${session.baseUrl}/me/calendars/${graphCalendarId}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      subject: `Made in Outlook (${zone})`,
      start: { dateTime: start, timeZone: zone },
      end: { dateTime: end, timeZone: zone },
    }),
  });
}

describe('events made in Outlook with Windows zone names', () => {
  it('the emulator accepts every name Graph does and echoes it in originalStartTimeZone', async () => {
    const res = await outlookEvent('Tokyo Standard Time', '2026-11-25T10:00:00', '2026-11-25T10:30:00');
    expect(res.status, await res.clone().text()).toBe(201);
    const made = (await res.json()) as { id: string; originalStartTimeZone: string; start: { dateTime: string } };
    expect(made.originalStartTimeZone).toBe('Tokyo Standard Time');
    expect(made.start.dateTime).toBe('2026-11-25T01:00:00.0000000');
    const read = await microsoftCalendar.getEvent(session, graphCalendarId, made.id);
    expect(read).toMatchObject({ timeZone: 'Asia/Tokyo', start: '2026-11-25T01:00:00.000Z' });
    expect((await outlookEvent('Atlantis Standard Time', '2026-11-25T10:00:00', '2026-11-25T10:30:00')).status).toBe(
      400,
    );
  });

  it('are listed and changed through Atrium in their IANA zone (no 500 after Graph took the change)', async () => {
    const res = await outlookEvent('Pacific Standard Time', '2026-11-26T09:00:00', '2026-11-26T09:45:00');
    expect(res.status).toBe(201);
    const made = (await res.json()) as { id: string };
    const list = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?timeMin=2026-11-26T00:00:00Z&timeMax=2026-11-27T00:00:00Z&calendar=${calendarId}`,
      token: ws.admin.token,
    });
    expect(list.statusCode, list.body).toBe(200);
    const listed = list.json().items.find((e: { title: string }) => e.title.includes('Pacific'));
    expect(listed).toMatchObject({ timeZone: 'America/Los_Angeles', start: '2026-11-26T17:00:00.000Z' });
    const moved = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: {
        event: listed.id,
        draft: { title: 'Moved', start: '2026-11-26T18:00:00Z', end: '2026-11-26T18:45:00Z' },
      },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().event).toMatchObject({
      title: 'Moved',
      timeZone: 'America/Los_Angeles',
      start: '2026-11-26T18:00:00.000Z',
    });
    // Written back in its own zone: 10:00 in Los Angeles.
    const token = await session.token();
    const raw = (await (
      await fetch(`${session.baseUrl}/me/events/${made.id}`, {
        headers: { authorization: `Bearer ${token}`, prefer: 'outlook.timezone="Pacific Standard Time"' },
      })
    ).json()) as { start: { dateTime: string; timeZone: string } };
    expect(raw.start).toEqual({ dateTime: '2026-11-26T10:00:00.0000000', timeZone: 'Pacific Standard Time' });
  });
});

describe('all-day events from Graph', () => {
  const allDay = (start: string, end: string, zone: string, extra: Record<string, unknown> = {}) =>
    fromGraph({
      id: 'd',
      isAllDay: true,
      start: { dateTime: start, timeZone: 'UTC' },
      end: { dateTime: end, timeZone: 'UTC' },
      originalStartTimeZone: zone,
      ...extra,
    } as never);

  it('are their days at 00:00Z, end exclusive, as Google’s are, whichever way Graph writes them', () => {
    const day = { start: '2026-03-19T00:00:00.000Z', end: '2026-03-20T00:00:00.000Z', allDay: true };
    // Midnight to midnight, as Microsoft documents for every Prefer zone.
    expect(allDay('2026-03-19T00:00:00.0000000', '2026-03-20T00:00:00.0000000', 'Pacific Standard Time')).toMatchObject(
      day,
    );
    // The instants of the event's midnights (Los Angeles, 19 March), read in its own zone.
    expect(allDay('2026-03-19T07:00:00.0000000', '2026-03-20T07:00:00.0000000', 'Pacific Standard Time')).toMatchObject(
      { ...day, timeZone: 'America/Los_Angeles' },
    );
    // East of UTC the instant falls on the day before.
    expect(allDay('2026-03-18T15:00:00.0000000', '2026-03-19T15:00:00.0000000', 'Tokyo Standard Time')).toMatchObject(
      day,
    );
    // Two days across a DST change in Los Angeles (8 March 2026).
    expect(allDay('2026-03-07T08:00:00.0000000', '2026-03-09T07:00:00.0000000', 'America/Los_Angeles')).toMatchObject({
      start: '2026-03-07T00:00:00.000Z',
      end: '2026-03-09T00:00:00.000Z',
    });
    // An occurrence of an all-day series is named by its day too.
    expect(
      allDay('2026-03-19T07:00:00.0000000', '2026-03-20T07:00:00.0000000', 'Pacific Standard Time', {
        type: 'occurrence',
        seriesMasterId: 's',
        originalStart: '2026-03-19T07:00:00Z',
      }).originalStart,
    ).toBe('2026-03-19T00:00:00.000Z');
  });

  it('through the emulator: made, read and listed as their days', async () => {
    const made = await microsoftCalendar.insertEvent(session, graphCalendarId, {
      title: 'Away',
      start: '2026-03-19T00:00:00Z',
      end: '2026-03-21T00:00:00Z',
      allDay: true,
      timeZone: 'America/Los_Angeles',
    });
    expect(made).toMatchObject({
      allDay: true,
      start: '2026-03-19T00:00:00.000Z',
      end: '2026-03-21T00:00:00.000Z',
      timeZone: 'America/Los_Angeles',
    });
    // Graph shows midnight whatever the Prefer zone.
    const token = await session.token();
    for (const prefer of ['UTC', 'Tokyo Standard Time']) {
      const raw = (await (
        await fetch(`${session.baseUrl}/me/events/${made.providerEventId}`, {
          headers: { authorization: `Bearer ${token}`, prefer: `outlook.timezone="${prefer}"` },
        })
      ).json()) as { start: unknown };
      expect(raw.start).toEqual({ dateTime: '2026-03-19T00:00:00.0000000', timeZone: prefer });
    }
    // Held as Los Angeles days: 20 March 03:00Z is still the 19th there.
    const listed = await microsoftCalendar.listEvents(session, graphCalendarId, {
      timeMin: '2026-03-21T03:00:00Z',
      timeMax: '2026-03-21T05:00:00Z',
    });
    expect(listed.map((e) => [e.title, e.start, e.end])).toEqual([
      ['Away', '2026-03-19T00:00:00.000Z', '2026-03-21T00:00:00.000Z'],
    ]);
  });
});

/** A call straight at the (emulated) Graph API. */
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${session.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${await session.token()}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as {
      id: string;
      showAs?: string;
      value?: unknown[];
      error?: { code: string; message: string; innerError?: unknown };
    },
  };
};
/** A Graph event body: an hour from 09:00 UTC on the day. */
const at = (day: string, extra: Record<string, unknown> = {}) => ({
  subject: `On ${day}`,
  start: { dateTime: `${day}T09:00:00`, timeZone: 'UTC' },
  end: { dateTime: `${day}T10:00:00`, timeZone: 'UTC' },
  ...extra,
});

describe('free/busy: Graph’s showAs', () => {
  it('reads free and workingElsewhere as free; tentative, busy, oof, unknown and none as busy', () => {
    const read = (showAs?: string) => graph(showAs === undefined ? {} : { showAs }).showAs;
    expect(['free', 'workingElsewhere', 'tentative', 'busy', 'oof', 'unknown', undefined].map(read)).toEqual([
      'free',
      'free',
      'busy',
      'busy',
      'busy',
      'busy',
      'busy',
    ]);
  });

  it('the emulator keeps showAs as Graph names it, busy when absent, per occurrence too, and refuses other values', async () => {
    const plain = await call('POST', `/me/calendars/${graphCalendarId}/events`, at('2027-04-01'));
    expect([plain.status, plain.body.showAs]).toEqual([201, 'busy']);
    const elsewhere = await call(
      'POST',
      `/me/calendars/${graphCalendarId}/events`,
      at('2027-04-02', { showAs: 'workingElsewhere' }),
    );
    expect(elsewhere.body.showAs).toBe('workingElsewhere');
    expect((await microsoftCalendar.getEvent(session, graphCalendarId, elsewhere.body.id)).showAs).toBe('free');
    const bad = await call('POST', `/me/calendars/${graphCalendarId}/events`, at('2027-04-03', { showAs: 'away' }));
    expect(bad.status).toBe(400);

    const series = await call(
      'POST',
      `/me/calendars/${graphCalendarId}/events`,
      at('2027-04-05', {
        showAs: 'free',
        recurrence: {
          pattern: { type: 'daily', interval: 1 },
          range: { type: 'numbered', startDate: '2027-04-05', numberOfOccurrences: 3 },
        },
      }),
    );
    expect([series.status, series.body.showAs]).toEqual([201, 'free']);
    const view = async () =>
      (
        (
          await call(
            'GET',
            `/me/calendars/${graphCalendarId}/calendarView?startDateTime=2027-04-05T00:00:00Z&endDateTime=2027-04-08T00:00:00Z`,
          )
        ).body.value as { id: string; showAs: string }[]
      ).map((e) => e.showAs);
    expect(await view()).toEqual(['free', 'free', 'free']);
    const occurrences = (
      await call(
        'GET',
        `/me/calendars/${graphCalendarId}/calendarView?startDateTime=2027-04-06T00:00:00Z&endDateTime=2027-04-07T00:00:00Z`,
      )
    ).body.value as { id: string }[];
    const oof = await call('PATCH', `/me/events/${occurrences[0].id}`, { showAs: 'oof' });
    expect([oof.status, oof.body.showAs]).toEqual([200, 'oof']);
    expect(await view()).toEqual(['free', 'oof', 'free']);
  });

  it('the adapter writes and reads it: inserted, changed, listed (occurrences included)', async () => {
    const made = await microsoftCalendar.insertEvent(session, graphCalendarId, {
      title: 'Notice',
      start: '2027-04-12T00:00:00Z',
      end: '2027-04-13T00:00:00Z',
      allDay: true,
      timeZone: 'UTC',
      showAs: 'free',
    });
    expect(made.showAs).toBe('free');
    expect((await call('GET', `/me/events/${made.providerEventId}`)).body.showAs).toBe('free');
    const changed = await microsoftCalendar.patchEvent(session, graphCalendarId, made.providerEventId, {
      showAs: 'busy',
    });
    expect(changed.showAs).toBe('busy');
    expect((await call('GET', `/me/events/${made.providerEventId}`)).body.showAs).toBe('busy');
    await microsoftCalendar.insertEvent(session, graphCalendarId, {
      title: 'Drop-in hour',
      start: '2027-04-13T14:00:00Z',
      end: '2027-04-13T15:00:00Z',
      timeZone: 'UTC',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=2'],
      showAs: 'free',
    });
    const listed = await microsoftCalendar.listEvents(session, graphCalendarId, {
      timeMin: '2027-04-12T00:00:00Z',
      timeMax: '2027-04-15T00:00:00Z',
    });
    expect(listed.map((e) => [e.title, e.showAs, Boolean(e.recurringEventId)])).toEqual([
      ['Notice', 'busy', false],
      ['Drop-in hour', 'free', true],
      ['Drop-in hour', 'free', true],
    ]);
  });

  it('through Atrium: a new all-day event is free unless it says busy, a timed one busy', async () => {
    const create = (draft: Record<string, unknown>) =>
      t.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: { calendar: calendarId, draft },
      });
    const made = [
      await create({ title: 'Timed', start: '2027-04-19T09:00:00Z', end: '2027-04-19T10:00:00Z' }),
      await create({ title: 'Holiday', start: '2027-04-20T00:00:00Z', end: '2027-04-21T00:00:00Z', allDay: true }),
      await create({
        title: 'Away',
        start: '2027-04-21T00:00:00Z',
        end: '2027-04-22T00:00:00Z',
        allDay: true,
        showAs: 'busy',
      }),
    ];
    expect(made.map((r) => [r.statusCode, r.json().event.showAs])).toEqual([
      [201, 'busy'],
      [201, 'free'],
      [201, 'busy'],
    ]);
    const changed = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: made[1].json().eventId, draft: { showAs: 'busy' } },
    });
    expect([changed.statusCode, changed.json().event.showAs]).toEqual([200, 'busy']);
    const listed = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?timeMin=2027-04-19T00:00:00Z&timeMax=2027-04-22T00:00:00Z&calendar=${calendarId}`,
      token: ws.admin.token,
    });
    expect(listed.json().items.map((e: { title: string; showAs: string }) => [e.title, e.showAs])).toEqual([
      ['Timed', 'busy'],
      ['Holiday', 'busy'],
      ['Away', 'busy'],
    ]);
  });
});

describe('the Microsoft emulator: a refused PATCH changes nothing', () => {
  /** Each is refused for a member after `subject` (and `body`), which must not be kept either. */
  const refused = [
    { subject: 'New', body: { content: 'New too' }, showAs: 'sometimes' },
    { subject: 'New', start: { dateTime: '2027-05-03T11:00:00', timeZone: 'Atlantis Standard Time' } },
    { subject: 'New', recurrence: { pattern: { type: 'sometimes' }, range: { type: 'noEnd' } } },
    { subject: 'New', isOnlineMeeting: true, onlineMeetingProvider: 'skypeForBusiness' },
  ];
  const expectGraph400 = (answer: Awaited<ReturnType<typeof call>>, body: unknown) => {
    expect(answer.status, JSON.stringify(body)).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'ErrorInvalidRequest', message: expect.any(String) });
    expect(answer.body.error?.innerError).toBeDefined();
  };
  const view = (from: string, to: string) =>
    call('GET', `/me/calendars/${graphCalendarId}/calendarView?startDateTime=${from}&endDateTime=${to}`);

  it('of a single event: not even the members before the one refused, nor its etag', async () => {
    const made = await call('POST', `/me/calendars/${graphCalendarId}/events`, at('2027-05-03'));
    expect(made.status).toBe(201);
    const before = await call('GET', `/me/events/${made.body.id}`);
    for (const body of refused) expectGraph400(await call('PATCH', `/me/events/${made.body.id}`, body), body);
    expect(await call('GET', `/me/events/${made.body.id}`)).toEqual(before);
    // And one accepted after them takes, with a new etag.
    const taken = await call('PATCH', `/me/events/${made.body.id}`, { subject: 'New' });
    expect(taken.body).toMatchObject({ subject: 'New' });
    expect((taken.body as Record<string, unknown>)['@odata.etag']).not.toBe(
      (before.body as Record<string, unknown>)['@odata.etag'],
    );
  });

  it('of a series: a refused recurrence leaves the series as it was, and listable', async () => {
    const made = await call(
      'POST',
      `/me/calendars/${graphCalendarId}/events`,
      at('2027-05-10', {
        recurrence: {
          pattern: { type: 'daily', interval: 1 },
          range: { type: 'numbered', startDate: '2027-05-10', numberOfOccurrences: 3 },
        },
      }),
    );
    expect(made.status).toBe(201);
    const before = await call('GET', `/me/events/${made.body.id}`);
    const listed = await view('2027-05-10T00:00:00Z', '2027-05-13T00:00:00Z');
    expect(listed.body.value).toHaveLength(3);
    const tooMany = {
      subject: 'New',
      // A pattern Graph's reader takes, its expansion refuses (more than 999 occurrences).
      recurrence: {
        pattern: { type: 'daily', interval: 1 },
        range: { type: 'numbered', startDate: '2027-05-10', numberOfOccurrences: 5000 },
      },
    };
    for (const body of [...refused, tooMany])
      expectGraph400(await call('PATCH', `/me/events/${made.body.id}`, body), body);
    expect(await call('GET', `/me/events/${made.body.id}`)).toEqual(before);
    expect(await view('2027-05-10T00:00:00Z', '2027-05-13T00:00:00Z')).toEqual(listed);
  });

  it('of an occurrence: neither it nor its series changes', async () => {
    const made = await call(
      'POST',
      `/me/calendars/${graphCalendarId}/events`,
      at('2027-05-17', {
        recurrence: {
          pattern: { type: 'daily', interval: 1 },
          range: { type: 'numbered', startDate: '2027-05-17', numberOfOccurrences: 3 },
        },
      }),
    );
    expect(made.status).toBe(201);
    const listed = await view('2027-05-17T00:00:00Z', '2027-05-20T00:00:00Z');
    const occurrence = (listed.body.value as { id: string }[])[1].id;
    const before = await call('GET', `/me/events/${occurrence}`);
    const series = await call('GET', `/me/events/${made.body.id}`);
    for (const body of [
      { subject: 'New', showAs: 'sometimes' },
      { subject: 'New', start: { dateTime: '2027-05-18T11:00:00', timeZone: 'Atlantis Standard Time' } },
      { subject: 'New', end: { dateTime: '2027-05-18T08:00:00', timeZone: 'UTC' } },
    ])
      expectGraph400(await call('PATCH', `/me/events/${occurrence}`, body), body);
    expect(await call('GET', `/me/events/${occurrence}`)).toEqual(before);
    expect(await call('GET', `/me/events/${made.body.id}`)).toEqual(series);
    expect(await view('2027-05-17T00:00:00Z', '2027-05-20T00:00:00Z')).toEqual(listed);
  });
});
