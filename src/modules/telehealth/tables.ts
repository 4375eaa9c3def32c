import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/**
 * A video room for a calendar event with conferencing: pre-warmed in the background (`warm`), then
 * `live` while the visit runs and `ended` after (a series' standing room goes back to `warm`). One room
 * per event (a series' occurrences share the series'). A room the provider never made by the time the
 * visit no longer needs it is `failed`, with the reason.
 */
export const telehealthRooms = pgTable(
  'telehealth_rooms',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    eventId: text('event_id').notNull(),
    /** Null until the video provider has made the room (the pre-warm job retries until it has or gives up). */
    providerRoomId: text('provider_room_id'),
    joinUrl: text('join_url'),
    status: text('status', { enum: ['pending', 'warm', 'live', 'ended', 'failed'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /**
     * A repeating visit's room (migration 0029): every occurrence meets in it, so ending a meeting
     * makes it `warm` again for the next one; it ends when the series is cancelled.
     */
    standing: boolean('standing').notNull().default(false),
    /**
     * Until when the room is worth retrying: the visit's end (migration 0031). Null: a week after it was
     * asked for (`createdAt`).
     */
    neededUntil: ts('needed_until'),
    /** Why a `failed` room could not be made (the provider's last error). */
    failureReason: text('failure_reason'),
    startedAt: ts('started_at'),
    endedAt: ts('ended_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('telehealth_rooms_event_idx').on(t.workspaceId, t.eventId),
    index('telehealth_rooms_status_idx').on(t.workspaceId, t.status),
    // The sweep's scan of the (few) rooms still pending, across workspaces.
    index('telehealth_rooms_pending_idx').on(t.createdAt).where(sql`status = 'pending'`),
  ],
);
