// The calendar API end to end over HTTP against the google/microsoft/zoom emulators: connections,
// merged lists with warnings, writes and their result codes, tiers, audit rows, appointment events.
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { mintEmulatorTokens } from '../../emulators/calendar/index.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';

let t: TestApp;
let ws: TestWorkspace;
let google: { connectionId: string; calendarId: string; accountEmail: string };
let microsoft: { connectionId: string; calendarId: string; accountEmail: string };

const WEEK = { timeMin: '2026-11-23T00:00:00Z', timeMax: '2026-11-30T00:00:00Z' };

const emulator = (name: string, path: string, body?: unknown) =>
  fetch(`${t.baseUrl}/_emulators/${name}${path}`, {
    method: body === undefined ? 'DELETE' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const list = (token = ws.admin.token, query: Record<string, string> = WEEK) =>
  t.request({ method: 'GET', url: `/api/v1/calendar/events?${new URLSearchParams(query)}`, token });

const create = (calendar: string, draft: Record<string, unknown>, token = ws.admin.token, headers = {}) =>
  t.request({ method: 'POST', url: '/api/v1/calendar/events', token, headers, payload: { calendar, draft } });

const tokenRows = (workspaceId: string) =>
  withSystem(t.app.atrium.db, (tx) =>
    queryRows<{ data: { provider: string; connectionId?: string; reason: string; outcome: string } }>(
      tx,
      sql`SELECT data FROM audit_log WHERE workspace_id = ${workspaceId} AND kind = 'token_access' ORDER BY id`,
    ),
  );

const domainEvents = (workspaceId: string, type: string) =>
  withSystem(t.app.atrium.db, (tx) =>
    queryRows<{ data: Record<string, unknown> }>(
      tx,
      sql`SELECT data FROM domain_events WHERE workspace_id = ${workspaceId} AND type = ${type} ORDER BY id`,
    ),
  );

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  google = await connectCalendar(t, ws.admin.token, 'google', `g-${ws.id}@google.example`);
  microsoft = await connectCalendar(t, ws.admin.token, 'microsoft', `m-${ws.id}@microsoft.example`);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('connections and calendars', () => {
  it('lists both connections and their primary calendars', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: ws.admin.token });
    expect(res.statusCode).toBe(200);
    expect(
      res
        .json()
        .items.map((c: { provider: string; status: string }) => [c.provider, c.status])
        .sort(),
    ).toEqual([
      ['google', 'active'],
      ['microsoft', 'active'],
    ]);
    const cals = await t.request({ method: 'GET', url: '/api/v1/calendar/calendars', token: ws.admin.token });
    const ids = cals.json().items.map((c: { id: string }) => c.id);
    expect(ids).toContain(google.calendarId);
    expect(ids).toContain(microsoft.calendarId);
    expect(google.calendarId).toMatch(/^cal_/);
  });

  it('a free workspace gets one connection; a second is 403 tier_required', async () => {
    const free = await createWorkspace(t, { tier: 'free' });
    await connectCalendar(t, free.admin.token, 'google', `free-${free.id}@google.example`);
    const second = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/connections',
      token: free.admin.token,
      payload: { provider: 'microsoft' },
    });
    expect(second.statusCode).toBe(403);
    expect(second.json().code).toBe('tier_required');
  });

  it('Free: Reconnect on its one healthy connection repairs it; another account picked at the provider is refused', async () => {
    const free = await createWorkspace(t, { tier: 'free' });
    const email = `free-repair-${free.id}@google.example`;
    const first = await connectCalendar(t, free.admin.token, 'google', email);
    const reconnect = async (loginHint: string) => {
      const start = await t.request({
        method: 'POST',
        url: '/api/v1/calendar/connections',
        token: free.admin.token,
        payload: { provider: 'google', connectionId: first.connectionId },
      });
      expect(start.statusCode, start.body).toBe(201);
      const authorize = new URL(start.json().authorizeUrl);
      expect(authorize.searchParams.get('login_hint')).toBe(email);
      authorize.searchParams.set('login_hint', loginHint);
      const consent = await fetch(authorize, { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location') ?? '');
      return t.request({ method: 'GET', url: `${callback.pathname}${callback.search}` });
    };
    expect((await reconnect(email)).headers.location).toBe('/calendar?connected=google');
    const other = await reconnect(`someone-else-${free.id}@google.example`);
    expect(other.headers.location).not.toBe('/calendar?connected=google');
    const connections = (
      await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: free.admin.token })
    ).json().items;
    expect(connections.map((c: { id: string; status: string }) => [c.id, c.status])).toEqual([
      [first.connectionId, 'active'],
    ]);
  });

  it("a new connection suggests the given account at the provider's sign-in (login_hint); a reconnect asks for its own", async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const hint = `dr.chen-${ws.id}@clinic.example`.toLowerCase();
    const start = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/connections',
      token: ws.admin.token,
      payload: { provider: 'google', loginHint: hint },
    });
    expect(start.statusCode, start.body).toBe(201);
    const authorize = new URL(start.json().authorizeUrl);
    expect(authorize.searchParams.get('login_hint')).toBe(hint);
    // The emulator's consent takes the suggested account (each clinic its own calendar, not one shared demo one).
    const consent = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location') ?? '');
    await t.request({ method: 'GET', url: `${callback.pathname}${callback.search}` });
    const connections = (
      await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: ws.admin.token })
    ).json().items as { id: string; accountEmail: string }[];
    expect(connections.map((c) => c.accountEmail)).toEqual([hint]);
    // Not an address: 400, nothing started.
    const bad = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/connections',
      token: ws.admin.token,
      payload: { provider: 'google', loginHint: 'not an address' },
    });
    expect(bad.statusCode).toBe(400);
    // Reconnecting asks for the connection's own account, whatever is suggested.
    const again = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/connections',
      token: ws.admin.token,
      payload: { provider: 'google', connectionId: connections[0].id, loginHint: `other-${hint}` },
    });
    expect(new URL(again.json().authorizeUrl).searchParams.get('login_hint')).toBe(hint);
  });

  it('Free: connections started side by side cannot all finish; a replayed callback and another signed-in user get nothing', async () => {
    const free = await createWorkspace(t, { tier: 'free' });
    const { addMember } = await import('../../../test/helpers/factories.js');
    const member = await addMember(t, free, { name: 'Side By Side' });
    // Three flows started before any finished: each was allowed when it started.
    const started = [];
    for (const [token, provider, hint] of [
      [free.admin.token, 'google', `a-${free.id}@google.example`],
      [member.token, 'microsoft', `b-${free.id}@microsoft.example`],
      [free.admin.token, 'google', `c-${free.id}@google.example`],
    ] as const) {
      const start = await t.request({
        method: 'POST',
        url: '/api/v1/calendar/connections',
        token,
        payload: { provider },
      });
      expect(start.statusCode, start.body).toBe(201);
      const authorize = new URL(start.json().authorizeUrl);
      authorize.searchParams.set('login_hint', hint);
      const consent = await fetch(authorize, { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location') ?? '');
      started.push(`${callback.pathname}${callback.search}`);
    }
    const answers = await Promise.all(started.map((url) => t.request({ method: 'GET', url })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([302, 403, 403]);
    for (const refused of answers.filter((a) => a.statusCode === 403))
      expect(refused.json().code).toBe('tier_required');
    const listed = await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: free.admin.token });
    expect(listed.json().items).toHaveLength(1);

    // The callback that worked, opened again (after a disconnect, too): the code was used up.
    const used = started[answers.findIndex((a) => a.statusCode === 302)];
    const replay = await t.request({ method: 'GET', url: used });
    expect(replay.statusCode, replay.body).toBe(400);
    expect(replay.json().code).toBe('authorization_failed');
    const id = listed.json().items[0].id;
    await t.request({ method: 'DELETE', url: `/api/v1/calendar/connections/${id}`, token: free.admin.token });
    expect((await t.request({ method: 'GET', url: used })).statusCode).toBe(400);
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: free.admin.token })).json().items,
    ).toHaveLength(0);

    // A flow the member started, finished in a browser signed in as the admin: refused, nothing stored.
    const start = await t.request({
      method: 'POST',
      url: '/api/v1/calendar/connections',
      token: member.token,
      payload: { provider: 'google' },
    });
    const consent = await fetch(start.json().authorizeUrl, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location') ?? '');
    const crossed = await t.request({
      method: 'GET',
      url: `${callback.pathname}${callback.search}`,
      token: free.admin.token,
    });
    expect(crossed.statusCode, crossed.body).toBe(400);
    expect(crossed.json().code).toBe('invalid_state');
    // The member's own browser finishes it.
    const own = await t.request({ method: 'GET', url: `${callback.pathname}${callback.search}`, token: member.token });
    expect(own.statusCode, own.body).toBe(302);
  });

  it('reconnecting a connection asks the provider for its account, so that connection is repaired', async () => {
    const start = (connectionId: string, token = ws.admin.token) =>
      t.request({
        method: 'POST',
        url: '/api/v1/calendar/connections',
        token,
        payload: { provider: 'microsoft', connectionId },
      });
    const res = await start(microsoft.connectionId);
    expect(res.statusCode, res.body).toBe(201);
    const authorize = new URL(res.json().authorizeUrl);
    expect(authorize.searchParams.get('login_hint')).toBe(microsoft.accountEmail);
    const consent = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location') ?? '');
    const back = await t.request({
      method: 'GET',
      url: `${callback.pathname}${callback.search}`,
      token: ws.admin.token,
    });
    expect(back.statusCode, back.body).toBe(302);
    const listed = await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: ws.admin.token });
    expect(listed.json().items.filter((c: { provider: string }) => c.provider === 'microsoft')).toHaveLength(1);
    // Another provider's, another workspace's or an unknown connection: 404, no consent URL.
    expect((await start(google.connectionId)).statusCode).toBe(404);
    expect((await start('oac_unknown0000000000000000')).statusCode).toBe(404);
    const other = await createWorkspace(t, { tier: 'advanced' });
    expect((await start(microsoft.connectionId, other.admin.token)).statusCode).toBe(404);
  });

  it('connecting the same account again repairs that connection instead of adding one', async () => {
    const again = await connectCalendar(t, ws.admin.token, 'google', `g-${ws.id}@google.example`);
    expect(again.connectionId).toBe(google.connectionId);
    expect(again.calendarId).toBe(google.calendarId);
  });

  it('refuses a forged or tampered state with 400', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/calendar/oauth/google/callback?code=x&state=forged' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_state');
  });

  it('tells the tier what it may use', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/calendar/capabilities', token: ws.admin.token });
    expect(res.json()).toMatchObject({
      tier: 'advanced',
      allowed: { meet: true, teams: true, zoom: true, hqView: false },
    });
    expect(res.json().matrix.free).toMatchObject({ teams: false, auto: false, bothProviders: false });
  });
});

