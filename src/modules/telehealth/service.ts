// Telehealth rooms: asked for in the calendar's transaction (a row and an outbox job, so the
// calendar write never waits for or fails on the video provider), pre-warmed by the job with
// retries until the visit no longer needs the room (then `failed`, with an inbox notice), started and
// ended by the clinician (meeting.started / meeting.ended).

import { and, eq, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { inList } from '../../platform/db/lists.js';
import { queryRows, withSystem, withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import {
  type DeadJob,
  defineJob,
  enqueueJob,
  insertJobsSql,
  JOBS_CHANNEL,
  PermanentJobError,
} from '../../platform/jobs/index.js';
import type { AppDeps } from '../../platform/types.js';
import { postInboxNotice } from '../webhooks/index.js';
import { telehealthRooms } from './tables.js';
import { resolveVideo } from './video.js';

export interface Room {
  id: string;
  eventId: string;
  status: 'pending' | 'warm' | 'live' | 'ended' | 'failed';
  joinUrl: string | null;
  /** Why a `failed` room could not be made; null otherwise. */
  failureReason: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

type Row = typeof telehealthRooms.$inferSelect;
const present = (r: Row): Room => ({
  id: r.id,
  eventId: r.eventId,
  status: r.status,
  joinUrl: r.joinUrl,
  failureReason: r.status === 'failed' ? r.failureReason : null,
  startedAt: r.startedAt?.toISOString() ?? null,
  endedAt: r.endedAt?.toISOString() ?? null,
});

/**
 * Whether a room is past the time it is worth retrying: the visit's end, or a week after it was asked for
 * when the caller did not say (SQL over telehealth_rooms, on the database's clock).
 */
const OVERDUE = sql<boolean>`coalesce(${telehealthRooms.neededUntil}, ${telehealthRooms.createdAt} + interval '7 days') <= now()`;

export const prewarmRoomJob = defineJob({
  type: 'telehealth.prewarm-room',
  schema: z.object({ roomId: z.string() }),
  // A provider outage of any length: retried at most 5 minutes apart for as long as the visit needs the
  // room; past that, the failure is final (PermanentJobError → onDead marks the room failed). A job that
  // runs out of attempts first (~1 day) leaves the room pending, and the sweep queues a fresh one.
  maxAttempts: 300,
  backoff: { baseMs: 2_000, maxMs: 5 * 60_000 },
  async handler(job, payload) {
    const ctx = { workspaceId: job.workspaceId! };
    const [found] = await withTenant(job.deps.db, ctx, (tx) =>
      tx
        .select({ row: telehealthRooms, overdue: OVERDUE })
        .from(telehealthRooms)
        .where(and(eq(telehealthRooms.workspaceId, ctx.workspaceId), eq(telehealthRooms.id, payload.roomId))),
    );
    const row = found?.row;
    // Made already, or no longer wanted (the visit was cancelled while it waited).
    if (!row || row.providerRoomId || row.status !== 'pending') return;
    let made: { providerRoomId: string; joinUrl: string };
    try {
      const video = resolveVideo(job.deps);
      if (!video) throw new Error('No video provider is configured');
      made = await video.createRoom(`atrium-${row.id}`, job.requestId);
    } catch (err) {
      // Tried at least once even when asked for late; after the visit's end, no more.
      if (found.overdue) throw new PermanentJobError(`gave up: ${(err as Error)?.message ?? String(err)}`);
      throw err;
    }
    const kept = await withTenant(job.deps.db, ctx, (tx) =>
      tx
        .update(telehealthRooms)
        .set({ providerRoomId: made.providerRoomId, joinUrl: made.joinUrl, status: 'warm', attempts: job.attempt })
        .where(
          and(
            eq(telehealthRooms.workspaceId, ctx.workspaceId),
            eq(telehealthRooms.id, row.id),
            eq(telehealthRooms.status, 'pending'),
          ),
        )
        .returning({ id: telehealthRooms.id }),
    );
    // Cancelled while the provider made it: the room is closed there too, not left open.
    if (kept.length === 0) await closeProviderRooms(job.deps, job.log, [made.providerRoomId]);
  },
  onDead: markRoomFailed,
});

/**
 * The pre-warm job is dead: a room past its time is marked `failed` with the reason, and the workspace's
 * admins get an inbox notice (in the runner's transaction, system scope). One still needed (the job ran out
 * of attempts first) stays pending for the sweep to queue a new job.
 */
async function markRoomFailed(tx: Tx, dead: DeadJob): Promise<void> {
  const roomId = (dead.payload as { roomId?: unknown } | null)?.roomId;
  if (!dead.workspaceId || typeof roomId !== 'string') return;
  const reason = dead.error.replace(/^gave up: /, '').slice(0, 500) || 'unknown error';
  const [failed] = await tx
    .update(telehealthRooms)
    .set({ status: 'failed', failureReason: reason, attempts: dead.attempts })
    .where(
      and(
        eq(telehealthRooms.workspaceId, dead.workspaceId),
        eq(telehealthRooms.id, roomId),
        eq(telehealthRooms.status, 'pending'),
        isNull(telehealthRooms.providerRoomId),
        OVERDUE,
      ),
    )
    .returning({ eventId: telehealthRooms.eventId });
  if (!failed) return;
  await postInboxNotice(tx, dead.workspaceId, {
    kind: 'telehealth.room_failed',
    eventType: 'telehealth.room_failed',
    eventId: failed.eventId,
    message: `The video room ${roomId} of event ${failed.eventId} could not be made: ${reason}`,
  });
}

/**
 * The sweep (every few minutes, on one instance): every pending room without a queued or running pre-warm
 * job (it died before this sweep existed, ran out of attempts, or was lost) gets a new one, which makes the
 * room or, past its time, marks it failed. Answers how many it queued.
 */
export async function requeueStalledRooms(deps: Pick<AppDeps, 'db'>, limit = 500): Promise<number> {
  // System scope: a sweep across workspaces, like the job worker's claim.
  return withSystem(deps.db, async (tx) => {
    const rows = await queryRows<{ id: string }>(
      tx,
      sql`WITH stalled AS (
            SELECT r.workspace_id, r.id FROM telehealth_rooms r
             WHERE r.status = 'pending' AND r.provider_room_id IS NULL
               AND NOT EXISTS (SELECT 1 FROM jobs j
                                WHERE j.workspace_id = r.workspace_id AND j.type = ${prewarmRoomJob.type}
                                  AND j.status IN ('queued', 'running') AND j.payload->>'roomId' = r.id)
             ORDER BY r.created_at LIMIT ${limit}
          ), added AS (
            ${insertJobsSql(
              prewarmRoomJob,
              sql`SELECT workspace_id, jsonb_build_object('roomId', id), id, NULL::text FROM stalled`,
            )}
          )
          SELECT id FROM added`,
    );
    if (rows.length > 0) await tx.execute(sql`SELECT pg_notify(${JOBS_CHANNEL}, ${prewarmRoomJob.type})`);
    return rows.length;
  });
}

/**
 * Asks for a room for the event, in the caller's transaction (idempotent per event). A series'
 * room is `standing`: its occurrences all meet in it, and ending one meeting readies it for the next.
 * `until`: when the visit is over (the event's end; a series' last one), the time after which a room the
 * provider could not make is given up as `failed`; without it, a week from now.
 */
export async function requestRoom(
  tx: Tx,
  workspaceId: string,
  eventId: string,
  options: { standing?: boolean; until?: Date } = {},
): Promise<void> {
  const inserted = await tx
    .insert(telehealthRooms)
    .values({
      workspaceId,
      id: newId('room'),
      eventId,
      standing: options.standing ?? false,
      neededUntil: options.until ?? null,
    })
    .onConflictDoNothing()
    .returning({ id: telehealthRooms.id });
  const roomId = inserted[0]?.id;
  if (roomId) await enqueueJob(tx, prewarmRoomJob, { roomId }, { workspaceId, dedupeKey: roomId });
}

/** An event's room as event lists show it: its state, and the join link once it has one. */
export interface EventRoom {
  roomId: string;
  status: 'pending' | 'warm' | 'live' | 'failed';
  joinUrl: string | null;
  failureReason: string | null;
}

/** The rooms of these events that are not ended, by event id. */
export async function roomsForEvents(tx: Tx, workspaceId: string, eventIds: string[]) {
  if (eventIds.length === 0) return new Map<string, EventRoom>();
  const rows = await tx
    .select()
    .from(telehealthRooms)
    .where(and(eq(telehealthRooms.workspaceId, workspaceId), inList(telehealthRooms.eventId, eventIds)));
  return new Map(
    rows
      .filter((r): r is Row & { status: EventRoom['status'] } => r.status !== 'ended')
      .map((r): [string, EventRoom] => [
        r.eventId,
        {
          roomId: r.id,
          status: r.status,
          joinUrl: r.joinUrl,
          failureReason: r.status === 'failed' ? r.failureReason : null,
        },
      ]),
  );
}

export async function getRoom(deps: AppDeps, ctx: RequestContext, id: string): Promise<Room> {
  const [row] = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(telehealthRooms)
      .where(and(eq(telehealthRooms.workspaceId, ctx.workspaceId), eq(telehealthRooms.id, id))),
  );
  if (!row) throw notFound('Room');
  return present(row);
}

/**
 * warm → live (meeting.started); a room still being prepared is 409 `room_not_ready`, one that could not
 * be made 409 `room_failed` (with `reason`).
 */
export async function startRoom(deps: AppDeps, ctx: RequestContext, id: string): Promise<Room> {
  return withTenant(deps.db, ctx, async (tx) => {
    const [row] = await tx
      .select()
      .from(telehealthRooms)
      .where(and(eq(telehealthRooms.workspaceId, ctx.workspaceId), eq(telehealthRooms.id, id)))
      .for('update');
    if (!row) throw notFound('Room');
    if (row.status === 'live') return present(row);
    if (row.status === 'pending')
      throw new AppError('room_not_ready', 409, 'The video room is still being prepared; try again in a moment');
    if (row.status === 'ended') throw new AppError('room_ended', 409, 'This visit has ended');
    if (row.status === 'failed')
      throw new AppError('room_failed', 409, 'The video room for this visit could not be made', {
        reason: row.failureReason,
      });
    const [live] = await tx
      .update(telehealthRooms)
      .set({ status: 'live', startedAt: sql`now()` })
      .where(and(eq(telehealthRooms.workspaceId, ctx.workspaceId), eq(telehealthRooms.id, id)))
      .returning();
    await publishEvent(tx, ctx, 'meeting.started', { roomId: id, eventId: row.eventId, startedBy: ctx.userId });
    return present(live);
  });
}

/**
 * The visit these events were is cancelled: their rooms not yet in use end (a live meeting runs on
 * until it is ended), in the caller's transaction. Answers the provider's rooms to close after commit.
 */
export async function cancelRooms(tx: Tx, workspaceId: string, eventIds: string[]): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const rows = await tx
    .update(telehealthRooms)
    .set({ status: 'ended', endedAt: sql`now()` })
    .where(
      and(
        eq(telehealthRooms.workspaceId, workspaceId),
        inList(telehealthRooms.eventId, eventIds),
        inList(telehealthRooms.status, ['pending', 'warm', 'failed']),
      ),
    )
    .returning({ providerRoomId: telehealthRooms.providerRoomId });
  return rows.flatMap((r) => (r.providerRoomId ? [r.providerRoomId] : []));
}

/** Closes rooms at the video provider, best effort (after the commit that ended them). */
export async function closeProviderRooms(deps: AppDeps, log: RequestContext['log'], providerRoomIds: string[]) {
  const video = resolveVideo(deps);
  if (!video) return;
  await Promise.all(
    providerRoomIds.map((roomId) =>
      video
        .endRoom(roomId)
        .catch((err) => log.warn({ err, providerRoomId: roomId }, 'video room could not be closed at the provider')),
    ),
  );
}

/**
 * → ended (meeting.ended); the provider's room is closed after commit, best effort. A standing room
 * (a series') goes back to `warm` instead, for the series' next occurrence.
 */
export async function endRoom(deps: AppDeps, ctx: RequestContext, id: string): Promise<Room> {
  const room = await withTenant(deps.db, ctx, async (tx) => {
    const [row] = await tx
      .select()
      .from(telehealthRooms)
      .where(and(eq(telehealthRooms.workspaceId, ctx.workspaceId), eq(telehealthRooms.id, id)))
      .for('update');
    if (!row) throw notFound('Room');
    if (row.status === 'ended' || (row.standing && row.status !== 'live')) return row;
    const [ended] = await tx
      .update(telehealthRooms)
      .set({ status: row.standing ? 'warm' : 'ended', endedAt: sql`now()` })
      .where(and(eq(telehealthRooms.workspaceId, ctx.workspaceId), eq(telehealthRooms.id, id)))
      .returning();
    await publishEvent(tx, ctx, 'meeting.ended', { roomId: id, eventId: row.eventId, endedBy: ctx.userId });
    return ended;
  });
  if (room.providerRoomId && room.status === 'ended') await closeProviderRooms(deps, ctx.log, [room.providerRoomId]);
  return present(room);
}
