// iMIP invitations end to end: the event's guests get REQUEST messages with an invite.ics through
// the mail queue and the mail emulator; SEQUENCE grows with each change, removed guests and a
// deleted event get CANCEL; the UID stays; required RFC 5545 properties are present.
import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import { sql } from 'drizzle-orm';
import ICAL from 'ical.js';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { runDueJobs } from '../../platform/jobs/index.js';
import { sendMailJob } from '../../platform/mail/mailer.js';
import { buildIcs, describeWhen } from './invitations.js';
import type { CalendarEvent } from './schema.js';

let t: TestApp;
let ws: TestWorkspace;
let calendar: string;

const req = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token: ws.admin.token, payload: payload as Record<string, unknown> });

interface Sent {
  subject: string;
  text: string;
  attachments: { filename: string; contentType: string; content: string }[];
}

async function inbox(to: string): Promise<Sent[]> {
  await runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [sendMailJob] });
  const res = await fetch(`${t.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(to)}`);
  return ((await res.json()) as { items: Sent[] }).items;
}

const icsOf = (mail: Sent) => {
  const part = mail.attachments.find((a) => a.filename === 'invite.ics');
  expect(part, JSON.stringify(mail.attachments.map((a) => a.filename))).toBeTruthy();
  // The mailbox lists attachment content as base64 (contract §11).
  return Buffer.from(part!.content, 'base64')
    .toString('utf8')
    .replace(/\r?\n[ \t]/g, '');
};
/** A property of the VCALENDAR or, past the VTIMEZONE, of the VEVENT. */
const prop = (ics: string, name: string) => {
  const event = ics.slice(ics.indexOf('BEGIN:VEVENT'));
  return new RegExp(`^${name}[;:](.*)$`, 'm').exec(event)?.[1] ?? new RegExp(`^${name}[;:](.*)$`, 'm').exec(ics)?.[1];
};

/** What a guest's calendar makes of a REQUEST (ical.js, RFC 5545): each occurrence's start and location. */
function guestView(ics: string) {
  const root = new ICAL.Component(ICAL.parse(ics));
  const events = root.getAllSubcomponents('vevent').map((c) => new ICAL.Event(c));
  const master = events.find((e) => !e.isRecurrenceException())!;
  for (const override of events.filter((e) => e.isRecurrenceException())) master.relateException(override);
  const seen: { start: string; location: string }[] = [];
  const iterator = master.iterator();
  for (let next = iterator.next(); next; next = iterator.next()) {
    const details = master.getOccurrenceDetails(next);
    seen.push({ start: details.startDate.toJSDate().toISOString(), location: details.item.location });
  }
  return seen;
}

/** The same, as the provider lists the series' occurrences through the API. */
async function providerView(cal: string, title: string) {
  const listed = await t.request({
    method: 'GET',
    url: `/api/v1/calendar/events?timeMin=2026-10-01T00:00:00Z&timeMax=2026-12-01T00:00:00Z&calendar=${encodeURIComponent(cal)}`,
    token: ws.admin.token,
  });
  return (listed.json().items as { title: string; start: string; location: string }[])
    .filter((e) => e.title === title)
    .map((e) => ({ start: new Date(e.start).toISOString(), location: e.location }))
    .sort((a, b) => a.start.localeCompare(b.start));
}

/** The VEVENTs of an iCalendar text, each as its unfolded lines. */
const vevents = (ics: string) =>
  ics
    .split('BEGIN:VEVENT')
    .slice(1)
    .map((v) => v.slice(0, v.indexOf('END:VEVENT')));

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  calendar = (await connectCalendar(t, ws.admin.token, 'google', `imip-${ws.id}@google.example`)).calendarId;
}, 60_000);
afterAll(async () => t?.close());

