// A keyed create whose server was killed during its provider call (contract §1 Idempotency-Key): the retry with
// the same key, once the claim is stale, runs the create again and answers the one event, made once at the
// provider, with its appointment saved once. The kill is the provider call never returning (the process stops
// there and never goes on), before or after the provider made the event; the minute a restart takes is the claim
// made older, as platform/idempotency.test.ts does.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { decodeEventId } from './ids.js';
import { googleCalendar } from './providers/google.js';
import { microsoftCalendar } from './providers/microsoft.js';
import type { CalendarProvider, ProviderEvent } from './providers/types.js';

let t: TestApp;
let ws: TestWorkspace;
let patient: { id: string };
const calendars: Record<string, string> = {};
const adapters: Record<string, CalendarProvider> = { google: googleCalendar, microsoft: microsoftCalendar };

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  for (const provider of ['google', 'microsoft'] as const)
    calendars[provider] = (
      await connectCalendar(t, ws.admin.token, provider, `crash-${ws.id}@${provider}.example`)
    ).calendarId;
  patient = await createPatient(t, ws.admin.token, { givenName: 'Cass', familyName: 'Crash' });
}, 60_000);
afterAll(async () => {
  vi.restoreAllMocks();
  await t?.close();
});

const create = (calendar: string, draft: Record<string, unknown>, key: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/calendar/events',
    token: ws.admin.token,
    headers: { 'idempotency-key': key },
    payload: { calendar, draft },
  });

const claimState = async (key: string) =>
  (
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ state: string }>(
        tx,
        sql`SELECT state FROM idempotency_keys WHERE workspace_id = ${ws.id} AND key = ${key}`,
      ),
    )
  )[0]?.state;

/** The restart took over a minute: the dead request's claim is stale. */
const restartLater = (key: string) =>
  withSystem(t.app.atrium.db, (tx) =>
    tx.execute(
      sql`UPDATE idempotency_keys SET created_at = now() - interval '10 minutes'
           WHERE workspace_id = ${ws.id} AND key = ${key}`,
    ),
  );

const createdEvents = async (workspaceId: string, eventId: string) =>
  (
    await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ data: { eventId: string } }>(
        tx,
        sql`SELECT data FROM domain_events WHERE workspace_id = ${workspaceId} AND type = 'appointment.created'`,
      ),
    )
  ).filter((e) => e.data.eventId === eventId).length;