describe('events', () => {
  it('creates, lists, changes and deletes; a second delete (410 upstream) is still success', async () => {
    const made = await create(google.calendarId, {
      title: 'Intake',
      start: '2026-11-24T15:00:00Z',
      end: '2026-11-24T15:30:00Z',
      timeZone: 'America/New_York',
      attendees: [{ email: 'pat@example.test', name: 'Pat' }],
    });
    expect(made.statusCode, made.body).toBe(201);
    const { eventId } = made.json();
    expect(eventId).toMatch(/^cev_/);
    const listed = await list();
    const item = listed.json().items.find((e: { id: string }) => e.id === eventId);
    expect(item).toMatchObject({
      title: 'Intake',
      provider: 'google',
      calendar: google.calendarId,
      workspaceId: ws.id,
    });
    expect(item.attendees[0]).toMatchObject({ email: 'pat@example.test', responseStatus: 'needsAction' });

    const patched = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: {
        event: eventId,
        draft: { title: 'Intake (moved)', start: '2026-11-24T16:00:00Z', end: '2026-11-24T16:30:00Z' },
      },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().event).toMatchObject({ title: 'Intake (moved)', start: '2026-11-24T16:00:00.000Z' });

    const del = () =>
      t.request({ method: 'DELETE', url: `/api/v1/calendar/events?event=${eventId}`, token: ws.admin.token });
    expect((await del()).json()).toEqual({ ok: true });
    expect((await del()).statusCode).toBe(200);
    expect((await list()).json().items.some((e: { id: string }) => e.id === eventId)).toBe(false);
  });

  it.each(['google', 'microsoft'] as const)(
    '%s: cancelling by PATCH answers the cancelled event; changing a deleted event is 404 event_not_found',
    async (provider) => {
      const calendar = provider === 'google' ? google.calendarId : microsoft.calendarId;
      const patch = (eventId: string, draft: Record<string, unknown>) =>
        t.request({
          method: 'PATCH',
          url: '/api/v1/calendar/events',
          token: ws.admin.token,
          payload: { event: eventId, draft },
        });
      const made = await create(calendar, {
        title: `Cancel me ${provider}`,
        start: '2026-11-25T15:00:00Z',
        end: '2026-11-25T15:30:00Z',
      });
      const { eventId } = made.json();
      const cancelled = await patch(eventId, { status: 'cancelled' });
      expect(cancelled.statusCode, cancelled.body).toBe(200);
      expect(cancelled.json()).toMatchObject({
        ok: true,
        eventId,
        event: { status: 'cancelled', title: `Cancel me ${provider}` },
      });
      expect((await list()).json().items.some((e: { id: string }) => e.id === eventId)).toBe(false);
      // The provider answers 410 Gone (Google) or 404 (Microsoft) for it now: §5.2's 404 either way.
      const again = await patch(eventId, { title: 'Too late' });
      expect(again.statusCode, again.body).toBe(404);
      expect(again.json().code).toBe('event_not_found');
    },
  );

  it('refuses a draft that ends before it starts with 422 invalid_draft and writes nothing', async () => {
    const before = (await list()).json().items.length;
    const res = await create(microsoft.calendarId, {
      title: 'Bad',
      start: '2026-11-24T16:00:00Z',
      end: '2026-11-24T15:00:00Z',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('invalid_draft');
    expect((await list()).json().items.length).toBe(before);
  });

  it('refuses a window over 62 days', async () => {
    const res = await list(ws.admin.token, { timeMin: '2026-01-01T00:00:00Z', timeMax: '2026-04-01T00:00:00Z' });
    expect(res.statusCode).toBe(422);
  });

  it('replays a create with the same Idempotency-Key instead of making a second event', async () => {
    const headers = { 'idempotency-key': `cal-${ws.id}` };
    const draft = { title: 'Once', start: '2026-11-25T14:00:00Z', end: '2026-11-25T14:30:00Z' };
    const a = await create(google.calendarId, draft, ws.admin.token, headers);
    const b = await create(google.calendarId, draft, ws.admin.token, headers);
    expect(b.json().eventId).toBe(a.json().eventId);
    expect((await list()).json().items.filter((e: { title: string }) => e.title === 'Once')).toHaveLength(1);
  });

  it('conferencing: Meet on Google, Teams on Microsoft, Zoom written into the event; wrong host 422', async () => {
    const meet = await create(google.calendarId, {
      title: 'Meet call',
      start: '2026-11-26T14:00:00Z',
      end: '2026-11-26T14:30:00Z',
      conference: 'meet',
    });
    expect(meet.statusCode, meet.body).toBe(201);
    expect(meet.json().event.conference.product).toBe('meet');
    expect(meet.json().event.conference.joinUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_emulators\/google\//);

    const teams = await create(microsoft.calendarId, {
      title: 'Teams call',
      start: '2026-11-26T15:00:00Z',
      end: '2026-11-26T15:30:00Z',
      conference: 'auto',
    });
    expect(teams.statusCode, teams.body).toBe(201);
    expect(teams.json().event.conference).toMatchObject({ product: 'teams' });

    const zoom = await create(microsoft.calendarId, {
      title: 'Zoom call',
      start: '2026-11-26T16:00:00Z',
      end: '2026-11-26T16:30:00Z',
      conference: 'auto',
      preferredConference: 'zoom',
    });
    expect(zoom.statusCode, zoom.body).toBe(201);
    expect(zoom.json().event.conference.product).toBe('zoom');
    expect(zoom.json().event.location).toBe(zoom.json().event.conference.joinUrl);
    const listed = (await list()).json().items.find((e: { id: string }) => e.id === zoom.json().eventId);
    expect(listed.conference.product).toBe('zoom');
    const zoomAudit = (await tokenRows(ws.id)).filter((r) => r.data.provider === 'zoom');
    expect(zoomAudit.at(-1)?.data).toMatchObject({ reason: 'calendar.events.create', outcome: 'ok' });

    const wrong = await create(microsoft.calendarId, {
      title: 'Meet on Outlook',
      start: '2026-11-26T17:00:00Z',
      end: '2026-11-26T17:30:00Z',
      conference: 'meet',
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().code).toBe('conference_unavailable');
  });

  it('tier rules: Standard may not use Zoom, Free may not use auto or Teams', async () => {
    const standard = await createWorkspace(t, { tier: 'standard' });
    const cal = await connectCalendar(t, standard.admin.token, 'google', `s-${standard.id}@google.example`);
    const zoom = await create(
      cal.calendarId,
      { title: 'Z', start: '2026-11-26T14:00:00Z', end: '2026-11-26T14:30:00Z', conference: 'zoom' },
      standard.admin.token,
    );
    expect(zoom.statusCode).toBe(403);
    expect(zoom.json()).toMatchObject({ code: 'tier_required', requiredTier: 'advanced' });
    const free = await createWorkspace(t, { tier: 'free' });
    const freeCal = await connectCalendar(t, free.admin.token, 'google', `f-${free.id}@google.example`);
    const auto = await create(
      freeCal.calendarId,
      { title: 'A', start: '2026-11-26T14:00:00Z', end: '2026-11-26T14:30:00Z', conference: 'auto' },
      free.admin.token,
    );
    expect(auto.statusCode).toBe(403);
    const meet = await create(
      freeCal.calendarId,
      { title: 'M', start: '2026-11-26T14:00:00Z', end: '2026-11-26T14:30:00Z', conference: 'meet' },
      free.admin.token,
    );
    expect(meet.statusCode, meet.body).toBe(201);
  });

  it('writes exactly one token_access row per connection per operation', async () => {
    const before = (await tokenRows(ws.id)).length;
    expect((await list()).statusCode).toBe(200);
    const rows = (await tokenRows(ws.id)).slice(before);
    expect(rows.map((r) => r.data.reason)).toEqual(['calendar.events.list', 'calendar.events.list']);
    expect(new Set(rows.map((r) => r.data.connectionId))).toEqual(
      new Set([google.connectionId, microsoft.connectionId]),
    );

    const created = await create(google.calendarId, {
      title: 'Audit',
      start: '2026-11-27T14:00:00Z',
      end: '2026-11-27T15:00:00Z',
    });
    const afterCreate = (await tokenRows(ws.id)).slice(before + 2);
    expect(afterCreate.map((r) => r.data.reason)).toEqual(['calendar.events.create']);
    await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: ws.admin.token,
      payload: { event: created.json().eventId, draft: { start: '2026-11-27T14:30:00Z' } },
    });
    const afterPatch = (await tokenRows(ws.id)).slice(before + 3);
    expect(afterPatch.map((r) => r.data.reason)).toEqual(['calendar.events.update']);
  });

  it('appointments: a patient makes an event an appointment; created, completed and cancelled are emitted', async () => {
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Ada', familyName: 'Appointment' });
    const made = await create(google.calendarId, {
      title: 'Visit',
      start: '2026-11-27T16:00:00Z',
      end: '2026-11-27T16:30:00Z',
      patientId: patient.id,
    });
    expect(made.json().event.patientId).toBe(patient.id);
    const eventId = made.json().eventId;
    expect((await domainEvents(ws.id, 'appointment.created')).some((e) => e.data.eventId === eventId)).toBe(true);
    const done = await t.request({
      method: 'PATCH',
      url: `/api/v1/calendar/events?event=${eventId}`,
      token: ws.admin.token,
      payload: { draft: { status: 'completed' } },
    });
    expect(done.json().event.status).toBe('completed');
    expect((await domainEvents(ws.id, 'appointment.completed')).some((e) => e.data.eventId === eventId)).toBe(true);
    await t.request({ method: 'DELETE', url: `/api/v1/calendar/events?event=${eventId}`, token: ws.admin.token });
    expect((await domainEvents(ws.id, 'appointment.cancelled')).some((e) => e.data.eventId === eventId)).toBe(true);

    const other = await createWorkspace(t, { tier: 'advanced' });
    const foreign = await createPatient(t, other.admin.token, { givenName: 'Not', familyName: 'Yours' });
    const refused = await create(google.calendarId, {
      title: 'Wrong patient',
      start: '2026-11-27T17:00:00Z',
      end: '2026-11-27T17:30:00Z',
      patientId: foreign.id,
    });
    // Another workspace's patient reads as an unknown one (contract §1).
    expect([refused.statusCode, refused.json().code]).toEqual([404, 'not_found']);
  });

  it('the week list carries our facts for exactly the events it shows: a single visit and each occurrence of a series', async () => {
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Rae', familyName: 'Recurring' });
    const single = await create(microsoft.calendarId, {
      title: 'Follow-up',
      start: '2026-11-25T09:00:00Z',
      end: '2026-11-25T09:30:00Z',
      patientId: patient.id,
    });
    const series = await create(google.calendarId, {
      title: 'Physio',
      start: '2026-11-23T08:00:00Z',
      end: '2026-11-23T08:45:00Z',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
      patientId: patient.id,
    });
    expect([single.statusCode, series.statusCode]).toEqual([201, 201]);
    const items: { id: string; title: string; patientId: string | null; recurringEventId: string | null }[] = (
      await list()
    ).json().items;
    const physio = items.filter((e) => e.title === 'Physio');
    expect(physio).toHaveLength(3);
    expect(physio.every((e) => e.recurringEventId === series.json().eventId && e.patientId === patient.id)).toBe(true);
    expect(items.find((e) => e.id === single.json().eventId)?.patientId).toBe(patient.id);
    // Next week shows none of them, and nothing of theirs.
    const later = (
      await list(ws.admin.token, { timeMin: '2026-12-07T00:00:00Z', timeMax: '2026-12-14T00:00:00Z' })
    ).json();
    expect(later.items.filter((e: { patientId: string | null }) => e.patientId === patient.id)).toEqual([]);
  });

  it("one patient's schedule: patientId narrows the list to their visits (a series' occurrences too), audited", async () => {
    const mine = await createPatient(t, ws.admin.token, { givenName: 'Sol', familyName: 'Schedule' });
    const someoneElse = await createPatient(t, ws.admin.token, { givenName: 'Not', familyName: 'Them' });
    const visit = await create(google.calendarId, {
      title: 'Intake',
      start: '2026-11-24T13:00:00Z',
      end: '2026-11-24T13:45:00Z',
      patientId: mine.id,
    });
    const weekly = await create(microsoft.calendarId, {
      title: 'Therapy',
      start: '2026-11-23T15:00:00Z',
      end: '2026-11-23T15:45:00Z',
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=4'],
      patientId: mine.id,
    });
    const other = await create(google.calendarId, {
      title: 'Other visit',
      start: '2026-11-24T14:00:00Z',
      end: '2026-11-24T14:30:00Z',
      patientId: someoneElse.id,
    });
    expect([visit.statusCode, weekly.statusCode, other.statusCode]).toEqual([201, 201, 201]);
    const month = { timeMin: '2026-11-23T00:00:00Z', timeMax: '2026-12-21T00:00:00Z' };
    const res = await list(ws.admin.token, { ...month, patientId: mine.id });
    expect(res.statusCode, res.body).toBe(200);
    const items: { id: string; title: string; patientId: string; start: string; recurringEventId: string | null }[] =
      res.json().items;
    expect(items.every((e) => e.patientId === mine.id)).toBe(true);
    expect(items.map((e) => e.title)).toEqual(['Therapy', 'Intake', 'Therapy', 'Therapy', 'Therapy']);
    expect(items.filter((e) => e.recurringEventId === weekly.json().eventId)).toHaveLength(4);
    // Reading a patient's schedule is reading their record: one phi_access row per read.
    const audit = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ data: { patientId: string; context: string } }>(
        tx,
        sql`SELECT data FROM audit_log WHERE workspace_id = ${ws.id} AND kind = 'phi_access'
              AND data->>'context' = 'calendar.appointments'`,
      ),
    );
    expect(audit.map((r) => r.data.patientId)).toEqual([mine.id]);
    // Not a patient here: 404, and no provider was asked (no token read).
    const before = (await tokenRows(ws.id)).length;
    const unknown = await list(ws.admin.token, { ...month, patientId: 'pat_01nobodyhere' });
    expect(unknown.statusCode).toBe(404);
    expect((await tokenRows(ws.id)).length).toBe(before);
  });
});

