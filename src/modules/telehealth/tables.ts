import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/**
 * A video room for a calendar event with conferencing: pre-warmed in the background (`warm`), then
 * `live` while the visit runs and `ended` after (a series' standing room goes back to `warm`). One room
 * per event (a series' occurrences share the series').
 */
export const telehealthRooms = pgTable(
  'telehealth_rooms',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    eventId: text('event_id').notNull(),
    /** Null until the video provider has made the room (the pre-warm job retries until it has). */
    providerRoomId: text('provider_room_id'),
    joinUrl: text('join_url'),
    status: text('status', { enum: ['pending', 'warm', 'live', 'ended'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /**
     * A repeating visit's room (migration 0029): every occurrence meets in it, so ending a meeting
     * makes it `warm` again for the next one; it ends when the series is cancelled.
     */
    standing: boolean('standing').notNull().default(false),
    startedAt: ts('started_at'),
    endedAt: ts('ended_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('telehealth_rooms_event_idx').on(t.workspaceId, t.eventId),
    index('telehealth_rooms_status_idx').on(t.workspaceId, t.status),
  ],
);
