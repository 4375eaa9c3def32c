// Patient-aware scheduling and sessions from authorized units (contract §5.2), end to end over the
// emulators: conflicts for the patient and the host, provider matching, unit accounting under
// concurrency, units given back when a future session is cancelled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import {
  addMember,
  createPatient,
  createWorkspace,
  type TestUser,
  type TestWorkspace,
} from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
let drA: TestUser;
let drB: TestUser;
let calA: string;
let calB: string;
let front: string;
let patient: { id: string };
let other: { id: string };

const post = (url: string, payload: unknown, token = ws.admin.token) =>
  t.request({ method: 'POST', url: `/api/v1${url}`, token, payload: payload as Record<string, unknown> });
const get = (url: string, token = ws.admin.token) => t.request({ method: 'GET', url: `/api/v1${url}`, token });

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  drA = await addMember(t, ws, { isProvider: true, name: 'Dr. Ada Able' });
  drB = await addMember(t, ws, { isProvider: true, name: 'Dr. Ben Baker' });
  calA = (await connectCalendar(t, drA.token, 'google', `a-${ws.id}@google.example`)).calendarId;
  calB = (await connectCalendar(t, drB.token, 'microsoft', `b-${ws.id}@microsoft.example`)).calendarId;
  front = (await connectCalendar(t, ws.admin.token, 'google', `desk-${ws.id}@google.example`)).calendarId;
  patient = await createPatient(t, ws.admin.token, {
    givenName: 'Pat',
    familyName: 'Patient',
    preferredProviderId: drB.userId,
  });
  other = await createPatient(t, ws.admin.token, { givenName: 'Olly', familyName: 'Other' });
}, 90_000);
afterAll(async () => t?.close());

const appt = (calendar: string, start: string, end: string, patientId?: string) =>
  post('/calendar/events', { calendar, draft: { title: 'Visit', start, end, patientId } });

