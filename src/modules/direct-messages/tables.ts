import { sql } from 'drizzle-orm';
import { bigint, customType, index, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/**
 * A conversation. `memberKey` (hash of the sorted member ids) is unique per workspace, which is
 * what makes a 1:1 thread unique per pair and a group thread unique per member set.
 * `lastSeq` is the per-thread message counter, bumped under the thread's row lock on every
 * send, so message order equals commit order inside a thread.
 */
export const dmThreads = pgTable(
  'dm_threads',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    kind: text('kind', { enum: ['direct', 'group'] }).notNull(),
    title: text('title'),
    memberKey: text('member_key').notNull(),
    createdBy: text('created_by').notNull(),
    lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('dm_threads_member_key_idx').on(t.workspaceId, t.memberKey),
  ],
);

/** Membership of a thread and the member's read receipt (`lastReadSeq` only ever grows). */
export const dmParticipants = pgTable(
  'dm_participants',
  {
    workspaceId: text('workspace_id').notNull(),
    threadId: text('thread_id').notNull(),
    userId: text('user_id').notNull(),
    joinedAt: ts('joined_at').notNull().defaultNow(),
    lastReadSeq: bigint('last_read_seq', { mode: 'number' }).notNull().default(0),
    lastReadMessageId: text('last_read_message_id'),
    readAt: ts('read_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.threadId, t.userId] }),
    index('dm_participants_user_idx').on(t.workspaceId, t.userId),
  ],
);

export const dmMessages = pgTable(
  'dm_messages',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    threadId: text('thread_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    senderId: text('sender_id').notNull(),
    body: text('body').notNull(),
    /** Patient ids mentioned with `@patient:<id>`, in order of first appearance. */
    mentions: jsonb('mentions').$type<string[]>().notNull().default([]),
    createdAt: ts('created_at').notNull().defaultNow(),
    // The body's words without its mention tokens (migration 0043): a mentioned patient is found by name, through
    // `mentions`, never by `@patient:` or the id.
    search: tsvector('search')
      .notNull()
      .generatedAlwaysAs(
        sql`to_tsvector('english'::regconfig, regexp_replace(body, '@patient:[A-Za-z0-9_-]{1,100}', ' the ', 'g'))`,
      ),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('dm_messages_thread_seq_idx').on(t.workspaceId, t.threadId, t.seq),
    // Updated in place, no pending list: no insert pays for merging it (migration 0028).
    index('dm_messages_search_idx').using('gin', t.search).with({ fastupdate: false }),
    // Messages mentioning given patients (`mentions ?| ids`: search by a patient's name; `@>`).
    index('dm_messages_mentions_idx').using('gin', t.mentions).with({ fastupdate: false }),
  ],
);

/** When a reader last had a `phi_access` row written for a patient mentioned in a thread (hourly dedup). */
export const dmPhiReads = pgTable(
  'dm_phi_reads',
  {
    workspaceId: text('workspace_id').notNull(),
    threadId: text('thread_id').notNull(),
    userId: text('user_id').notNull(),
    patientId: text('patient_id').notNull(),
    loggedAt: ts('logged_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.threadId, t.userId, t.patientId] })],
);