describe('provider failures', () => {
  it('a failing provider becomes a warning; the other calendars still answer', async () => {
    await create(google.calendarId, {
      title: 'Still here',
      start: '2026-11-24T18:00:00Z',
      end: '2026-11-24T18:30:00Z',
    });
    await emulator('microsoft', '/faults', { operation: 'events.list', status: 503 });
    const res = await list();
    expect(res.statusCode).toBe(200);
    expect(res.json().warnings).toEqual([
      { provider: 'microsoft', calendar: microsoft.calendarId, code: 'provider_unavailable' },
    ]);
    expect(res.json().items.some((e: { title: string }) => e.title === 'Still here')).toBe(true);
  });

  it('maps the provider statuses to write-result codes (429 with Retry-After, 404, 403)', async () => {
    const draft = { title: 'x', start: '2026-11-24T18:00:00Z', end: '2026-11-24T18:30:00Z' };
    await emulator('google', '/faults', { operation: 'events.insert', status: 429 });
    const limited = await create(google.calendarId, draft);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('1');
    // Google also limits with a 403 and says no wait (reason rateLimitExceeded): the 429 still names one.
    await emulator('google', '/faults', {
      operation: 'events.insert',
      status: 403,
      body: { error: { code: 403, errors: [{ domain: 'usageLimits', reason: 'rateLimitExceeded' }] } },
    });
    const unsaid = await create(google.calendarId, draft);
    expect(unsaid.statusCode).toBe(429);
    expect(unsaid.json().code).toBe('rate_limited');
    expect(unsaid.headers['retry-after']).toBe('10');
    await emulator('microsoft', '/faults', { operation: 'events.insert', status: 403 });
    const forbidden = await create(microsoft.calendarId, draft);
    expect(forbidden.json().code).toBe('provider_forbidden');
    await emulator('google', '/faults', { operation: 'events.insert', status: 500 });
    const down = await create(google.calendarId, draft);
    expect(down.statusCode).toBe(502);
    expect(down.json().code).toBe('provider_unavailable');
  });

  it('an expired token is refreshed by itself; a refused refresh marks the connection reauth_required', async () => {
    const mine = await createWorkspace(t, { tier: 'advanced' });
    const cal = await connectCalendar(t, mine.admin.token, 'google', `r-${mine.id}@google.example`);
    // A token endpoint that fails (not a refusal) is the provider being unavailable: a write-result code,
    // and the connection stays active.
    await emulator('google', '/expire-tokens', {});
    await emulator('google', '/faults', { operation: 'token', status: 500 });
    const down = await create(
      cal.calendarId,
      { title: 'x', start: '2026-11-24T18:00:00Z', end: '2026-11-24T18:30:00Z' },
      mine.admin.token,
    );
    expect(down.statusCode, down.body).toBe(502);
    expect(down.json().code).toBe('provider_unavailable');
    await emulator('google', '/faults');
    await emulator('google', '/expire-tokens', {});
    const ok = await list(mine.admin.token);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().warnings).toEqual([]);
    expect((await tokenRows(mine.id)).some((r) => r.data.reason === 'token.refresh' && r.data.outcome === 'ok')).toBe(
      true,
    );

    await emulator('google', '/expire-tokens', {});
    await emulator('google', '/faults', { operation: 'token', status: 400, body: { error: 'invalid_grant' } });
    const warned = await list(mine.admin.token);
    expect(warned.json().warnings).toEqual([{ provider: 'google', calendar: cal.calendarId, code: 'reauth_required' }]);
    const conns = await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: mine.admin.token });
    expect(conns.json().items[0].status).toBe('reauth_required');
    const write = await create(
      cal.calendarId,
      { title: 'x', start: '2026-11-24T18:00:00Z', end: '2026-11-24T18:30:00Z' },
      mine.admin.token,
    );
    expect(write.statusCode).toBe(409);
    expect(write.json().code).toBe('reauth_required');

    const repaired = await connectCalendar(t, mine.admin.token, 'google', `r-${mine.id}@google.example`);
    expect(repaired.connectionId).toBe(cal.connectionId);
    const again = await t.request({ method: 'GET', url: '/api/v1/calendar/connections', token: mine.admin.token });
    expect(again.json().items[0].status).toBe('active');
  });

  it('a provider slower than ATRIUM_CALENDAR_TIMEOUT answers 504 provider_timeout', async () => {
    const quick = await createTestApp({ calendar: { ...t.config.calendar, timeoutMs: 300 } });
    try {
      const w = await createWorkspace(quick, { tier: 'advanced' });
      const cal = await connectCalendar(quick, w.admin.token, 'google');
      await fetch(`${quick.baseUrl}/_emulators/google/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation: 'events.insert', delayMs: 1500 }),
      });
      const res = await quick.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: w.admin.token,
        payload: {
          calendar: cal.calendarId,
          draft: { title: 'slow', start: '2026-11-24T18:00:00Z', end: '2026-11-24T18:30:00Z' },
        },
      });
      expect(res.statusCode).toBe(504);
      expect(res.json().code).toBe('provider_timeout');
    } finally {
      await quick.close();
    }
  });

  for (const provider of ['google', 'microsoft'] as const) {
    it(`${provider}: a create retried with its Idempotency-Key after a timeout makes one event, not two`, async () => {
      const quick = await createTestApp({ calendar: { ...t.config.calendar, timeoutMs: 300 } });
      try {
        const w = await createWorkspace(quick, { tier: 'advanced' });
        const cal = await connectCalendar(quick, w.admin.token, provider);
        // The provider makes the event but answers after we gave up.
        await fetch(`${quick.baseUrl}/_emulators/${provider}/faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ operation: 'events.insert', delayMs: 600, times: 1 }),
        });
        const payload = {
          calendar: cal.calendarId,
          draft: { title: `Retried ${provider}`, start: '2026-11-24T18:00:00Z', end: '2026-11-24T18:30:00Z' },
        };
        const send = () =>
          quick.request({
            method: 'POST',
            url: '/api/v1/calendar/events',
            token: w.admin.token,
            headers: { 'idempotency-key': `retry-${provider}` },
            payload,
          });
        expect((await send()).statusCode).toBe(504);
        await new Promise((resolve) => setTimeout(resolve, 900));
        const retried = await send();
        expect(retried.statusCode, retried.body).toBe(201);
        const listed = await quick.request({
          method: 'GET',
          url: `/api/v1/calendar/events?${new URLSearchParams(WEEK)}`,
          token: w.admin.token,
        });
        const mine = listed.json().items.filter((e: { title: string }) => e.title === `Retried ${provider}`);
        expect(mine).toHaveLength(1);
        expect(mine[0].id).toBe(retried.json().eventId);
        // Another key is another create.
        const other = await quick.request({
          method: 'POST',
          url: '/api/v1/calendar/events',
          token: w.admin.token,
          headers: { 'idempotency-key': `other-${provider}` },
          payload,
        });
        expect(other.statusCode).toBe(201);
        expect(other.json().eventId).not.toBe(retried.json().eventId);
      } finally {
        await quick.close();
      }
    });
  }
});