describe('describeWhen', () => {
  const base = { recurrence: null, allDay: false };
  it.each([
    [
      { start: '2026-10-20T13:00:00Z', end: '2026-10-20T14:00:00Z', timeZone: 'America/New_York' },
      'Tuesday, October 20, 2026, 9:00 – 10:00 AM EDT (America/New_York)',
    ],
    // Across the end of summer time: the wall clock of each end in its own offset.
    [
      { start: '2026-10-24T22:30:00Z', end: '2026-10-25T01:30:00Z', timeZone: 'Europe/Berlin' },
      'Sunday, October 25, 2026, 12:30 – 2:30 AM GMT+1 (Europe/Berlin)',
    ],
    [
      { start: '2026-10-20T13:00:00Z', end: '2026-10-20T13:30:00Z', timeZone: 'UTC' },
      'Tuesday, October 20, 2026, 1:00 – 1:30 PM UTC',
    ],
    // An unknown zone reads as UTC rather than failing the mail.
    [
      { start: '2026-10-20T13:00:00Z', end: '2026-10-20T13:30:00Z', timeZone: 'Mars/Olympus' },
      'Tuesday, October 20, 2026, 1:00 – 1:30 PM UTC',
    ],
    [
      { start: '2026-10-20T00:00:00Z', end: '2026-10-21T00:00:00Z', timeZone: 'America/New_York', allDay: true },
      'Tuesday, October 20, 2026 (all day)',
    ],
    [
      { start: '2026-10-20T00:00:00Z', end: '2026-10-23T00:00:00Z', timeZone: 'UTC', allDay: true },
      'Tuesday, October 20 – Thursday, October 22, 2026 (all day)',
    ],
    [
      {
        start: '2026-10-20T13:00:00Z',
        end: '2026-10-20T14:00:00Z',
        timeZone: 'America/New_York',
        recurrence: ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU;UNTIL=20261201T000000Z'],
      },
      'Tuesday, October 20, 2026, 9:00 – 10:00 AM EDT (America/New_York), repeating every 2 weeks on Tuesday until December 1, 2026',
    ],
  ])('%j → %s', (event, text) => {
    expect(describeWhen({ ...base, ...event })).toBe(text);
  });
});

