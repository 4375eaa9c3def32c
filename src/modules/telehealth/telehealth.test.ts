// Telehealth rooms end to end: a calendar event with video asks for a room in its own transaction,
// the pre-warm job makes it at the video emulator (retried after a failure, never failing the
// calendar write), the event shows the join link, start and end emit meeting.started/ended.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { runDueJobs } from '../../platform/jobs/index.js';
import { stunBinding } from '../../platform/net/stun.js';
import { upstreamStats } from '../../platform/upstream/index.js';
import { localStunUrl } from './index.js';
import { prewarmRoomJob } from './service.js';

let t: TestApp;
let ws: TestWorkspace;
let calendar: string;

const prewarm = () => runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [prewarmRoomJob] });
const req = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token: ws.admin.token, payload: payload as Record<string, unknown> });
const listed = async (eventId: string) =>
  (await req('GET', '/calendar/events?timeMin=2026-12-14T00:00:00Z&timeMax=2026-12-21T00:00:00Z'))
    .json()
    .items.find((e: { id: string }) => e.id === eventId);

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  calendar = (await connectCalendar(t, ws.admin.token, 'google', `tele-${ws.id}@google.example`)).calendarId;
}, 60_000);
afterAll(async () => t?.close());

describe('telehealth rooms', () => {
  it('pre-warms a room for a video visit, shows its link on the event, starts and ends it', async () => {
    await fetch(`${t.baseUrl}/_emulators/video/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'rooms.create', status: 503 }),
    });
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: { title: 'Video visit', start: '2026-12-15T15:00:00Z', end: '2026-12-15T15:30:00Z', conference: 'meet' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const eventId = made.json().eventId;
    expect((await listed(eventId)).telehealth).toBeNull();

    // First attempt meets the injected failure; the job is retried later and succeeds.
    await prewarm();
    expect((await listed(eventId)).telehealth).toBeNull();
    await withSystem(t.app.atrium.db, (tx) =>
      tx.execute(sql`UPDATE jobs SET run_at = now() WHERE type = 'telehealth.prewarm-room'`),
    );
    await prewarm();
    const { telehealth } = await listed(eventId);
    expect(telehealth.joinUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_emulators\/video\/r\/[0-9a-f]+$/);

    const room = await req('GET', `/telehealth/rooms/${telehealth.roomId}`);
    expect(room.json()).toMatchObject({ id: telehealth.roomId, eventId, status: 'warm' });
    const started = await req('POST', `/telehealth/rooms/${telehealth.roomId}/start`);
    expect(started.json()).toMatchObject({ status: 'live' });
    expect(started.json().startedAt).toBeTruthy();
    const ended = await req('POST', `/telehealth/rooms/${telehealth.roomId}/end`);
    expect(ended.json()).toMatchObject({ status: 'ended' });
    expect((await req('POST', `/telehealth/rooms/${telehealth.roomId}/start`)).json().code).toBe('room_ended');

    const events = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ type: string; data: { roomId: string; eventId: string } }>(
        tx,
        sql`SELECT type, data FROM domain_events WHERE workspace_id = ${ws.id} AND type LIKE 'meeting.%' ORDER BY id`,
      ),
    );
    expect(events.map((e) => [e.type, e.data.roomId, e.data.eventId])).toEqual([
      ['meeting.started', telehealth.roomId, eventId],
      ['meeting.ended', telehealth.roomId, eventId],
    ]);
  });

  it("a repeating visit's room serves every occurrence: ending one meeting readies it for the next", async () => {
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: {
        title: 'Weekly video check-in',
        start: '2026-12-14T16:00:00Z',
        end: '2026-12-14T16:30:00Z',
        timeZone: 'America/New_York',
        conference: 'meet',
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    await prewarm();
    const week = async () =>
      (await req('GET', '/calendar/events?timeMin=2026-12-14T00:00:00Z&timeMax=2027-01-04T00:00:00Z'))
        .json()
        .items.filter((e: { recurringEventId: string | null }) => e.recurringEventId === made.json().eventId);
    const before = await week();
    expect(before).toHaveLength(3);
    const roomId = before[0].telehealth.roomId;
    expect(new Set(before.map((e: { telehealth: { roomId: string } }) => e.telehealth?.roomId))).toEqual(
      new Set([roomId]),
    );
    expect((await req('POST', `/telehealth/rooms/${roomId}/start`)).json().status).toBe('live');
    const ended = await req('POST', `/telehealth/rooms/${roomId}/end`);
    expect(ended.json()).toMatchObject({ status: 'warm' });
    expect(ended.json().endedAt).toBeTruthy();
    // Next week's visit still has its link, and the room starts again.
    expect((await week()).map((e: { telehealth: { roomId: string } | null }) => e.telehealth?.roomId)).toEqual([
      roomId,
      roomId,
      roomId,
    ]);
    expect((await req('POST', `/telehealth/rooms/${roomId}/start`)).json().status).toBe('live');
  });

  it('cancelling a video visit ends its room: it cannot be started any more', async () => {
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: {
        title: 'Cancelled visit',
        start: '2026-12-17T15:00:00Z',
        end: '2026-12-17T15:30:00Z',
        conference: 'meet',
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    await prewarm();
    const { telehealth } = await listed(made.json().eventId);
    expect(telehealth.roomId).toBeTruthy();
    const cancel = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/events?event=${encodeURIComponent(made.json().eventId)}`,
      token: ws.admin.token,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    expect((await req('GET', `/telehealth/rooms/${telehealth.roomId}`)).json().status).toBe('ended');
    const start = await req('POST', `/telehealth/rooms/${telehealth.roomId}/start`);
    expect([start.statusCode, start.json().code]).toEqual([409, 'room_ended']);
  });

  it('a visit cancelled before its room was made gets none made at the provider', async () => {
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: {
        title: 'Soon cancelled',
        start: '2026-12-18T15:00:00Z',
        end: '2026-12-18T15:30:00Z',
        conference: 'meet',
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const cancel = await t.request({
      method: 'DELETE',
      url: `/api/v1/calendar/events?event=${encodeURIComponent(made.json().eventId)}`,
      token: ws.admin.token,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const calls = () => upstreamStats('video').count;
    const before = calls();
    await prewarm();
    expect(calls()).toBe(before);
    const [room] = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ status: string; provider_room_id: string | null }>(
        tx,
        sql`SELECT r.status, r.provider_room_id FROM telehealth_rooms r
             WHERE r.workspace_id = ${ws.id} AND r.event_id = ${made.json().eventId}`,
      ),
    );
    expect(room).toEqual({ status: 'ended', provider_room_id: null });
  });

  it('a room still being prepared cannot start yet; an event without video gets none', async () => {
    const made = await req('POST', '/calendar/events', {
      calendar,
      draft: { title: 'Video visit 2', start: '2026-12-16T15:00:00Z', end: '2026-12-16T15:30:00Z', conference: 'meet' },
    });
    const [room] = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ id: string }>(
        tx,
        sql`SELECT id FROM telehealth_rooms WHERE workspace_id = ${ws.id} AND status = 'pending'`,
      ),
    );
    const early = await req('POST', `/telehealth/rooms/${room.id}/start`);
    expect([early.statusCode, early.json().code]).toEqual([409, 'room_not_ready']);
    expect(made.statusCode).toBe(201);
    const plain = await req('POST', '/calendar/events', {
      calendar,
      draft: { title: 'In person', start: '2026-12-17T15:00:00Z', end: '2026-12-17T15:30:00Z' },
    });
    await prewarm();
    expect((await listed(plain.json().eventId)).telehealth).toBeNull();
    expect((await req('GET', '/telehealth/rooms/room_unknown')).statusCode).toBe(404);
  });

  it("the video emulator's STUN responder answers Binding requests; a stun.binding fault refuses or drops them", async () => {
    const url = (await t.request({ method: 'GET', url: '/_emulators/video/stun' })).json().url as string;
    expect(url).toBe(localStunUrl(t.app.atrium));
    expect(await stunBinding(url, { timeoutMs: 2_000 })).toMatchObject({ address: '127.0.0.1' });
    const inject = (fault: Record<string, unknown>) =>
      t.request({ method: 'POST', url: '/_emulators/video/faults', payload: { operation: 'stun.binding', ...fault } });
    // With a status: a Binding error response of that code.
    expect((await inject({ status: 503, times: 1 })).statusCode).toBe(201);
    await expect(stunBinding(url, { timeoutMs: 2_000 })).rejects.toThrow(/refused: 503/);
    // With only a delay: no answer at all.
    expect((await inject({ delayMs: 1, times: 100 })).statusCode).toBe(201);
    await expect(stunBinding(url, { timeoutMs: 500 })).rejects.toThrow(/No STUN answer/);
    await t.request({ method: 'DELETE', url: '/_emulators/video/faults' });
    expect((await stunBinding(url, { timeoutMs: 2_000 })).address).toBe('127.0.0.1');
  });
});