describe('all-day events are days, wherever they are written or read from', () => {
  const patchEvent = (event: string, draft: Record<string, unknown>) =>
    t.request({ method: 'PATCH', url: '/api/v1/calendar/events', token: ws.admin.token, payload: { event, draft } });

  it("a browser's local midnights are that zone's dates; 00:00Z is its own date; the day view shows the day only", async () => {
    // A browser in Berlin picks 18 March: it sends its local midnights (23:00Z the day before) and its zone.
    const berlin = await create(google.calendarId, {
      title: 'Berlin day off',
      start: '2026-03-17T23:00:00.000Z',
      end: '2026-03-18T23:00:00.000Z',
      timeZone: 'Europe/Berlin',
      allDay: true,
    });
    expect(berlin.statusCode, berlin.body).toBe(201);
    expect(berlin.json().event).toMatchObject({
      allDay: true,
      start: '2026-03-18T00:00:00.000Z',
      end: '2026-03-19T00:00:00.000Z',
    });
    // An API client names the days at 00:00Z, whatever the clinic's zone; a time within a day counts it in.
    const training = await create(google.calendarId, {
      title: 'Staff training',
      start: '2026-03-11T00:00:00Z',
      end: '2026-03-13T09:00:00Z',
      timeZone: 'America/Los_Angeles',
      allDay: true,
    });
    expect(training.statusCode, training.body).toBe(201);
    expect(training.json().event).toMatchObject({ start: '2026-03-11T00:00:00.000Z', end: '2026-03-14T00:00:00.000Z' });

    const day = async (date: string, timeZone: string) =>
      (
        await t.request({
          method: 'GET',
          url: `/api/v1/calendar/day?date=${date}&timeZone=${timeZone}`,
          token: ws.admin.token,
        })
      )
        .json()
        .events.map((e: { title: string }) => e.title)
        .filter((title: string) => title === 'Staff training');
    // Seen from New York, 10 March's window reaches into 11 March UTC: the event is still not on the 10th.
    expect(await day('2026-03-10', 'America/New_York')).toEqual([]);
    expect(await day('2026-03-11', 'America/New_York')).toEqual(['Staff training']);
    expect(await day('2026-03-13', 'Asia/Tokyo')).toEqual(['Staff training']);
    expect(await day('2026-03-14', 'Asia/Tokyo')).toEqual([]);

    // Moved by a browser in Los Angeles to its 20 March (local midnights: 07:00Z).
    const moved = await patchEvent(berlin.json().eventId, {
      start: '2026-03-20T07:00:00.000Z',
      end: '2026-03-21T07:00:00.000Z',
      timeZone: 'America/Los_Angeles',
      allDay: true,
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().event).toMatchObject({ start: '2026-03-20T00:00:00.000Z', end: '2026-03-21T00:00:00.000Z' });
  });

  it('a day out of what the calendar can show is 400, never a 500 (its bounds in a zone left the dates the database holds)', async () => {
    for (const [date, timeZone] of [
      ['0001-01-01', 'UTC'],
      ['0099-12-31', 'UTC'],
      ['9999-12-31', 'UTC'],
      ['9999-12-31', 'Pacific/Kiritimati'],
    ]) {
      const res = await t.request({
        method: 'GET',
        url: `/api/v1/calendar/day?date=${date}&timeZone=${timeZone}`,
        token: ws.admin.token,
      });
      expect(res.statusCode, `${date} ${timeZone}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'querystring.date', message: 'Use a year from 1000 to 9998' }],
      });
    }
    for (const date of ['1000-01-01', '9998-12-31']) {
      const res = await t.request({
        method: 'GET',
        url: `/api/v1/calendar/day?date=${date}&timeZone=UTC`,
        token: ws.admin.token,
      });
      expect(res.statusCode, `${date}: ${res.body}`).toBe(200);
    }
  });

  it('an all-day event must cover a day', async () => {
    const res = await create(google.calendarId, {
      title: 'Nothing',
      start: '2026-03-11T00:00:00Z',
      end: '2026-03-11T00:00:00Z',
      allDay: true,
    });
    expect(res.statusCode).toBe(422);
  });
});

/** The Zoom emulator's meetings, as it keeps them (all its accounts). */
const zoomMeetingRows = (app: TestApp) =>
  withSystem(app.app.atrium.db, (tx) =>
    queryRows<{ data: { meetings: { id: number; start_time: string; duration: number; topic: string }[] } }>(
      tx,
      sql`SELECT data FROM emulator_state WHERE emulator = 'zoom' AND data ? 'meetings'`,
    ),
  ).then((rows) => rows.flatMap((r) => r.data.meetings));

describe("a visit's Zoom meeting follows it", () => {
  const zoomDoc = () => zoomMeetingRows(t);
  const patchEvent = (event: string, draft: Record<string, unknown>) =>
    t.request({ method: 'PATCH', url: '/api/v1/calendar/events', token: ws.admin.token, payload: { event, draft } });

  it('moves with the visit, keeps its id when Zoom is asked for again, and goes (link and all) when video is removed', async () => {
    const made = await create(google.calendarId, {
      title: 'Zoom follow-up',
      start: '2026-11-27T15:00:00Z',
      end: '2026-11-27T15:30:00Z',
      conference: 'zoom',
      description: 'Bring the diary.',
    });
    expect(made.statusCode, made.body).toBe(201);
    const { eventId } = made.json();
    const joinUrl: string = made.json().event.conference.joinUrl;
    const meetingId = /\/j\/(\d+)/.exec(joinUrl)?.[1];
    const meeting = async () => (await zoomDoc()).find((m) => String(m.id) === meetingId);

    const moved = await patchEvent(eventId, {
      start: '2026-11-28T18:00:00Z',
      end: '2026-11-28T19:00:00Z',
      title: 'Zoom review',
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await meeting()).toMatchObject({ start_time: '2026-11-28T18:00:00Z', duration: 60, topic: 'Zoom review' });

    const again = await patchEvent(eventId, { conference: 'zoom' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().event.conference).toEqual({ product: 'zoom', joinUrl });

    const count = (await zoomDoc()).length;
    const removed = await patchEvent(eventId, { conference: null });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json().event.conference).toBeNull();
    expect(removed.json().event.location).toBeNull();
    expect(removed.json().event.description).toBe('Bring the diary.');
    expect(await meeting()).toBeUndefined();
    expect(await zoomDoc()).toHaveLength(count - 1);
  });

  it("one occurrence moved, renamed or taken off video leaves its series' meeting alone", async () => {
    const made = await create(google.calendarId, {
      title: 'Daily Zoom check-in',
      start: '2026-11-24T15:00:00Z',
      end: '2026-11-24T15:30:00Z',
      conference: 'zoom',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=4'],
    });
    expect(made.statusCode, made.body).toBe(201);
    const joinUrl: string = made.json().event.conference.joinUrl;
    const meetingId = /\/j\/(\d+)/.exec(joinUrl)?.[1];
    const meeting = async () => (await zoomDoc()).find((m) => String(m.id) === meetingId);
    const before = await meeting();
    expect(before).toMatchObject({ topic: 'Daily Zoom check-in' });
    const occurrences = (await list())
      .json()
      .items.filter((e: { recurringEventId: string | null }) => e.recurringEventId === made.json().eventId);
    expect(occurrences).toHaveLength(4);
    const second = occurrences[1].id;

    expect((await patchEvent(second, { title: 'Just this one' })).statusCode).toBe(200);
    const moved = await patchEvent(second, { start: '2026-11-25T18:00:00Z', end: '2026-11-25T18:30:00Z' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(await meeting()).toEqual(before);

    const unlinked = await patchEvent(second, { conference: null });
    expect(unlinked.statusCode, unlinked.body).toBe(200);
    expect(unlinked.json().event.conference).toBeNull();
    expect(unlinked.json().event.location).toBeNull();
    expect(await meeting()).toEqual(before);
    const others = (await list())
      .json()
      .items.filter(
        (e: { id: string; recurringEventId: string | null }) =>
          e.recurringEventId === made.json().eventId && e.id !== second,
      );
    expect(others).toHaveLength(3);
    for (const e of others) expect(e.conference).toEqual({ product: 'zoom', joinUrl });

    // An occurrence never changed before (no row of its own) taken off video loses the series' link too.
    const third = others.find((e: { start: string }) => e.start.startsWith('2026-11-26'));
    const plain = await patchEvent(third.id, { conference: null });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.json().event.conference).toBeNull();
    expect(plain.json().event.location).toBeNull();
    expect(plain.json().event.description ?? '').not.toContain('/j/');
    expect(await meeting()).toEqual(before);
  });
});

describe('a Zoom visit whose calendar write timed out', () => {
  const zoomMeetings = (app: TestApp) => zoomMeetingRows(app).then((meetings) => meetings.map((m) => String(m.id)));

  it("a keyed retry with another time meets in the first attempt's meeting, moved to the event now made", async () => {
    const quick = await createTestApp();
    try {
      const w = await createWorkspace(quick, { tier: 'advanced' });
      const cal = await connectCalendar(quick, w.admin.token, 'google');
      // The first attempt meets an outage (was it made? unknown): its meeting is kept and recorded.
      await fetch(`${quick.baseUrl}/_emulators/google/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation: 'events.insert', status: 503, times: 3 }),
      });
      const send = (start: string, end: string, title = 'Moved on retry') =>
        quick.request({
          method: 'POST',
          url: '/api/v1/calendar/events',
          token: w.admin.token,
          headers: { 'idempotency-key': 'zoom-moved' },
          payload: { calendar: cal.calendarId, draft: { title, start, end, conference: 'zoom' } },
        });
      expect((await send('2026-11-24T18:00:00Z', '2026-11-24T18:30:00Z')).statusCode).toBe(502);
      await fetch(`${quick.baseUrl}/_emulators/google/faults`, { method: 'DELETE' });
      const first = await zoomMeetings(quick);
      expect(first).toHaveLength(1);

      const retried = await send('2026-11-24T19:00:00Z', '2026-11-24T20:00:00Z', 'Renamed on retry');
      expect(retried.statusCode, retried.body).toBe(201);
      expect(retried.json().event.conference.joinUrl).toContain(`/j/${first[0]}?`);
      const [meeting] = await zoomMeetingRows(quick);
      expect(meeting).toMatchObject({ start_time: '2026-11-24T19:00:00Z', duration: 60, topic: 'Renamed on retry' });
      expect(await zoomMeetings(quick)).toEqual(first);
    } finally {
      await quick.close();
    }
  });

  it("keeps the meeting the event names, also when a keyed retry gets back the first attempt's event", async () => {
    const quick = await createTestApp({ calendar: { ...t.config.calendar, timeoutMs: 300 } });
    try {
      const w = await createWorkspace(quick, { tier: 'advanced' });
      const cal = await connectCalendar(quick, w.admin.token, 'google');
      // The provider makes the event (with the first meeting's link in it) but answers after we gave up.
      await fetch(`${quick.baseUrl}/_emulators/google/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation: 'events.insert', delayMs: 600, times: 1 }),
      });
      const send = () =>
        quick.request({
          method: 'POST',
          url: '/api/v1/calendar/events',
          token: w.admin.token,
          headers: { 'idempotency-key': 'zoom-retry' },
          payload: {
            calendar: cal.calendarId,
            draft: {
              title: 'Zoom retried',
              start: '2026-11-24T18:00:00Z',
              end: '2026-11-24T18:30:00Z',
              conference: 'zoom',
            },
          },
        });
      expect((await send()).statusCode).toBe(504);
      await new Promise((resolve) => setTimeout(resolve, 900));
      const afterTimeout = await zoomMeetings(quick);
      // The outcome was unknown: the meeting was not deleted under an event that may name it.
      expect(afterTimeout).toHaveLength(1);

      const retried = await send();
      expect(retried.statusCode, retried.body).toBe(201);
      const joinUrl: string = retried.json().event.conference.joinUrl;
      expect(joinUrl).toContain(`/j/${afterTimeout[0]}?`);
      // The meeting made for the retry is gone; the one the event names is the one kept.
      expect(await zoomMeetings(quick)).toEqual(afterTimeout);
      const listed = await quick.request({
        method: 'GET',
        url: `/api/v1/calendar/events?${new URLSearchParams(WEEK)}`,
        token: w.admin.token,
      });
      const mine = listed.json().items.filter((e: { title: string }) => e.title === 'Zoom retried');
      expect(mine).toHaveLength(1);
      expect(mine[0].conference).toMatchObject({ product: 'zoom', joinUrl });
      const [row] = await withSystem(quick.app.atrium.db, (tx) =>
        queryRows<{ zoom_meeting_id: string }>(
          tx,
          sql`SELECT zoom_meeting_id FROM calendar_appointments WHERE workspace_id = ${w.id}`,
        ),
      );
      expect(row?.zoom_meeting_id).toBe(afterTimeout[0]);

      // A refusal is final: the meeting made for it goes.
      await fetch(`${quick.baseUrl}/_emulators/google/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation: 'events.insert', status: 403, times: 1 }),
      });
      const refused = await quick.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: w.admin.token,
        payload: {
          calendar: cal.calendarId,
          draft: { title: 'Refused', start: '2026-11-25T18:00:00Z', end: '2026-11-25T18:30:00Z', conference: 'zoom' },
        },
      });
      expect(refused.statusCode).toBeGreaterThanOrEqual(400);
      expect(refused.statusCode).toBeLessThan(500);
      expect(await zoomMeetings(quick)).toEqual(afterTimeout);
    } finally {
      await quick.close();
    }
  });
});

