import { index, integer, pgTable, primaryKey, real, text } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/** Mail received for a workspace at its inbound address (contract §5.3). */
export const mailMessages = pgTable(
  'mail_messages',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    from: text('from').notNull(),
    to: text('to').array().notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    /** The iMIP method of a text/calendar part, when there is one (REPLY updates an attendee). */
    calendarMethod: text('calendar_method'),
    sizeBytes: integer('size_bytes').notNull(),
    /** The spam skill's label (`spam` | `ham`), when the workspace has it installed; null until classified. */
    spamLabel: text('spam_label'),
    spamProbability: real('spam_probability'),
    receivedAt: ts('received_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('mail_messages_received_idx').on(t.workspaceId, t.receivedAt),
  ],
);