describe('conflicts', () => {
  it("refuses an appointment over the patient's or the host's other appointment, with the conflicts", async () => {
    const first = await appt(calA, '2026-12-01T15:00:00Z', '2026-12-01T16:00:00Z', patient.id);
    expect(first.statusCode, first.body).toBe(201);
    const samePatient = await appt(front, '2026-12-01T15:30:00Z', '2026-12-01T16:00:00Z', patient.id);
    expect(samePatient.statusCode).toBe(409);
    expect(samePatient.json()).toMatchObject({
      code: 'scheduling_conflict',
      conflicts: [
        { eventId: first.json().eventId, start: '2026-12-01T15:00:00.000Z', end: '2026-12-01T16:00:00.000Z' },
      ],
    });
    const sameHost = await appt(calA, '2026-12-01T15:45:00Z', '2026-12-01T16:15:00Z', other.id);
    expect(sameHost.statusCode).toBe(409);
    const elsewhere = await appt(calB, '2026-12-01T15:30:00Z', '2026-12-01T16:00:00Z', other.id);
    expect(elsewhere.statusCode, elsewhere.body).toBe(201);
    const later = await appt(calA, '2026-12-01T16:00:00Z', '2026-12-01T16:30:00Z', patient.id);
    expect(later.statusCode, later.body).toBe(201);

    // Moving into the first one is refused; moving next to it is fine.
    const move = (start: string, end: string) =>
      t.request({
        method: 'PATCH',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: { event: later.json().eventId, draft: { start, end } },
      });
    expect((await move('2026-12-01T15:30:00Z', '2026-12-01T16:00:00Z')).json().code).toBe('scheduling_conflict');
    expect((await move('2026-12-01T16:15:00Z', '2026-12-01T16:45:00Z')).statusCode).toBe(200);

    // Giving the patient to an event at the time of their other visit is refused too (no times in the change).
    const plain = await appt(front, '2026-12-01T15:00:00Z', '2026-12-01T15:30:00Z');
    expect(plain.statusCode, plain.body).toBe(201);
    const given = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: plain.json().eventId, draft: { patientId: patient.id } },
    });
    expect(given.statusCode, given.body).toBe(409);
    expect(given.json().code).toBe('scheduling_conflict');
  });

  it("refuses a host or patient who is not this workspace's (404) and a host who is no provider (422); changing the host checks their visits", async () => {
    const stranger = await createWorkspace(t, { tier: 'advanced' });
    const strangerPatient = await createPatient(t, stranger.admin.token, { givenName: 'Far', familyName: 'Away' });
    const draft = (extra: Record<string, unknown>) => ({
      calendar: front,
      draft: { title: 'Visit', start: '2026-12-09T15:00:00Z', end: '2026-12-09T15:30:00Z', ...extra },
    });
    for (const extra of [
      { hostUserId: stranger.admin.userId },
      { hostUserId: 'usr_01zzzzzzzzzzzzzzzzzzzzzzzz' },
      { patientId: strangerPatient.id },
    ]) {
      const res = await post('/calendar/events', draft(extra));
      expect([res.statusCode, res.json().code], JSON.stringify(extra)).toEqual([404, 'not_found']);
    }
    // The calendar's owner hosts by default (also when named); another member who is no provider cannot.
    const owner = await post('/calendar/events', {
      calendar: front,
      draft: {
        title: 'Desk hour',
        start: '2026-12-10T15:00:00Z',
        end: '2026-12-10T15:30:00Z',
        hostUserId: ws.admin.userId,
      },
    });
    expect(owner.statusCode, owner.body).toBe(201);
    const clerk = await addMember(t, ws);
    const notProvider = await post('/calendar/events', draft({ hostUserId: clerk.userId }));
    expect([notProvider.statusCode, notProvider.json().code]).toEqual([422, 'unknown_provider']);

    // Dr. Able is busy at 15:00; handing a visit at that time to her is a clash.
    const busy = await appt(calA, '2026-12-09T15:00:00Z', '2026-12-09T15:30:00Z');
    expect(busy.statusCode, busy.body).toBe(201);
    const visit = await post('/calendar/events', draft({ hostUserId: drB.userId, patientId: other.id }));
    expect(visit.statusCode, visit.body).toBe(201);
    const change = (hostUserId: string) =>
      t.request({
        method: 'PATCH',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: { event: visit.json().eventId, draft: { hostUserId } },
      });
    expect((await change(stranger.admin.userId)).statusCode).toBe(404);
    const clash = await change(drA.userId);
    expect([clash.statusCode, clash.json().code]).toEqual([409, 'scheduling_conflict']);

    // Matching agrees with the rule: Dr. Baker hosts the visit on the front desk's calendar, so he is not free then.
    const match = await get(
      `/calendar/providers/match?patientId=${patient.id}&start=2026-12-09T15:00:00Z&end=2026-12-09T15:30:00Z`,
    );
    expect(match.statusCode, match.body).toBe(200);
    const free = Object.fromEntries(
      match.json().items.map((m: { userId: string; free: boolean }) => [m.userId, m.free]),
    );
    expect(free).toMatchObject({ [drA.userId]: false, [drB.userId]: false });
  });

  it('checks a repeating appointment at each of its occurrences, not only the first', async () => {
    const third = await appt(calA, '2026-12-16T15:00:00Z', '2026-12-16T15:45:00Z', patient.id);
    expect(third.statusCode, third.body).toBe(201);
    const series = (start: string, end: string) =>
      post('/calendar/events', {
        calendar: front,
        draft: {
          title: 'Weekly check-in',
          start,
          end,
          timeZone: 'America/New_York',
          patientId: patient.id,
          recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
        },
      });
    const clash = await series('2026-12-02T15:30:00Z', '2026-12-02T16:00:00Z');
    expect(clash.statusCode, clash.body).toBe(409);
    expect(clash.json().conflicts).toEqual([
      { eventId: third.json().eventId, start: '2026-12-16T15:00:00.000Z', end: '2026-12-16T15:45:00.000Z' },
    ]);
    // Skipping that week (EXDATE in the series' zone) leaves nothing in the way.
    const skipped = await post('/calendar/events', {
      calendar: front,
      draft: {
        title: 'Weekly check-in',
        start: '2026-12-02T15:30:00Z',
        end: '2026-12-02T16:00:00Z',
        timeZone: 'America/New_York',
        patientId: patient.id,
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3', 'EXDATE;TZID=America/New_York:20261216T103000'],
      },
    });
    expect(skipped.statusCode, skipped.body).toBe(201);
    // A skipped date in a zone that does not exist is the draft's problem (422), not a 500.
    const badZone = await post('/calendar/events', {
      calendar: front,
      draft: {
        title: 'Weekly check-in',
        start: '2027-02-03T15:30:00Z',
        end: '2027-02-03T16:00:00Z',
        timeZone: 'America/New_York',
        patientId: patient.id,
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3', 'EXDATE;TZID=Not/AZone:20270210T103000'],
      },
    });
    expect([badZone.statusCode, badZone.json().code]).toEqual([422, 'invalid_draft']);
  });

  it('does not check below Advanced', async () => {
    const standard = await createWorkspace(t, { tier: 'standard' });
    const cal = (await connectCalendar(t, standard.admin.token, 'google', `std-${standard.id}@google.example`))
      .calendarId;
    const p = await createPatient(t, standard.admin.token, { givenName: 'S', familyName: 'Tandard' });
    for (let i = 0; i < 2; i++) {
      const res = await post(
        '/calendar/events',
        {
          calendar: cal,
          draft: { title: 'Twice', start: '2026-12-01T15:00:00Z', end: '2026-12-01T16:00:00Z', patientId: p.id },
        },
        standard.admin.token,
      );
      expect(res.statusCode).toBe(201);
    }
    const match = await get(
      `/calendar/providers/match?patientId=${p.id}&start=2026-12-01T15:00:00Z&end=2026-12-01T16:00:00Z`,
      standard.admin.token,
    );
    expect(match.statusCode).toBe(403);
    expect(match.json().code).toBe('tier_required');
  });

  it('reads the calendars only over a bounded window: a match over years, or a visit with a patient lasting years, is 422 at once', async () => {
    // Every repeating series of the workspace would be expanded over the window: 200 years took 18 s of the
    // process (every workspace waited) before it was refused.
    const started = Date.now();
    const years = await get(
      `/calendar/providers/match?patientId=${patient.id}&start=2026-12-02T10:00:00Z&end=2226-12-02T10:00:00Z`,
    );
    expect(years.statusCode, years.body).toBe(422);
    expect(years.json()).toMatchObject({ code: 'invalid_window', detail: 'The slot may span at most 62 days' });
    const long = await appt(front, '2026-12-03T10:00:00Z', '2028-12-03T10:00:00Z', patient.id);
    expect(long.statusCode, long.body).toBe(422);
    expect(long.json()).toMatchObject({
      code: 'invalid_draft',
      detail: 'A visit with a patient may span at most 366 days',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    // Within the bounds, as before.
    const week = await get(
      `/calendar/providers/match?patientId=${patient.id}&start=2026-12-02T10:00:00Z&end=2026-12-09T10:00:00Z`,
    );
    expect(week.statusCode, week.body).toBe(200);
  });

  it('ranks providers: free first, then the patient’s preferred one', async () => {
    const res = await get(
      `/calendar/providers/match?patientId=${patient.id}&start=2026-12-01T15:00:00Z&end=2026-12-01T15:30:00Z`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as {
      userId: string;
      free: boolean;
      preferred: boolean;
      calendarId: string;
      reasons: string[];
    }[];
    expect(items.map((i) => [i.userId, i.free, i.preferred])).toEqual([
      [drB.userId, true, true],
      [drA.userId, false, false],
    ]);
    expect(items[1].reasons[0]).toMatch(/^Busy/);
    const free = await get(
      `/calendar/providers/match?patientId=${patient.id}&start=2026-12-02T15:00:00Z&end=2026-12-02T15:30:00Z`,
    );
    expect(free.json().items.map((i: { userId: string; free: boolean }) => [i.userId, i.free])).toEqual([
      [drB.userId, true],
      [drA.userId, true],
    ]);
    expect(free.json().items[0]).toMatchObject({ calendarId: calB, preferred: true });
    expect(free.json().items[0].reasons).toContain("The patient's preferred provider");
  });
});

describe('all-day events count by their free/busy flag', () => {
  const match = async (start: string, end: string) => {
    const res = await get(`/calendar/providers/match?patientId=${other.id}&start=${start}&end=${end}`);
    expect(res.statusCode, res.body).toBe(200);
    return Object.fromEntries(
      res.json().items.map((m: { userId: string; free: boolean; reasons: string[] }) => [m.userId, m]),
    ) as Record<string, { free: boolean; reasons: string[] }>;
  };

  it("an all-day busy event blocks its host's whole day (409, and the match says so); a free one blocks no one", async () => {
    // Dr. Baker is away, on his New York calendar (Microsoft); Dr. Able's calendar holds an all-day notice.
    const away = await post('/calendar/events', {
      calendar: calB,
      draft: {
        title: 'Dr. Baker at the CME conference (no visits)',
        start: '2028-03-14T00:00:00Z',
        end: '2028-03-15T00:00:00Z',
        allDay: true,
        timeZone: 'America/New_York',
        showAs: 'busy',
      },
    });
    expect(away.statusCode, away.body).toBe(201);
    expect(away.json().event).toMatchObject({ allDay: true, showAs: 'busy' });
    const notice = await post('/calendar/events', {
      calendar: calA,
      draft: {
        title: 'EHR upgrade: paper forms',
        start: '2028-03-14T00:00:00Z',
        end: '2028-03-15T00:00:00Z',
        allDay: true,
      },
    });
    expect(notice.statusCode, notice.body).toBe(201);
    expect(notice.json().event.showAs).toBe('free');

    const friday = await match('2028-03-14T19:00:00Z', '2028-03-14T19:30:00Z');
    expect(friday[drB.userId]).toEqual({
      ...friday[drB.userId],
      free: false,
      reasons: ['Busy: all day (Dr. Baker at the CME conference (no visits))'],
    });
    expect(friday[drA.userId]).toMatchObject({ free: true, reasons: ['Free at this time'] });
    // 21:00 in New York is still his day there (02:00Z the next day).
    expect((await match('2028-03-15T02:00:00Z', '2028-03-15T02:30:00Z'))[drB.userId].free).toBe(false);
    expect((await match('2028-03-15T06:00:00Z', '2028-03-15T06:30:00Z'))[drB.userId].free).toBe(true);

    const refused = await appt(calB, '2028-03-14T19:00:00Z', '2028-03-14T19:30:00Z', other.id);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({
      code: 'scheduling_conflict',
      detail: 'The provider is busy all day (Dr. Baker at the CME conference (no visits))',
      conflicts: [{ eventId: away.json().eventId, start: '2028-03-14T00:00:00.000Z', end: '2028-03-15T00:00:00.000Z' }],
    });
    // Hosting on the front desk's calendar does not get around it.
    const hosted = await post('/calendar/events', {
      calendar: front,
      draft: {
        title: 'Visit',
        start: '2028-03-14T19:00:00Z',
        end: '2028-03-14T19:30:00Z',
        patientId: other.id,
        hostUserId: drB.userId,
      },
    });
    expect([hosted.statusCode, hosted.json().code]).toEqual([409, 'scheduling_conflict']);
    const booked = await appt(calA, '2028-03-14T19:00:00Z', '2028-03-14T19:30:00Z', other.id);
    expect(booked.statusCode, booked.body).toBe(201);

    // Marked busy afterwards, the notice blocks Dr. Able's day too.
    const marked = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: notice.json().eventId, draft: { showAs: 'busy' } },
    });
    expect([marked.statusCode, marked.json().event.showAs]).toEqual([200, 'busy']);
    const later = await appt(calA, '2028-03-14T21:00:00Z', '2028-03-14T21:30:00Z', patient.id);
    expect([later.statusCode, later.json().code]).toEqual([409, 'scheduling_conflict']);
    expect((await match('2028-03-14T21:00:00Z', '2028-03-14T21:30:00Z'))[drA.userId].reasons).toEqual([
      'Busy: all day (EHR upgrade: paper forms)',
    ]);
    expect((await match('2028-03-14T19:00:00Z', '2028-03-14T19:30:00Z'))[drA.userId].reasons).toEqual([
      'Busy: all day (EHR upgrade: paper forms) and 1 more event',
    ]);
  });

  it('a visit marked free on its host’s calendar still holds its patient and its host: no second visit of either then', async () => {
    const first = await post('/calendar/events', {
      calendar: calA,
      draft: {
        title: 'Home exercise check (free on the calendar)',
        start: '2028-04-11T15:00:00Z',
        end: '2028-04-11T15:30:00Z',
        patientId: patient.id,
        showAs: 'free',
      },
    });
    expect([first.statusCode, first.json().event?.showAs]).toEqual([201, 'free']);
    // The host is in that visit: not bookable for another patient, and the match says so…
    const other_ = await appt(calA, '2028-04-11T15:00:00Z', '2028-04-11T15:30:00Z', other.id);
    expect([other_.statusCode, other_.json().code]).toEqual([409, 'scheduling_conflict']);
    expect((await match('2028-04-11T15:00:00Z', '2028-04-11T15:30:00Z'))[drA.userId].free).toBe(false);
    // …and so is the patient.
    const twice = await appt(calB, '2028-04-11T15:15:00Z', '2028-04-11T15:45:00Z', patient.id);
    expect(twice.statusCode, twice.body).toBe(409);
    expect(twice.json()).toMatchObject({
      code: 'scheduling_conflict',
      conflicts: [{ eventId: first.json().eventId }],
    });
  });
});

