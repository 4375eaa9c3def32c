// Telehealth rooms end to end: a calendar event with video asks for a room in its own transaction,
// the pre-warm job makes it at the video emulator (retried after a failure, never failing the
// calendar write), the event shows the join link and the room's state, start and end emit meeting.started/ended.
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { runDueJobs } from '../../platform/jobs/index.js';
import { stunBinding } from '../../platform/net/stun.js';
import { resetBreakers, upstreamStats } from '../../platform/upstream/index.js';
import { localStunUrl } from './index.js';
import { probeRoomsUnended, telehealthMonitors } from './monitors.js';
import { prewarmRoomJob, requeueStalledRooms } from './service.js';

let t: TestApp;
let ws: TestWorkspace;
let calendar: string;

const prewarm = () => runDueJobs({ deps: t.app.atrium, log: t.app.log, jobs: [prewarmRoomJob] });
const req = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token: ws.admin.token, payload: payload as Record<string, unknown> });
const getStatus = async (roomId: string) => (await req('GET', `/telehealth/rooms/${roomId}`)).json().status;
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
    // The create's answer shows the room being prepared, as the list right after it does.
    expect(made.json().event.telehealthRoom).toEqual({
      roomId: expect.stringMatching(/^room_/),
      status: 'pending',
      failureReason: null,
    });
    expect(made.json().event.telehealthRoom).toEqual((await listed(eventId)).telehealthRoom);
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
    expect((await listed(eventId)).telehealthRoom).toEqual({
      roomId: telehealth.roomId,
      status: 'warm',
      failureReason: null,
    });
    const started = await req('POST', `/telehealth/rooms/${telehealth.roomId}/start`);
    expect(started.json()).toMatchObject({ status: 'live' });
    expect((await listed(eventId)).telehealthRoom).toMatchObject({ status: 'live' });
    expect(started.json().startedAt).toBeTruthy();
    const ended = await req('POST', `/telehealth/rooms/${telehealth.roomId}/end`);
    expect(ended.json()).toMatchObject({ status: 'ended' });
    expect((await req('POST', `/telehealth/rooms/${telehealth.roomId}/start`)).json().code).toBe('room_ended');
    expect(await listed(eventId)).toMatchObject({ telehealth: null, telehealthRoom: null });

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

  describe('through a video-provider outage', () => {
    const videoFaults = (fault?: Record<string, unknown>) =>
      fetch(`${t.baseUrl}/_emulators/video/faults`, {
        method: fault ? 'POST' : 'DELETE',
        headers: fault ? { 'content-type': 'application/json' } : {},
        body: fault ? JSON.stringify(fault) : undefined,
      });
    const sqlOn = (query: ReturnType<typeof sql>) => withSystem(t.app.atrium.db, (tx) => tx.execute(query));
    const roomOf = async (eventId: string) => {
      const [room] = await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ id: string; status: string; failure_reason: string | null }>(
          tx,
          sql`SELECT id, status, failure_reason FROM telehealth_rooms WHERE workspace_id = ${ws.id} AND event_id = ${eventId}`,
        ),
      );
      return room;
    };
    const jobsOf = (roomId: string) =>
      withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ status: string; attempts: number }>(
          tx,
          sql`SELECT status, attempts FROM jobs WHERE type = 'telehealth.prewarm-room' AND payload->>'roomId' = ${roomId}
               ORDER BY created_at`,
        ),
      );
    const visit = async (title: string, day: number) => {
      const made = await req('POST', '/calendar/events', {
        calendar,
        draft: {
          title,
          start: `2026-12-${day}T09:00:00Z`,
          end: `2026-12-${day}T09:30:00Z`,
          conference: 'meet',
        },
      });
      expect(made.statusCode, made.body).toBe(201);
      return made.json().eventId as string;
    };
    /** Makes the room's queued job due now, as if its backoff had passed (and `attempts` of them had failed). */
    const due = (roomId: string, attempts?: number) =>
      sqlOn(
        sql`UPDATE jobs SET run_at = now(), attempts = coalesce(${attempts ?? null}::int, attempts)
             WHERE type = 'telehealth.prewarm-room' AND status = 'queued' AND payload->>'roomId' = ${roomId}`,
      );

    afterEach(async () => {
      await videoFaults();
      resetBreakers();
    });

    it('keeps retrying past the old 10 attempts (~14 min) and makes the room once the provider is back', async () => {
      await videoFaults({ operation: 'rooms.create', status: 503, times: 1000 });
      const eventId = await visit('Outage visit', 21);
      const room = await roomOf(eventId);
      await prewarm();
      // The tenth failure used to be the last: the job went dead and the room stayed pending for good.
      await due(room.id, 9);
      await prewarm();
      expect(await jobsOf(room.id)).toEqual([{ status: 'queued', attempts: 10 }]);
      expect((await roomOf(eventId)).status).toBe('pending');

      await videoFaults();
      resetBreakers();
      await due(room.id);
      await prewarm();
      expect((await roomOf(eventId)).status).toBe('warm');
      const events = (await req('GET', '/calendar/events?timeMin=2026-12-21T00:00:00Z&timeMax=2026-12-22T00:00:00Z'))
        .json()
        .items.filter((e: { id: string }) => e.id === eventId);
      expect(events[0].telehealth).toMatchObject({ roomId: room.id, joinUrl: expect.stringContaining('/r/') });
    });

    it('a room the provider cannot make by the end of the visit is failed with the reason, and admins are told', async () => {
      await videoFaults({ operation: 'rooms.create', status: 503, times: 1000 });
      const eventId = await visit('Never made', 22);
      const room = await roomOf(eventId);
      await prewarm();
      expect((await roomOf(eventId)).status).toBe('pending');
      // A single visit's room is needed until the visit ends.
      const [needed] = await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ until: string }>(
          tx,
          sql`SELECT to_char(needed_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS until FROM telehealth_rooms WHERE id = ${room.id}`,
        ),
      );
      expect(needed.until).toBe('2026-12-22T09:30');
      // The visit is over: the next failure is the last.
      await sqlOn(sql`UPDATE telehealth_rooms SET needed_until = now() - interval '1 minute' WHERE id = ${room.id}`);
      await due(room.id);
      await prewarm();
      expect(await jobsOf(room.id)).toEqual([{ status: 'dead', attempts: 2 }]);
      const got = await req('GET', `/telehealth/rooms/${room.id}`);
      expect(got.json()).toMatchObject({ id: room.id, status: 'failed', joinUrl: null });
      expect(got.json().failureReason).toMatch(/video provider could not create a room/);
      const start = await req('POST', `/telehealth/rooms/${room.id}/start`);
      expect([start.statusCode, start.json().code]).toEqual([409, 'room_failed']);
      expect(start.json().reason).toBe(got.json().failureReason);
      const inbox = await withSystem(t.app.atrium.db, (tx) =>
        queryRows<{ kind: string; event_id: string; last_error: string }>(
          tx,
          sql`SELECT kind, event_id, last_error FROM inbox_items WHERE workspace_id = ${ws.id} AND kind = 'telehealth.room_failed'`,
        ),
      );
      expect(inbox).toEqual([
        { kind: 'telehealth.room_failed', event_id: eventId, last_error: expect.stringContaining(room.id) },
      ]);
      // The sweep leaves a failed room alone; cancelling the visit still ends it.
      expect(await requeueStalledRooms(t.app.atrium)).toBe(0);
      const cancel = await t.request({
        method: 'DELETE',
        url: `/api/v1/calendar/events?event=${encodeURIComponent(eventId)}`,
        token: ws.admin.token,
      });
      expect(cancel.statusCode, cancel.body).toBe(200);
      expect((await roomOf(eventId)).status).toBe('ended');
    });

    it("the event says its room's state: pending while the provider is out, failed with the reason once given up", async () => {
      await videoFaults({ operation: 'rooms.create', status: 503, times: 1000 });
      const eventId = await visit('Room state on the event', 25);
      const room = await roomOf(eventId);
      const onList = async () =>
        (await req('GET', '/calendar/events?timeMin=2026-12-25T00:00:00Z&timeMax=2026-12-26T00:00:00Z'))
          .json()
          .items.find((e: { id: string }) => e.id === eventId);
      // Asked for, not made yet: no link to join, but the event says the room is on its way.
      expect(await onList()).toMatchObject({
        telehealth: null,
        telehealthRoom: { roomId: room.id, status: 'pending', failureReason: null },
      });
      await prewarm();
      expect((await onList()).telehealthRoom).toEqual({ roomId: room.id, status: 'pending', failureReason: null });
      // Given up (the visit is over): the event says so, with the provider's reason, still without a link.
      await sqlOn(sql`UPDATE telehealth_rooms SET needed_until = now() - interval '1 minute' WHERE id = ${room.id}`);
      await due(room.id);
      await prewarm();
      const failed = await onList();
      expect(failed.telehealth).toBeNull();
      expect(failed.telehealthRoom).toEqual({
        roomId: room.id,
        status: 'failed',
        failureReason: (await req('GET', `/telehealth/rooms/${room.id}`)).json().failureReason,
      });
      expect(failed.telehealthRoom.failureReason).toMatch(/video provider could not create a room/);
    });

    it('video:room-creation asks the provider for a room at every run, and ends it: an outage and a recovery show at the next run', async () => {
      const probe = telehealthMonitors.find((p) => p.id === 'video:room-creation')!;
      const scheduled = () => probe.measure(t.app.atrium, { signal: new AbortController().signal, deep: false });
      const emulatorRoom = async (id: string) =>
        (
          await fetch(`${t.baseUrl}/_emulators/video/rooms/${id}`, {
            headers: { authorization: 'Bearer atrium-local' },
          })
        ).json() as Promise<{ status: string; name: string }>;
      // An outage 3 h ago, over since: 4 rooms the provider did not make, 1 it did.
      await sqlOn(sql`INSERT INTO telehealth_rooms (workspace_id, id, event_id, status, provider_room_id, created_at)
                      SELECT ${ws.id}, 'room_probe_old_' || i, 'evt_probe_old_' || i, CASE WHEN i = 0 THEN 'warm' ELSE 'failed' END,
                             CASE WHEN i = 0 THEN 'made_earlier' END, now() - interval '3 hours'
                        FROM generate_series(0, 4) AS i`);
      const healthy = await scheduled();
      expect(healthy, JSON.stringify(healthy)).toMatchObject({ status: 'pass', output: 'created and ended a room' });

      await videoFaults({ operation: 'rooms.create', status: 503, times: 1000 });
      const down = await scheduled();
      expect(down, JSON.stringify(down)).toMatchObject({ status: 'fail', observedValue: 503 });
      await videoFaults();
      expect((await scheduled()).status).toBe('pass');

      // A room made but not ended (the provider refuses the end) is reported, and ended at the next run.
      await videoFaults({ operation: 'rooms.end', status: 503, times: 1 });
      const unended = await scheduled();
      expect(unended.status, JSON.stringify(unended)).toBe('warn');
      const id = /room (\w+)/.exec(unended.output ?? '')?.[1];
      expect(id, unended.output).toBeTruthy();
      expect(await emulatorRoom(id!)).toMatchObject({ status: 'open', name: 'atrium-health-probe' });
      expect((await scheduled()).status).toBe('pass');
      expect(await emulatorRoom(id!)).toMatchObject({ status: 'ended' });

      // While the provider refuses every end, a run makes at most 2 end calls and at most 20 rooms are remembered
      // (not one end call per run since the outage).
      await videoFaults({ operation: 'rooms.end', status: 503, times: 1000 });
      for (let run = 0; run < 25; run++) await scheduled();
      expect(probeRoomsUnended().size).toBe(20);
      // Once ends work again, each run ends 2 of them (and its own room): drained in 10 runs, not in one burst.
      await videoFaults();
      await scheduled();
      expect(probeRoomsUnended().size).toBe(18);
      for (let run = 0; run < 9; run++) await scheduled();
      expect(probeRoomsUnended().size).toBe(0);
      // The probe asks nothing of the rooms table (the nightly run did this already).
      await sqlOn(sql`DELETE FROM telehealth_rooms WHERE id LIKE 'room_probe_old_%'`);
    });

    it('the sweep gives a pending room whose job died (or vanished) a new one', async () => {
      await videoFaults({ operation: 'rooms.create', status: 503, times: 1000 });
      const dead = await roomOf(await visit('Died before the fix', 23));
      const lost = await roomOf(await visit('Job lost', 24));
      await prewarm();
      // As the old 10-attempt job left them: dead with the room pending, or no job at all.
      await sqlOn(sql`UPDATE jobs SET status = 'dead' WHERE payload->>'roomId' = ${dead.id}`);
      await sqlOn(sql`DELETE FROM jobs WHERE payload->>'roomId' = ${lost.id}`);
      await videoFaults();
      resetBreakers();
      expect(await requeueStalledRooms(t.app.atrium)).toBe(2);
      // A second sweep adds nothing while those jobs are queued.
      expect(await requeueStalledRooms(t.app.atrium)).toBe(0);
      await prewarm();
      expect([await getStatus(dead.id), await getStatus(lost.id)]).toEqual(['warm', 'warm']);
    });
  });
});
