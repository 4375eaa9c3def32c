// What happens to calendars when the people and accounts behind them go: a removed member's
// accounts are disconnected in the removal (contract §2a: their tokens stop working at once), and a
// connection flow they started before it cannot finish afterwards; a disconnected calendar keeps its
// id, and connecting the same account again brings its appointments, sessions and rooms back.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { runDueJobs } from '../../platform/jobs/index.js';
import { saveConnection } from '../../platform/oauth/index.js';
import { telehealthModule } from '../telehealth/index.js';
import { oauthDeps } from './providers/index.js';

let t: TestApp;
let ws: TestWorkspace;

const api = (method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, token = ws.admin.token, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token, payload: payload as Record<string, unknown> | undefined });

const connectionRows = (workspaceId: string, userId: string) =>
  withSystem(t.app.atrium.db, (tx) =>
    queryRows<{ id: string; status: string }>(
      tx,
      sql`SELECT id, status FROM oauth_connections WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`,
    ),
  );

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
}, 60_000);
afterAll(async () => t?.close());

describe('a removed member', () => {
  it('loses their calendar connections in the removal: tokens gone, calendars out of every list, events there 404', async () => {
    const dr = await addMember(t, ws, { isProvider: true, name: 'Dr. Gone' });
    const mine = await connectCalendar(t, dr.token, 'google', `gone-${ws.id}@google.example`);
    const desk = await connectCalendar(t, ws.admin.token, 'microsoft', `desk-${ws.id}@microsoft.example`);
    expect((await api('GET', '/calendar/calendars')).json().items.map((c: { id: string }) => c.id)).toContain(
      mine.calendarId,
    );

    const removed = await api('DELETE', `/members/${dr.userId}`);
    expect(removed.statusCode, removed.body).toBe(204);

    expect(await connectionRows(ws.id, dr.userId)).toEqual([]);
    const connections = (await api('GET', '/calendar/connections')).json().items.map((c: { id: string }) => c.id);
    expect(connections).toEqual([desk.connectionId]);
    const calendars = (await api('GET', '/calendar/calendars')).json().items.map((c: { id: string }) => c.id);
    expect(calendars).not.toContain(mine.calendarId);
    expect(calendars).toContain(desk.calendarId);

    // The merged list reads only the desk's token; the ex-member's calendar is unknown to reads and writes.
    const window = 'timeMin=2026-12-01T00:00:00Z&timeMax=2026-12-08T00:00:00Z';
    const before = await auditCount(mine.connectionId);
    const list = await api('GET', `/calendar/events?${window}`);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().warnings).toEqual([]);
    expect((await api('GET', `/calendar/events?${window}&calendar=${mine.calendarId}`)).json().code).toBe(
      'calendar_not_found',
    );
    const create = await api('POST', '/calendar/events', ws.admin.token, {
      calendar: mine.calendarId,
      draft: { title: 'Visit', start: '2026-12-02T15:00:00Z', end: '2026-12-02T15:30:00Z' },
    });
    expect([create.statusCode, create.json().code]).toEqual([404, 'calendar_not_found']);
    expect(await auditCount(mine.connectionId)).toBe(before);

    // The disconnect is on record, in the workspace, naming the member removed.
    const audit = await api('GET', `/audit?kind=token_access&limit=100`);
    const revoke = audit
      .json()
      .items.find(
        (a: { connectionId: string; reason: string }) =>
          a.connectionId === mine.connectionId && a.reason === 'token.revoke',
      );
    expect(revoke, audit.body).toMatchObject({ actorUserId: ws.admin.userId, removedMember: dr.userId, outcome: 'ok' });
  });

  it('cannot finish a connection started before the removal: 400 invalid_state, nothing stored', async () => {
    const dr = await addMember(t, ws, { isProvider: true });
    const start = await api('POST', '/calendar/connections', dr.token, { provider: 'google' });
    expect(start.statusCode, start.body).toBe(201);
    const authorize = new URL(start.json().authorizeUrl);
    authorize.searchParams.set('login_hint', `late-${ws.id}@google.example`);
    const consent = await fetch(authorize, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const callback = new URL(consent.headers.get('location') ?? '');

    expect((await api('DELETE', `/members/${dr.userId}`)).statusCode).toBe(204);
    const back = await t.request({ method: 'GET', url: `${callback.pathname}${callback.search}` });
    expect(back.statusCode, back.body).toBe(400);
    expect(back.json()).toMatchObject({ code: 'invalid_state' });
    expect(back.json().detail).toMatch(/no longer a member/);
    expect(await connectionRows(ws.id, dr.userId)).toEqual([]);
  });

  it('cannot have a connection stored for them (the check as it is stored, for a removal that lands mid-flow)', async () => {
    const dr = await addMember(t, ws, { isProvider: true });
    expect((await api('DELETE', `/members/${dr.userId}`)).statusCode).toBe(204);
    const save = saveConnection(
      oauthDeps(t.app.atrium),
      { workspaceId: ws.id, userId: dr.userId },
      'google',
      `stored-${ws.id}@google.example`,
      { accessToken: 'at', refreshToken: 'rt', expiresInSec: 3600 },
    );
    await expect(save).rejects.toMatchObject({ code: 'invalid_state' });
    expect(await connectionRows(ws.id, dr.userId)).toEqual([]);
  });
});