describe('sessions from authorized units', () => {
  const authorize = async (units: number, validFrom: string, validTo: string) => {
    const res = await post(`/patients/${patient.id}/authorizations`, {
      service: 'physical-therapy',
      units,
      unitMinutes: 45,
      validFrom,
      validTo,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().unitsUsed).toBe(0);
    return res.json().id as string;
  };
  const unitsUsed = async (id: string) =>
    (await get(`/patients/${patient.id}/authorizations`)).json().items.find((a: { id: string }) => a.id === id)
      ?.unitsUsed;
  const book = (authorizationId: string, extra: Record<string, unknown> = {}) =>
    post('/calendar/sessions/from-authorization', {
      patientId: patient.id,
      authorizationId,
      calendar: calB,
      firstStart: '2027-01-05T14:00:00Z',
      timeZone: 'America/New_York',
      ...extra,
    });

  it('books as many weekly sessions as the units allow, then refuses with units_exhausted; a cancelled future session gives its units back', async () => {
    const id = await authorize(4, '2027-01-01', '2027-06-30');
    const res = await book(id);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ unitsBooked: 4, unitsRemaining: 0 });
    expect(body.sessions.map((s: { start: string }) => s.start)).toEqual([
      '2027-01-05T14:00:00.000Z',
      '2027-01-12T14:00:00.000Z',
      '2027-01-19T14:00:00.000Z',
      '2027-01-26T14:00:00.000Z',
    ]);
    expect(body.sessions[0].end).toBe('2027-01-05T14:45:00.000Z');
    expect(new Set(body.sessions.map((s: { eventId: string }) => s.eventId)).size).toBe(4);

    const again = await book(id, { firstStart: '2027-03-02T14:00:00Z' });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('units_exhausted');

    const cancel = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/events?event=${encodeURIComponent(body.sessions[2].eventId)}`,
      token: ws.admin.token,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const usage = (await get(`/calendar/sessions?patientId=${patient.id}`))
      .json()
      .items.find((a: { authorizationId: string }) => a.authorizationId === id);
    expect(usage).toMatchObject({ units: 4, unitsBooked: 3, unitsRemaining: 1 });
    // The patient's authorization says the same (contract §3a unitsUsed).
    expect(await unitsUsed(id)).toBe(3);
    const refill = await book(id, { firstStart: '2027-03-02T14:00:00Z' });
    expect(refill.statusCode, refill.body).toBe(201);
    expect(refill.json()).toMatchObject({ unitsBooked: 1, unitsRemaining: 0 });
  });

  it('a moved session is listed at its new time, and cancelling it afterwards gives its units back', async () => {
    const id = await authorize(3, '2027-09-01', '2027-11-30');
    const res = await book(id, { firstStart: '2027-09-07T14:00:00Z' });
    expect(res.statusCode, res.body).toBe(201);
    const second = res.json().sessions[1];
    const moved = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: second.eventId, draft: { start: '2027-09-15T14:00:00Z', end: '2027-09-15T14:45:00Z' } },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const usage = async () =>
      (await get(`/calendar/sessions?patientId=${patient.id}`))
        .json()
        .items.find((a: { authorizationId: string }) => a.authorizationId === id);
    expect((await usage()).sessions.map((s: { start: string }) => s.start)).toEqual([
      '2027-09-07T14:00:00.000Z',
      '2027-09-15T14:00:00.000Z',
      '2027-09-21T14:00:00.000Z',
    ]);
    const cancel = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/events?event=${encodeURIComponent(moved.json().eventId)}`,
      token: ws.admin.token,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(await usage()).toMatchObject({ units: 3, unitsBooked: 2, unitsRemaining: 1 });
    expect(await unitsUsed(id)).toBe(2);
  });

  it('never books past the end of the authorization; an ended one is 422 authorization_expired', async () => {
    const id = await authorize(10, '2027-01-01', '2027-01-20');
    const res = await book(id, { unitsPerSession: 2, firstStart: '2027-01-06T14:00:00Z' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ unitsBooked: 6, unitsRemaining: 4 });
    expect(res.json().sessions.map((s: { start: string }) => s.start.slice(0, 10))).toEqual([
      '2027-01-06',
      '2027-01-13',
      '2027-01-20',
    ]);
    expect(res.json().sessions[0].end).toBe('2027-01-06T15:30:00.000Z');
    const ended = await authorize(5, '2026-01-01', '2026-02-01');
    const late = await book(ended);
    expect(late.statusCode).toBe(422);
    expect(late.json().code).toBe('authorization_expired');
  });

  it('cannot overbook under concurrent requests', async () => {
    const id = await authorize(3, '2027-01-01', '2027-12-31');
    const results = await Promise.all([
      book(id, { firstStart: '2027-04-06T14:00:00Z' }),
      book(id, { firstStart: '2027-05-04T14:00:00Z' }),
      book(id, { firstStart: '2027-06-01T14:00:00Z' }),
    ]);
    const booked = results.filter((r) => r.statusCode === 201).reduce((n, r) => n + r.json().unitsBooked, 0);
    expect(booked).toBe(3);
    expect(results.filter((r) => r.statusCode === 409).every((r) => r.json().code === 'units_exhausted')).toBe(true);
    const usage = (await get(`/calendar/sessions?patientId=${patient.id}`))
      .json()
      .items.find((a: { authorizationId: string }) => a.authorizationId === id);
    expect(usage).toMatchObject({ unitsBooked: 3, unitsRemaining: 0 });
  });
});