describe("another clinic's Zoom meeting", () => {
  it("is never adopted from an event's text, however the event came to be: a keyed create keeps its own meeting", async () => {
    // An app of its own: the emulators' tokens minted here are not expired by the other tests' expire-tokens.
    const app = await createTestApp();
    const makeEvent = (calendar: string, draft: Record<string, unknown>, token: string, headers = {}) =>
      app.request({ method: 'POST', url: '/api/v1/calendar/events', token, headers, payload: { calendar, draft } });
    try {
      // The victim: a Zoom visit in another workspace.
      const victim = await createWorkspace(app, { tier: 'advanced' });
      const victimCal = await connectCalendar(app, victim.admin.token, 'google', `victim-${victim.id}@google.example`);
      const visit = await makeEvent(
        victimCal.calendarId,
        { title: 'Victim visit', start: '2026-11-27T15:00:00Z', end: '2026-11-27T15:30:00Z', conference: 'zoom' },
        victim.admin.token,
      );
      expect(visit.statusCode, visit.body).toBe(201);
      const victimUrl: string = visit.json().event.conference.joinUrl;
      const victimMeeting = /\/j\/(\d+)/.exec(victimUrl)?.[1] as string;

      // The attacker owns their calendar at the provider and plants, under the id Atrium derives for a keyed
      // create, an event naming the victim's meeting.
      const mallory = await createWorkspace(app, { tier: 'advanced' });
      const email = `mallory-${mallory.id}@google.example`;
      const cal = await connectCalendar(app, mallory.admin.token, 'google', email);
      const clientKey = createHash('sha256')
        .update(`${mallory.id}|${mallory.admin.userId}|${cal.calendarId}|POST /api/v1/calendar/events|attack1`)
        .digest('hex');
      const planted = await fetch(`${app.baseUrl}/_emulators/google/calendar/v3/calendars/primary/events`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${mintEmulatorTokens('google', email).access_token}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          id: clientKey,
          summary: 'Planted',
          description: `see ${victimUrl}`,
          location: victimUrl,
          start: { dateTime: '2026-11-27T16:00:00Z' },
          end: { dateTime: '2026-11-27T16:30:00Z' },
        }),
      });
      expect(planted.status).toBe(200);

      const made = await makeEvent(
        cal.calendarId,
        { title: 'Mine', start: '2026-11-27T16:00:00Z', end: '2026-11-27T16:30:00Z', conference: 'zoom' },
        mallory.admin.token,
        { 'idempotency-key': 'attack1' },
      );
      expect(made.statusCode, made.body).toBe(201);
      const mine: string = made.json().event.conference.joinUrl;
      expect(mine).not.toBe(victimUrl);
      // Taking it off video deletes the attacker's own meeting, never the victim's.
      const off = await app.request({
        method: 'PATCH',
        url: '/api/v1/calendar/events',
        token: mallory.admin.token,
        payload: { event: made.json().eventId, draft: { conference: null } },
      });
      expect(off.statusCode, off.body).toBe(200);
      const meetings = (await zoomMeetingRows(app)).map((m) => String(m.id));
      expect(meetings).toContain(victimMeeting);
      expect(meetings).not.toContain(/\/j\/(\d+)/.exec(mine)?.[1]);
    } finally {
      await app.close();
    }
  });
});

