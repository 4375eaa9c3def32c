// Telehealth rooms: asked for in the calendar's transaction (a row and an outbox job, so the
// calendar write never waits for or fails on the video provider), pre-warmed by the job with
// retries, started and ended by the clinician (meeting.started / meeting.ended).

import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { inList } from '../../platform/db/lists.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { defineJob, enqueueJob } from '../../platform/jobs/index.js';
import type { AppDeps } from '../../platform/types.js';
import { telehealthRooms } from './tables.js';
import { resolveVideo } from './video.js';

export interface Room {
  id: string;
  eventId: string;
  status: 'pending' | 'warm' | 'live' | 'ended';
  joinUrl: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

type Row = typeof telehealthRooms.$inferSelect;
const present = (r: Row): Room => ({
  id: r.id,
  eventId: r.eventId,
  status: r.status,
  joinUrl: r.joinUrl,
  startedAt: r.startedAt?.toISOString() ?? null,
  endedAt: r.endedAt?.toISOString() ?? null,
});

export const prewarmRoomJob = defineJob({
  type: 'telehealth.prewarm-room',
  schema: z.object({ roomId: z.string() }),
  maxAttempts: 10,
  backoff: { baseMs: 2_000, maxMs: 5 * 60_000 },
  async handler(job, payload) {
    const ctx = { workspaceId: job.workspaceId! };
    const [row] = await withTenant(job.deps.db, ctx, (tx) =>
      tx
        .select()
        .from(telehealthRooms)
        .where(and(eq(telehealthRooms.workspaceId, ctx.workspaceId), eq(telehealthRooms.id, payload.roomId))),
    );
    // Made already, or no longer wanted (the visit was cancelled while it waited).
    if (!row || row.providerRoomId || row.status !== 'pending') return;
    const video = resolveVideo(job.deps);
    if (!video) throw new Error('No video provider is configured');
    const made = await video.createRoom(`atrium-${row.id}`, job.requestId);
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
});

/**
 * Asks for a room for the event, in the caller's transaction (idempotent per event). A series'
 * room is `standing`: its occurrences all meet in it, and ending one meeting readies it for the next.
 */
export async function requestRoom(
  tx: Tx,
  workspaceId: string,
  eventId: string,
  options: { standing?: boolean } = {},
): Promise<void> {
  const inserted = await tx
    .insert(telehealthRooms)
    .values({ workspaceId, id: newId('room'), eventId, standing: options.standing ?? false })
    .onConflictDoNothing()
    .returning({ id: telehealthRooms.id });
  if (inserted[0]) await enqueueJob(tx, prewarmRoomJob, { roomId: inserted[0].id }, { workspaceId });
}

/** The rooms with a join link of these events, by event id. */
export async function roomsForEvents(tx: Tx, workspaceId: string, eventIds: string[]) {
  if (eventIds.length === 0) return new Map<string, { roomId: string; joinUrl: string }>();
  const rows = await tx
    .select()
    .from(telehealthRooms)
    .where(and(eq(telehealthRooms.workspaceId, workspaceId), inList(telehealthRooms.eventId, eventIds)));
  return new Map(
    rows
      .filter((r) => r.joinUrl && r.status !== 'ended')
      .map((r) => [r.eventId, { roomId: r.id, joinUrl: r.joinUrl! }]),
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

/** warm → live (meeting.started); a room still being prepared is 409 `room_not_ready`. */
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
        inList(telehealthRooms.status, ['pending', 'warm']),
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