describe('iMIP invitations', () => {
  it('REQUEST on create, a higher SEQUENCE on change, CANCEL to removed guests and on delete; UID stable', async () => {
    const ann = `ann-${ws.id}@example.test`;
    const bob = `bob-${ws.id}@example.test`;
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: {
        title: 'Family meeting',
        start: '2026-10-20T13:00:00Z',
        end: '2026-10-20T14:00:00Z',
        timeZone: 'America/New_York',
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
        attendees: [{ email: ann, name: 'Ann' }, { email: bob }],
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const eventId = made.json().eventId;

    const [first] = await inbox(ann);
    expect(first.subject).toBe('Invitation: Family meeting');
    // The text says when in the event's own zone and the rule in words, not a UTC timestamp.
    expect(first.text).toContain(
      'When: Tuesday, October 20, 2026, 9:00 – 10:00 AM EDT (America/New_York), repeating every week for 3 times',
    );
    expect(first.text).not.toContain('GMT');
    const ics = icsOf(first);
    for (const required of ['VERSION', 'PRODID', 'METHOD', 'UID', 'DTSTAMP', 'DTSTART', 'ORGANIZER', 'SEQUENCE']) {
      expect(prop(ics, required), `${required} in\n${ics}`).toBeDefined();
    }
    expect(prop(ics, 'METHOD')).toBe('REQUEST');
    expect(prop(ics, 'SEQUENCE')).toBe('0');
    expect(prop(ics, 'DTSTAMP')).toMatch(/Z$/);
    // The wall clock in the event's zone, with that zone defined: 09:00 New York every week.
    expect(prop(ics, 'DTSTART')).toBe('TZID=America/New_York:20261020T090000');
    expect(ics).toContain('BEGIN:VTIMEZONE');
    expect(ics).toContain('TZID:America/New_York');
    expect(prop(ics, 'RRULE')).toBe('FREQ=WEEKLY;COUNT=3');
    expect(ics).toMatch(/ATTENDEE;[^\n]*RSVP=TRUE[^\n]*:MAILTO:ann-/i);
    const uid = prop(ics, 'UID');
    // The iMIP part itself (RFC 6047 §2.4): a text/calendar alternative carrying the method.
    const [raw] = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ raw: string }>(
        tx,
        sql`SELECT raw FROM emulator_mail WHERE "to"::text LIKE ${`%${ann}%`} ORDER BY sent_at LIMIT 1`,
      ),
    );
    expect(raw.raw).toMatch(/Content-Type: text\/calendar; charset=utf-8; method=REQUEST/i);

    const moved = await req('PATCH', '/calendar/events', {
      event: eventId,
      draft: { title: 'Family meeting (new room)', attendees: [{ email: ann }] },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const annMail = await inbox(ann);
    const update = annMail.find((m) => m.subject.startsWith('Updated invitation'));
    expect(update).toBeTruthy();
    expect(prop(icsOf(update!), 'SEQUENCE')).toBe('1');
    expect(prop(icsOf(update!), 'UID')).toBe(uid);
    const bobCancel = (await inbox(bob)).find((m) => m.subject.startsWith('Cancelled'));
    expect(prop(icsOf(bobCancel!), 'METHOD')).toBe('CANCEL');

    expect((await req('DELETE', `/calendar/events?event=${encodeURIComponent(eventId)}`)).statusCode).toBe(200);
    const cancel = (await inbox(ann)).find((m) => m.subject === 'Cancelled: Family meeting (new room)');
    expect(cancel).toBeTruthy();
    expect(cancel!.text).toContain('"Family meeting (new room)" was cancelled.\nIt was: Tuesday, October 20, 2026');
    expect(prop(icsOf(cancel!), 'METHOD')).toBe('CANCEL');
    expect(prop(icsOf(cancel!), 'SEQUENCE')).toBe('2');
    expect(prop(icsOf(cancel!), 'UID')).toBe(uid);
  });

  for (const provider of ['google', 'microsoft'] as const) {
    it(`${provider}: one occurrence moved or cancelled goes out with the series UID and its RECURRENCE-ID`, async () => {
      const cal =
        provider === 'google'
          ? calendar
          : (await connectCalendar(t, ws.admin.token, 'microsoft', `imip-${ws.id}@microsoft.example`)).calendarId;
      const guest = `occ-${provider}-${ws.id}@example.test`;
      const made = await req('POST', '/calendar/events', {
        calendar: cal,
        draft: {
          title: `Group therapy ${provider}`,
          start: '2026-10-20T13:00:00Z',
          end: '2026-10-20T14:00:00Z',
          timeZone: 'America/New_York',
          recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
          attendees: [{ email: guest }],
        },
      });
      expect(made.statusCode, made.body).toBe(201);
      const seriesUid = prop(icsOf((await inbox(guest))[0]), 'UID');
      const listed = await t.request({
        method: 'GET',
        url: `/api/v1/calendar/events?timeMin=2026-10-19T00:00:00Z&timeMax=2026-11-10T00:00:00Z&calendar=${encodeURIComponent(cal)}`,
        token: ws.admin.token,
      });
      const occurrences = (listed.json().items as { id: string; title: string; start: string; originalStart: string }[])
        .filter((e) => e.title === `Group therapy ${provider}`)
        .sort((a, b) => a.start.localeCompare(b.start));
      expect(occurrences).toHaveLength(3);
      expect(occurrences[1].originalStart).toBe('2026-10-27T13:00:00.000Z');

      // The second week moves an hour later: only that date changes for the guest.
      const moved = await req('PATCH', '/calendar/events', {
        event: occurrences[1].id,
        draft: { start: '2026-10-27T14:00:00Z', end: '2026-10-27T15:00:00Z' },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      const update = (await inbox(guest)).find((m) => m.subject.startsWith('Updated invitation'));
      expect(update).toBeTruthy();
      const updateIcs = icsOf(update!);
      expect(prop(updateIcs, 'UID')).toBe(seriesUid);
      expect(prop(updateIcs, 'RECURRENCE-ID')).toBe('TZID=America/New_York:20261027T090000');
      expect(prop(updateIcs, 'DTSTART')).toBe('TZID=America/New_York:20261027T100000');
      expect(updateIcs.slice(updateIcs.indexOf('BEGIN:VEVENT'))).not.toMatch(/^RRULE/m);
      expect(prop(updateIcs, 'SEQUENCE')).toBe('1');

      // The third week is cancelled (after the DST change, still 09:00 in New York).
      const deleted = await req('DELETE', `/calendar/events?event=${encodeURIComponent(occurrences[2].id)}`);
      expect(deleted.statusCode, deleted.body).toBe(200);
      const cancel = (await inbox(guest)).find((m) => m.subject.startsWith('Cancelled'));
      expect(cancel).toBeTruthy();
      const cancelIcs = icsOf(cancel!);
      expect(prop(cancelIcs, 'METHOD')).toBe('CANCEL');
      expect(prop(cancelIcs, 'UID')).toBe(seriesUid);
      expect(prop(cancelIcs, 'RECURRENCE-ID')).toBe('TZID=America/New_York:20261103T090000');
      expect(prop(cancelIcs, 'SEQUENCE')).toBe('2');
    });
  }

  for (const provider of ['google', 'microsoft'] as const) {
    it(`${provider}: a series update after one occurrence moved and one cancelled describes the series as it stands`, async () => {
      const cal =
        provider === 'google'
          ? calendar
          : (await connectCalendar(t, ws.admin.token, 'microsoft', `whole-${ws.id}@microsoft.example`)).calendarId;
      const guest = `whole-${provider}-${ws.id}@example.test`;
      const title = `Skills group ${provider}`;
      const made = await req('POST', '/calendar/events', {
        calendar: cal,
        draft: {
          title,
          start: '2026-10-20T13:00:00Z',
          end: '2026-10-20T14:00:00Z',
          timeZone: 'America/New_York',
          location: 'Room 1',
          recurrence: ['RRULE:FREQ=WEEKLY;COUNT=4'],
          attendees: [{ email: guest }],
        },
      });
      expect(made.statusCode, made.body).toBe(201);
      const seriesId = made.json().eventId;
      const listed = await t.request({
        method: 'GET',
        url: `/api/v1/calendar/events?timeMin=2026-10-19T00:00:00Z&timeMax=2026-11-20T00:00:00Z&calendar=${encodeURIComponent(cal)}`,
        token: ws.admin.token,
      });
      const occurrences = (listed.json().items as { id: string; title: string; start: string }[])
        .filter((e) => e.title === title)
        .sort((a, b) => a.start.localeCompare(b.start));
      expect(occurrences).toHaveLength(4);
      // Week 2 moves an hour later, week 3 (past the DST change) is cancelled, then the series moves room.
      const moved = await req('PATCH', '/calendar/events', {
        event: occurrences[1].id,
        draft: { start: '2026-10-27T14:00:00Z', end: '2026-10-27T15:00:00Z' },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      expect((await req('DELETE', `/calendar/events?event=${encodeURIComponent(occurrences[2].id)}`)).statusCode).toBe(
        200,
      );
      const patched = await req('PATCH', '/calendar/events', { event: seriesId, draft: { location: 'Room 4' } });
      expect(patched.statusCode, patched.body).toBe(200);

      const update = (await inbox(guest)).find((m) => m.subject === `Updated invitation: ${title}`);
      expect(update).toBeTruthy();
      const ics = icsOf(update!);
      const [master, ...overrides] = vevents(ics);
      expect(master, ics).toMatch(/^RRULE:FREQ=WEEKLY;(.*;)?COUNT=4(;|$)/m);
      expect(master).toMatch(/^EXDATE;TZID=America\/New_York:20261103T090000$/m);
      expect(master).not.toMatch(/^RECURRENCE-ID/m);
      expect(overrides, ics).toHaveLength(1);
      const [override] = overrides;
      expect(override).toMatch(/^RECURRENCE-ID;TZID=America\/New_York:20261027T090000$/m);
      expect(override).toMatch(/^DTSTART;TZID=America\/New_York:20261027T100000$/m);
      expect(override).toMatch(/^DTEND;TZID=America\/New_York:20261027T110000$/m);
      expect(override).not.toMatch(/^RRULE/m);
      for (const v of [master, override]) {
        expect(/^UID:(.*)$/m.exec(v)?.[1]).toBe(prop(ics, 'UID'));
        expect(/^SEQUENCE:(.*)$/m.exec(v)?.[1]).toBe('3');
        expect(/^LOCATION:(.*)$/m.exec(v)?.[1]).toBe('Room 4');
      }
      // The guest's calendar: week 2 at its new time, week 3 gone, all in the new room, as the provider lists it.
      expect(guestView(ics)).toEqual([
        { start: '2026-10-20T13:00:00.000Z', location: 'Room 4' },
        { start: '2026-10-27T14:00:00.000Z', location: 'Room 4' },
        { start: '2026-11-10T14:00:00.000Z', location: 'Room 4' },
      ]);
      expect(guestView(ics)).toEqual(await providerView(cal, title));

      // The whole series moves to 10:00: the provider drops the old dates' exceptions, and so does the REQUEST.
      const retimed = await req('PATCH', '/calendar/events', {
        event: seriesId,
        draft: { start: '2026-10-20T14:00:00Z', end: '2026-10-20T15:00:00Z' },
      });
      expect(retimed.statusCode, retimed.body).toBe(200);
      const latest = icsOf((await inbox(guest)).find((m) => m.subject === `Updated invitation: ${title}`)!);
      expect(prop(latest, 'SEQUENCE')).toBe('4');
      expect(guestView(latest)).toEqual(await providerView(cal, title));
    });
  }

  it("a guest's REPLY with a RECURRENCE-ID answers that occurrence alone; one without answers the rest of the series", async () => {
    const guest = `answers-${ws.id}@example.test`;
    const title = 'Weekly check-in';
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: {
        title,
        start: '2027-03-01T15:00:00Z',
        end: '2027-03-01T16:00:00Z',
        timeZone: 'America/New_York',
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=4'],
        attendees: [{ email: guest }],
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const uid = prop(icsOf((await inbox(guest))[0]), 'UID');
    const address = (await t.request({ method: 'GET', url: '/api/v1/mail/address', token: ws.admin.token })).json()
      .address;
    const reply = async (partstat: string, lines: string[], matched = true) => {
      const content = [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//Example Mail//EN',
        'METHOD:REPLY',
        ...lines.filter((l) => !l.startsWith('RECURRENCE-ID')),
        'BEGIN:VEVENT',
        `UID:${uid}`,
        ...lines.filter((l) => l.startsWith('RECURRENCE-ID')),
        'DTSTAMP:20270201T100000Z',
        `ORGANIZER:mailto:${address}`,
        `ATTENDEE;PARTSTAT=${partstat}:mailto:${guest}`,
        'END:VEVENT',
        'END:VCALENDAR',
        '',
      ].join('\r\n');
      const raw = await new MailComposer({
        from: guest,
        to: address,
        subject: `${partstat}: ${title}`,
        text: partstat,
        icalEvent: { method: 'REPLY', content },
      })
        .compile()
        .build();
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/mail/inbound',
        headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${t.config.operatorToken}` },
        payload: raw,
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().replyMatched).toBe(matched);
    };
    const answers = async () => {
      const listed = await t.request({
        method: 'GET',
        url: `/api/v1/calendar/events?timeMin=2027-02-28T00:00:00Z&timeMax=2027-03-25T00:00:00Z&calendar=${encodeURIComponent(calendar)}`,
        token: ws.admin.token,
      });
      return (listed.json().items as { title: string; start: string; attendees: { responseStatus: string }[] }[])
        .filter((e) => e.title === title)
        .sort((a, b) => a.start.localeCompare(b.start))
        .map((e) => e.attendees[0].responseStatus);
    };
    expect(await answers()).toEqual(['needsAction', 'needsAction', 'needsAction', 'needsAction']);

    // The guest declines 8 March (10:00 in New York, before the DST change), naming the zone only.
    await reply('DECLINED', ['RECURRENCE-ID;TZID=America/New_York:20270308T100000']);
    expect(await answers()).toEqual(['needsAction', 'declined', 'needsAction', 'needsAction']);
    // Then accepts the series: every occurrence without its own answer follows.
    await reply('ACCEPTED', []);
    expect(await answers()).toEqual(['accepted', 'declined', 'accepted', 'accepted']);
    // Outlook names the zone its own way and defines it in a VTIMEZONE: 15 March 10:00 EDT is 14:00 UTC.
    const vtimezone = getVtimezoneComponent('America/New_York')!
      .trim()
      .replace(/TZID:America\/New_York/, 'TZID:Eastern Standard Time')
      .split(/\r?\n/);
    await reply('TENTATIVE', [...vtimezone, 'RECURRENCE-ID;TZID=Eastern Standard Time:20270315T100000']);
    expect(await answers()).toEqual(['accepted', 'declined', 'tentative', 'accepted']);
    // A UTC RECURRENCE-ID names the same occurrence as its zoned wall clock.
    await reply('ACCEPTED', ['RECURRENCE-ID:20270308T150000Z']);
    expect(await answers()).toEqual(['accepted', 'accepted', 'tentative', 'accepted']);
    // A date that is no occurrence (a Tuesday; an hour off; after COUNT=4) answers nothing and is not matched.
    await reply('DECLINED', ['RECURRENCE-ID;TZID=America/New_York:20270309T100000'], false);
    await reply('DECLINED', ['RECURRENCE-ID;TZID=America/New_York:20270315T110000'], false);
    await reply('DECLINED', ['RECURRENCE-ID;TZID=America/New_York:20270329T100000'], false);
    expect(await answers()).toEqual(['accepted', 'accepted', 'tentative', 'accepted']);
  });

  it('an all-day series names its cancelled and changed days by date, as its DTSTART (RFC 5545 §3.8.4.4)', () => {
    const series: CalendarEvent = {
      id: 'evt_c2VyaWVz',
      provider: 'google',
      calendar: 'cal_x',
      title: 'Clinic day',
      description: null,
      start: '2026-10-20T00:00:00.000Z',
      end: '2026-10-21T00:00:00.000Z',
      timeZone: 'UTC',
      allDay: true,
      location: null,
      attendees: [],
      organizer: null,
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
      recurringEventId: null,
      originalStart: null,
      conference: null,
      showAs: 'free',
      telehealth: null,
      telehealthRoom: null,
      patientId: null,
      hostUserId: null,
      status: 'confirmed',
      workspaceId: ws.id,
    };
    const moved = {
      ...series,
      recurringEventId: series.id,
      originalStart: '2026-10-27T00:00:00.000Z',
      start: '2026-10-28T00:00:00.000Z',
      end: '2026-10-29T00:00:00.000Z',
      recurrence: null,
    };
    const ics = buildIcs(
      series,
      'REQUEST',
      2,
      ['ann@example.test'],
      { name: 'org@example.test', email: 'ws_x@inbound.atrium.local' },
      {
        cancelled: ['2026-11-03T00:00:00.000Z'],
        overrides: [{ event: moved, attendees: ['ann@example.test'] }],
      },
    );
    const [master, override] = vevents(ics);
    expect(master).toMatch(/^DTSTART;VALUE=DATE:20261020\r$/m);
    expect(master).toMatch(/^EXDATE;VALUE=DATE:20261103\r$/m);
    expect(override).toMatch(/^RECURRENCE-ID;VALUE=DATE:20261027\r$/m);
    expect(override).toMatch(/^DTSTART;VALUE=DATE:20261028\r$/m);
  });

  it('carries the iCalendar once as the text/calendar part and once as invite.ics (RFC 6047 §2.4), not three times', async () => {
    const guest = `once-${ws.id}@example.test`;
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: {
        title: 'Intake',
        start: '2026-10-22T13:00:00Z',
        end: '2026-10-22T14:00:00Z',
        attendees: [{ email: guest }],
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const [mail] = await inbox(guest);
    const calendarParts = mail.attachments.filter(
      (a) => /calendar|ics/i.test(a.contentType) || a.filename.toLowerCase().endsWith('.ics'),
    );
    const shown = JSON.stringify(calendarParts.map((a) => [a.filename, a.contentType]));
    expect(calendarParts, shown).toHaveLength(2);
    expect(
      calendarParts.filter((a) => a.filename === 'invite.ics'),
      shown,
    ).toHaveLength(1);
    const [raw] = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ raw: string }>(tx, sql`SELECT raw FROM emulator_mail WHERE "to"::text LIKE ${`%${guest}%`}`),
    );
    expect(raw.raw.match(/^Content-Type: text\/calendar/gim)).toHaveLength(1);
    expect(raw.raw).toMatch(/^Content-Type: text\/calendar; charset=utf-8; method=REQUEST/im);
  });

  it('sends nothing for an event without guests', async () => {
    const solo = `solo-${ws.id}@example.test`;
    await req('POST', '/calendar/events', {
      calendar,
      draft: { title: 'Paperwork', start: '2026-10-21T13:00:00Z', end: '2026-10-21T14:00:00Z' },
    });
    expect(await inbox(solo)).toEqual([]);
  });
});