describe('another workspace', () => {
  it("refuses another workspace's event and calendar ids with 404 and reads none of its tokens", async () => {
    const made = await create(google.calendarId, {
      title: 'Private',
      start: '2026-11-28T14:00:00Z',
      end: '2026-11-28T15:00:00Z',
    });
    const { eventId } = made.json();
    const intruder = await createWorkspace(t, { tier: 'advanced' });
    await connectCalendar(t, intruder.admin.token, 'google', `i-${intruder.id}@google.example`);
    const before = (await tokenRows(ws.id)).length;
    const patch = await t.request({
      method: 'PATCH',
      url: '/api/v1/calendar/events',
      token: intruder.admin.token,
      payload: { event: eventId, draft: { title: 'mine now' } },
    });
    expect(patch.statusCode).toBe(404);
    const del = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/events?event=${eventId}`,
      token: intruder.admin.token,
    });
    expect(del.statusCode).toBe(404);
    const into = await create(
      google.calendarId,
      { title: 'x', start: '2026-11-28T14:00:00Z', end: '2026-11-28T15:00:00Z' },
      intruder.admin.token,
    );
    expect(into.statusCode).toBe(404);
    const listed = await list(intruder.admin.token, { ...WEEK, calendar: google.calendarId });
    expect(listed.statusCode).toBe(404);
    const disconnect = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/connections/${google.connectionId}`,
      token: intruder.admin.token,
    });
    expect(disconnect.statusCode).toBe(404);
    expect((await tokenRows(ws.id)).length).toBe(before);
  });
});

describe('disconnect', () => {
  it('destroys the tokens and forgets the calendars', async () => {
    const w = await createWorkspace(t, { tier: 'advanced' });
    const cal = await connectCalendar(t, w.admin.token, 'microsoft', `d-${w.id}@microsoft.example`);
    const res = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/connections/${cal.connectionId}`,
      token: w.admin.token,
    });
    expect(res.statusCode).toBe(204);
    const rows = await withSystem(t.app.atrium.db, (tx) =>
      queryRows(tx, sql`SELECT id FROM oauth_connections WHERE workspace_id = ${w.id}`),
    );
    expect(rows).toEqual([]);
    const cals = await t.request({ method: 'GET', url: '/api/v1/calendar/calendars', token: w.admin.token });
    expect(cals.json().items).toEqual([]);
  });
});