describe('a disconnected calendar', () => {
  it('stays disconnected when a calendar list fetched before the disconnect finishes after it', async () => {
    const w = await createWorkspace(t, { tier: 'advanced' });
    const cal = await connectCalendar(t, w.admin.token, 'google', `race-${w.id}@google.example`);
    await fetch(`${t.baseUrl}/_emulators/google/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'calendars.list', delayMs: 700, times: 1 }),
    });
    // The refresh reads the provider's calendars (slowly) and then stores them.
    const refreshing = api('GET', '/calendar/calendars', w.admin.token);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const gone = await api('DELETE', `/calendar/connections/${cal.connectionId}`, w.admin.token);
    expect(gone.statusCode, gone.body).toBe(204);
    await refreshing;
    const rows = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ disconnected: boolean }>(
        tx,
        sql`SELECT disconnected_at IS NOT NULL AS disconnected FROM calendar_calendars WHERE workspace_id = ${w.id}`,
      ),
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.disconnected)).toBe(true);
    expect((await api('GET', '/calendar/calendars', w.admin.token)).json().items).toEqual([]);
  });

  it('keeps its id: reconnecting the account brings back the sessions with their patient, conflicts and units', async () => {
    const dr = await addMember(t, ws, { isProvider: true, name: 'Dr. Back' });
    const email = `back-${ws.id}@google.example`;
    const first = await connectCalendar(t, dr.token, 'google', email);
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Rita', familyName: 'Return' });
    const auth = await api('POST', `/patients/${patient.id}/authorizations`, ws.admin.token, {
      service: 'physical-therapy',
      units: 3,
      unitMinutes: 45,
      validFrom: '2027-02-01',
      validTo: '2027-03-31',
    });
    expect(auth.statusCode, auth.body).toBe(201);
    const booked = await api('POST', '/calendar/sessions/from-authorization', ws.admin.token, {
      patientId: patient.id,
      authorizationId: auth.json().id,
      calendar: first.calendarId,
      firstStart: '2027-02-02T15:00:00Z',
      timeZone: 'America/New_York',
      conference: 'meet',
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const series = booked.json().eventId as string;
    const usage = async () =>
      (await api('GET', `/calendar/sessions?patientId=${patient.id}`))
        .json()
        .items.find((a: { authorizationId: string }) => a.authorizationId === auth.json().id);
    expect(await usage()).toMatchObject({ unitsBooked: 3, unitsRemaining: 0 });
    const window = 'timeMin=2027-02-01T00:00:00Z&timeMax=2027-02-28T00:00:00Z';
    const visits = async () =>
      (await api('GET', `/calendar/events?${window}&calendar=${first.calendarId}`))
        .json()
        .items.filter((e: { recurringEventId: string | null }) => e.recurringEventId === series);
    // The series' room, pre-warmed (the visits show its link).
    await runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: telehealthModule.jobTypes ?? [] });
    const room = (await visits())[0].telehealth;
    expect(room).toMatchObject({ roomId: expect.stringMatching(/^[a-z]+_/), joinUrl: expect.any(String) });

    // Disconnected: not listed, and the calendar and its events are unknown to reads and writes.
    expect((await api('DELETE', `/calendar/connections/${first.connectionId}`)).statusCode).toBe(204);
    expect((await api('GET', '/calendar/calendars')).json().items.map((c: { id: string }) => c.id)).not.toContain(
      first.calendarId,
    );
    const list = await api('GET', `/calendar/events?${window}&calendar=${first.calendarId}`);
    expect([list.statusCode, list.json().code]).toEqual([404, 'calendar_not_found']);
    expect((await api('GET', `/calendar/events?${window}`)).json().warnings).toEqual([]);
    const gone = await api('DELETE', `/calendar/events?event=${encodeURIComponent(series)}`);
    expect(gone.statusCode, gone.body).toBe(404);
    const write = await api('POST', '/calendar/events', ws.admin.token, {
      calendar: first.calendarId,
      draft: { title: 'Visit', start: '2027-02-03T15:00:00Z', end: '2027-02-03T15:30:00Z' },
    });
    expect([write.statusCode, write.json().code]).toEqual([404, 'calendar_not_found']);

    // The same account again: a new connection, the same calendar, the visits with their patient and room.
    const again = await connectCalendar(t, dr.token, 'google', email);
    expect(again.connectionId).not.toBe(first.connectionId);
    expect(again.calendarId).toBe(first.calendarId);
    // The units the sessions hold are still theirs (the disconnect released none).
    expect(await usage()).toMatchObject({ unitsBooked: 3, unitsRemaining: 0 });
    const back = await visits();
    expect(back.map((e: { start: string }) => e.start)).toEqual([
      '2027-02-02T15:00:00.000Z',
      '2027-02-09T15:00:00.000Z',
      '2027-02-16T15:00:00.000Z',
    ]);
    for (const e of back) expect(e).toMatchObject({ patientId: patient.id, hostUserId: dr.userId });
    expect(back[0].telehealth).toEqual(room);

    // The conflict check sees them again: no double booking of the doctor.
    const other = await createPatient(t, ws.admin.token, { givenName: 'Otto', familyName: 'Other' });
    const clash = await api('POST', '/calendar/events', ws.admin.token, {
      calendar: first.calendarId,
      draft: { title: 'Visit', start: '2027-02-09T15:15:00Z', end: '2027-02-09T15:45:00Z', patientId: other.id },
    });
    expect([clash.statusCode, clash.json().code], clash.body).toEqual([409, 'scheduling_conflict']);

    // Deleting the series gives the units back.
    const cancel = await api('DELETE', `/calendar/events?event=${encodeURIComponent(series)}`);
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect(await usage()).toMatchObject({ unitsBooked: 0, unitsRemaining: 3 });
  });
});

async function auditCount(connectionId: string): Promise<number> {
  const rows = await withSystem(t.app.atrium.db, (tx) =>
    queryRows<{ n: number }>(
      tx,
      sql`SELECT count(*)::int AS n FROM audit_log WHERE workspace_id = ${ws.id} AND data->>'connectionId' = ${connectionId}`,
    ),
  );
  return rows[0].n;
}