const listed = async (calendar: string, day: string, query = '') => {
  const res = await t.request({
    method: 'GET',
    url: `/api/v1/calendar/events?calendar=${calendar}&timeMin=${day}T00:00:00Z&timeMax=${day}T23:59:59Z${query}`,
    token: ws.admin.token,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as { id: string; title: string; patientId: string | null }[];
};

/**
 * The server stops inside the provider's insert: before sending it (`made: false`), or after the provider made
 * the event (`made: true`). The stopped call never returns, as in a killed process; the spy is gone after it.
 */
function killDuringInsert(provider: string, made: boolean, resumeWhen?: Promise<void>) {
  const adapter = adapters[provider];
  const real = adapter.insertEvent.bind(adapter);
  const state: { reached: boolean; event?: ProviderEvent } = { reached: false };
  const spy = vi.spyOn(adapter, 'insertEvent').mockImplementationOnce(async (...args) => {
    state.reached = true;
    if (made) state.event = await real(...args);
    // `resumeWhen`: not killed, only slow (the call answers once it settles).
    if (resumeWhen && state.event) {
      const event = state.event;
      return resumeWhen.then(() => event);
    }
    return new Promise<ProviderEvent>(() => undefined);
  });
  return { state, restore: () => spy.mockRestore() };
}

describe.each(['google', 'microsoft'])('%s: a keyed create killed during its provider call', (provider) => {
  it.each([
    ['before the provider made the event', false],
    ['after the provider made the event, before the appointment was saved', true],
  ])('%s: the same-key retry makes it once, with its appointment', async (_, made) => {
    // A day of its own: the patient's other visits are not this one's conflicts.
    const day = `2026-12-${provider === 'google' ? 0 : 1}${made ? 8 : 7}`;
    const key = `crash-${provider}-${made}`;
    const title = `Crash probe ${provider} ${made}`;
    const draft = { title, start: `${day}T15:00:00Z`, end: `${day}T15:30:00Z`, patientId: patient.id };
    const kill = killDuringInsert(provider, made);
    void create(calendars[provider], draft, key);
    await expect.poll(() => (made ? kill.state.event !== undefined : kill.state.reached)).toBe(true);
    kill.restore();
    // Only the token step's audit row was written before the call: nothing of the create's outcome.
    expect(await claimState(key)).toBe('pending');
    await restartLater(key);

    const retry = await create(calendars[provider], draft, key);
    expect(retry.statusCode, retry.body).toBe(201);
    const { eventId } = retry.json();
    if (kill.state.event) expect(decodeEventId(eventId).providerEventId).toBe(kill.state.event.providerEventId);
    // One event at the provider, the appointment's, found by its patient; appointment.created once.
    expect((await listed(calendars[provider], day)).filter((e) => e.title === title).map((e) => e.id)).toEqual([
      eventId,
    ]);
    expect((await listed(calendars[provider], day, `&patientId=${patient.id}`)).map((e) => e.id)).toEqual([eventId]);
    expect(await createdEvents(ws.id, eventId)).toBe(1);
    // And it is answered from then on as made.
    const again = await create(calendars[provider], draft, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().eventId).toBe(eventId);
  });
});

describe('sessions from authorized units, the server killed during the provider call', () => {
  const authorize = async () => {
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/authorizations`,
      token: ws.admin.token,
      payload: {
        service: 'physical-therapy',
        units: 4,
        unitMinutes: 45,
        validFrom: '2027-01-01',
        validTo: '2027-06-30',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const book = (calendar: string, authorizationId: string, firstStart: string, key?: string) =>
    t.request({
      method: 'POST',
      url: '/api/v1/calendar/sessions/from-authorization',
      token: ws.admin.token,
      headers: key ? { 'idempotency-key': key } : {},
      payload: { patientId: patient.id, authorizationId, calendar, firstStart, timeZone: 'UTC' },
    });
  const usage = async (authorizationId: string) => {
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/sessions?patientId=${patient.id}`,
      token: ws.admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    const item = res.json().items.find((a: { authorizationId: string }) => a.authorizationId === authorizationId);
    return { unitsBooked: item.unitsBooked, unitsRemaining: item.unitsRemaining, sessions: item.sessions.length };
  };
  const unitsUsed = async (authorizationId: string) =>
    (await t.request({ method: 'GET', url: `/api/v1/patients/${patient.id}/authorizations`, token: ws.admin.token }))
      .json()
      .items.find((a: { id: string }) => a.id === authorizationId).unitsUsed;
  /** The minutes after a crash: the dead request's reservation is older than its lease. */
  const leaseOver = () =>
    withSystem(t.app.atrium.db, (tx) =>
      tx.execute(
        sql`UPDATE calendar_sessions SET created_at = now() - interval '10 minutes'
             WHERE workspace_id = ${ws.id} AND status = 'reserved'`,
      ),
    );
  /** The series' occurrences at the provider in the four weeks from `first`. */
  const occurrences = async (calendar: string, first: string) => {
    const until = new Date(Date.parse(first) + 28 * 86_400_000).toISOString();
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?calendar=${calendar}&timeMin=${first}&timeMax=${until}`,
      token: ws.admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items as {
      id: string;
      start: string;
      recurringEventId: string | null;
      patientId: string | null;
    }[];
  };

  describe.each(['google', 'microsoft'])('%s', (provider) => {
    it.each([
      ['before the provider made the series', false],
      ['after the provider made the series', true],
    ])('with an Idempotency-Key, killed %s: the same-key retry books it once', async (_, made) => {
      const authorizationId = await authorize();
      const first = `2027-02-0${(provider === 'google' ? 1 : 3) + (made ? 1 : 0)}T14:00:00.000Z`;
      const key = `sessions-${provider}-${made}`;
      const kill = killDuringInsert(provider, made);
      void book(calendars[provider], authorizationId, first, key);
      await expect.poll(() => (made ? kill.state.event !== undefined : kill.state.reached)).toBe(true);
      kill.restore();
      expect(await claimState(key)).toBe('pending');
      await restartLater(key);

      const retry = await book(calendars[provider], authorizationId, first, key);
      expect(retry.statusCode, retry.body).toBe(201);
      expect(retry.json()).toMatchObject({ unitsBooked: 4, unitsRemaining: 0 });
      const { eventId } = retry.json();
      if (kill.state.event) expect(decodeEventId(eventId).providerEventId).toBe(kill.state.event.providerEventId);
      expect(await usage(authorizationId)).toEqual({ unitsBooked: 4, unitsRemaining: 0, sessions: 4 });
      expect(await unitsUsed(authorizationId)).toBe(4);
      // One series at the provider, its four sessions the patient's; appointment.created once.
      const starts = retry.json().sessions.map((x: { start: string }) => x.start);
      const listed = (await occurrences(calendars[provider], first)).filter((e) => starts.includes(e.start));
      expect(listed.map((e) => [e.recurringEventId, e.patientId])).toEqual(Array(4).fill([eventId, patient.id]));
      expect(await createdEvents(ws.id, eventId)).toBe(1);
    });
  });

  it('without a key: the units come back once the dead request’s lease is over, and can be booked', async () => {
    const authorizationId = await authorize();
    const kill = killDuringInsert('google', false);
    void book(calendars.google, authorizationId, '2027-03-01T14:00:00.000Z');
    await expect.poll(() => kill.state.reached).toBe(true);
    kill.restore();
    // Held while the request may still be running.
    expect(await usage(authorizationId)).toEqual({ unitsBooked: 4, unitsRemaining: 0, sessions: 0 });
    expect((await book(calendars.google, authorizationId, '2027-04-05T14:00:00.000Z')).json().code).toBe(
      'units_exhausted',
    );
    await leaseOver();
    expect(await usage(authorizationId)).toEqual({ unitsBooked: 0, unitsRemaining: 4, sessions: 0 });
    expect(await unitsUsed(authorizationId)).toBe(0);
    const again = await book(calendars.google, authorizationId, '2027-04-05T14:00:00.000Z');
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json()).toMatchObject({ unitsBooked: 4, unitsRemaining: 0 });
    expect(await usage(authorizationId)).toEqual({ unitsBooked: 4, unitsRemaining: 0, sessions: 4 });
  });

  it('a request that outran its lease books only units still free, else its series goes again', async () => {
    const authorizationId = await authorize();
    let resume: () => void = () => undefined;
    const slow = killDuringInsert('microsoft', true, new Promise<void>((r) => (resume = r)));
    const late = book(calendars.microsoft, authorizationId, '2027-03-02T14:00:00.000Z');
    await expect.poll(() => slow.state.event !== undefined).toBe(true);
    slow.restore();
    await leaseOver();
    const meanwhile = await book(calendars.microsoft, authorizationId, '2027-04-06T14:00:00.000Z');
    expect(meanwhile.statusCode, meanwhile.body).toBe(201);
    resume();
    const answer = await late;
    expect([answer.statusCode, answer.json().code]).toEqual([409, 'units_exhausted']);
    expect(await occurrences(calendars.microsoft, '2027-03-02T00:00:00.000Z')).toEqual([]);
    expect(await usage(authorizationId)).toEqual({ unitsBooked: 4, unitsRemaining: 0, sessions: 4 });
  });
});
