import { and, asc, desc, eq, gt, inArray, lt, type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { textArray } from '../../platform/db/lists.js';
import { preparedRows, queryRows } from '../../platform/db/tenant.js';
import { exactTime, olderThanCursor, type TimeIdCursor } from '../../platform/pagination.js';
import { userNames } from '../identity/index.js';
import { dmMessages, dmParticipants, dmPhiReads, dmThreads } from './tables.js';

/** The row of one participant of one thread. */
const isParticipant = (workspaceId: string, threadId: string, userId: string) =>
  and(
    eq(dmParticipants.workspaceId, workspaceId),
    eq(dmParticipants.threadId, threadId),
    eq(dmParticipants.userId, userId),
  );

export type ThreadRow = typeof dmThreads.$inferSelect;
export type ParticipantRow = typeof dmParticipants.$inferSelect;

/** A message row without its search vector. */
export interface MessageRow {
  workspaceId: string;
  id: string;
  threadId: string;
  seq: number;
  senderId: string;
  body: string;
  mentions: string[];
  createdAt: Date;
}

const messageColumns = {
  workspaceId: dmMessages.workspaceId,
  id: dmMessages.id,
  threadId: dmMessages.threadId,
  seq: dmMessages.seq,
  senderId: dmMessages.senderId,
  body: dmMessages.body,
  mentions: dmMessages.mentions,
  createdAt: dmMessages.createdAt,
};

/** Channel carrying `{w, t, k, ...ids}` — ids only, never message text. */
export const DM_CHANNEL = 'atrium_dm';

export interface DmNotification {
  /** workspace id */
  w: string;
  /** thread id */
  t: string;
  /** `m`: new message (s = its seq); `r`: receipt moved (u = reader) */
  k: 'm' | 'r';
  s?: number;
  u?: string;
}

export async function notify(tx: Tx, payload: DmNotification): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${DM_CHANNEL}, ${JSON.stringify(payload)})`);
}

/** Inserts the thread of a member set, or returns the one that already exists (race-safe). */
export async function upsertThread(
  tx: Tx,
  row: typeof dmThreads.$inferInsert,
): Promise<{ thread: ThreadRow; created: boolean }> {
  const [inserted] = await tx.insert(dmThreads).values(row).onConflictDoNothing().returning();
  if (inserted) return { thread: inserted, created: true };
  const [existing] = await tx
    .select()
    .from(dmThreads)
    .where(and(eq(dmThreads.workspaceId, row.workspaceId), eq(dmThreads.memberKey, row.memberKey)));
  return { thread: existing, created: false };
}

export async function insertParticipants(tx: Tx, workspaceId: string, threadId: string, userIds: string[], at: Date) {
  await tx
    .insert(dmParticipants)
    .values(userIds.map((userId) => ({ workspaceId, threadId, userId, joinedAt: at })))
    .onConflictDoNothing();
}

/** The thread if `userId` takes part in it (else undefined: callers answer 404). */
export async function findThreadOfParticipant(
  tx: Tx,
  workspaceId: string,
  threadId: string,
  userId: string,
): Promise<{ thread: ThreadRow; participant: ParticipantRow } | undefined> {
  const [row] = await tx
    .select({ thread: dmThreads, participant: dmParticipants })
    .from(dmParticipants)
    .innerJoin(
      dmThreads,
      and(eq(dmThreads.workspaceId, dmParticipants.workspaceId), eq(dmThreads.id, dmParticipants.threadId)),
    )
    .where(isParticipant(workspaceId, threadId, userId));
  return row;
}

/**
 * A send in one statement: bump the thread's seq (only for a participant), insert the message, move
 * the sender's receipt, append the audit row and NOTIFY. Returns the new seq, or undefined when the
 * caller is not a participant of the thread (nothing is written then).
 */
export async function appendMessageRow(
  tx: Tx,
  row: Omit<MessageRow, 'seq'>,
  audit: (inserted: SQL) => SQL,
): Promise<number | undefined> {
  const at = row.createdAt.toISOString();
  const rows = await preparedRows<{ seq: number | string }>(
    tx,
    sql`WITH bumped AS (
      UPDATE dm_threads SET last_seq = last_seq + 1, updated_at = ${at}::timestamptz
       WHERE workspace_id = ${row.workspaceId} AND id = ${row.threadId}
         AND EXISTS (SELECT 1 FROM dm_participants p WHERE p.workspace_id = ${row.workspaceId}
               AND p.thread_id = ${row.threadId} AND p.user_id = ${row.senderId})
      RETURNING last_seq
    ), inserted AS (
      INSERT INTO dm_messages (workspace_id, id, thread_id, seq, sender_id, body, mentions, created_at)
      SELECT ${row.workspaceId}, ${row.id}, ${row.threadId}, last_seq, ${row.senderId}, ${row.body},
             ${JSON.stringify(row.mentions)}::jsonb, ${at}::timestamptz
        FROM bumped
      RETURNING seq
    ), receipt AS (
      UPDATE dm_participants
         SET last_read_seq = inserted.seq, last_read_message_id = ${row.id}, read_at = ${at}::timestamptz
        FROM inserted
       WHERE workspace_id = ${row.workspaceId} AND thread_id = ${row.threadId} AND user_id = ${row.senderId}
         AND last_read_seq < inserted.seq
      RETURNING 1
    ), audit AS (${audit(sql`EXISTS (SELECT 1 FROM inserted)`)})
    SELECT inserted.seq,
           pg_notify(${DM_CHANNEL}, json_build_object('w', ${row.workspaceId}::text, 't', ${row.threadId}::text,
                                                      'k', 'm', 's', inserted.seq)::text) AS notified,
           (SELECT count(*) FROM receipt) AS receipts
      FROM inserted`,
  );
  return rows.length === 0 ? undefined : Number(rows[0].seq);
}

/** Moves a read receipt forward only; returns the updated row, or undefined when it would move back. */
export async function advanceReceipt(
  tx: Tx,
  workspaceId: string,
  threadId: string,
  userId: string,
  seq: number,
  messageId: string,
  at: Date,
): Promise<ParticipantRow | undefined> {
  const [row] = await tx
    .update(dmParticipants)
    .set({ lastReadSeq: seq, lastReadMessageId: messageId, readAt: at })
    .where(and(isParticipant(workspaceId, threadId, userId), lt(dmParticipants.lastReadSeq, seq)))
    .returning();
  return row;
}

/** Participants of the threads with their names (from identity), by join time then name. */
export async function participantsOf(tx: Tx, workspaceId: string, threadIds: string[]) {
  if (threadIds.length === 0) return [];
  const rows = await tx
    .select({
      threadId: dmParticipants.threadId,
      userId: dmParticipants.userId,
      lastReadMessageId: dmParticipants.lastReadMessageId,
      readAt: dmParticipants.readAt,
      joinedAt: dmParticipants.joinedAt,
    })
    .from(dmParticipants)
    .where(and(eq(dmParticipants.workspaceId, workspaceId), inArray(dmParticipants.threadId, threadIds)))
    .orderBy(asc(dmParticipants.joinedAt));
  const names = await userNames(
    tx,
    rows.map((r) => r.userId),
  );
  const nameOf = (userId: string) => names.get(userId) ?? '';
  // Code-unit order matches the databases' C collation the former join sorted by.
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  // A participant removed from the workspace stays in the thread; this transaction no longer sees their
  // user row (RLS: members only), so `name` is null and the service names them from outside it.
  return rows
    .sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime() || byName(nameOf(a.userId), nameOf(b.userId)))
    .map((r) => ({ ...r, name: names.get(r.userId) ?? null }));
}

export async function findReceipt(tx: Tx, workspaceId: string, threadId: string, userId: string) {
  const [row] = await tx
    .select()
    .from(dmParticipants)
    .where(isParticipant(workspaceId, threadId, userId));
  return row;
}

/** Threads of a user, most recently active first, with the last message and the caller's read position. */
export async function listThreadsOfUser(
  tx: Tx,
  workspaceId: string,
  userId: string,
  limit: number,
  after?: TimeIdCursor,
) {
  return tx
    .select({
      thread: dmThreads,
      key: exactTime(dmThreads.updatedAt),
      lastReadSeq: dmParticipants.lastReadSeq,
      last: messageColumns,
    })
    .from(dmParticipants)
    .innerJoin(
      dmThreads,
      and(eq(dmThreads.workspaceId, dmParticipants.workspaceId), eq(dmThreads.id, dmParticipants.threadId)),
    )
    .leftJoin(
      dmMessages,
      and(
        eq(dmMessages.workspaceId, dmThreads.workspaceId),
        eq(dmMessages.threadId, dmThreads.id),
        eq(dmMessages.seq, dmThreads.lastSeq),
      ),
    )
    .where(
      and(
        eq(dmParticipants.workspaceId, workspaceId),
        eq(dmParticipants.userId, userId),
        olderThanCursor(dmThreads.updatedAt, dmThreads.id, after),
      ),
    )
    .orderBy(desc(dmThreads.updatedAt), desc(dmThreads.id))
    .limit(limit + 1);
}

/** Newest first, strictly older than `beforeSeq` when given. */
export async function messagesBefore(
  tx: Tx,
  workspaceId: string,
  threadId: string,
  limit: number,
  beforeSeq?: number,
): Promise<MessageRow[]> {
  return tx
    .select(messageColumns)
    .from(dmMessages)
    .where(
      and(
        eq(dmMessages.workspaceId, workspaceId),
        eq(dmMessages.threadId, threadId),
        beforeSeq !== undefined ? lt(dmMessages.seq, beforeSeq) : undefined,
      ),
    )
    .orderBy(desc(dmMessages.seq))
    .limit(limit);
}

/** Oldest first, strictly newer than `afterSeq` (realtime catch-up). */
export async function messagesAfter(
  tx: Tx,
  workspaceId: string,
  threadId: string,
  afterSeq: number,
  limit: number,
): Promise<MessageRow[]> {
  return tx
    .select(messageColumns)
    .from(dmMessages)
    .where(
      and(eq(dmMessages.workspaceId, workspaceId), eq(dmMessages.threadId, threadId), gt(dmMessages.seq, afterSeq)),
    )
    .orderBy(asc(dmMessages.seq))
    .limit(limit);
}

export async function findMessageInThread(
  tx: Tx,
  workspaceId: string,
  threadId: string,
  messageId: string,
): Promise<MessageRow | undefined> {
  const [row] = await tx
    .select(messageColumns)
    .from(dmMessages)
    .where(
      and(eq(dmMessages.workspaceId, workspaceId), eq(dmMessages.threadId, threadId), eq(dmMessages.id, messageId)),
    );
  return row;
}

export async function findMessageBySeq(tx: Tx, workspaceId: string, threadId: string, seq: number) {
  const [row] = await tx
    .select(messageColumns)
    .from(dmMessages)
    .where(and(eq(dmMessages.workspaceId, workspaceId), eq(dmMessages.threadId, threadId), eq(dmMessages.seq, seq)));
  return row;
}

export async function findThreads(tx: Tx, workspaceId: string, threadIds: string[]): Promise<ThreadRow[]> {
  if (threadIds.length === 0) return [];
  return tx
    .select()
    .from(dmThreads)
    .where(and(eq(dmThreads.workspaceId, workspaceId), inArray(dmThreads.id, threadIds)));
}

/**
 * Claims the (thread, patient) pairs whose PHI read by `userId` was not logged within the last
 * hour; returns the claimed pairs, each of which the caller audits. One statement, so two
 * concurrent reads cannot both log the same pair.
 */
export async function claimPhiReads(
  tx: Tx,
  workspaceId: string,
  userId: string,
  pairs: { threadId: string; patientId: string }[],
): Promise<{ threadId: string; patientId: string }[]> {
  if (pairs.length === 0) return [];
  return tx
    .insert(dmPhiReads)
    .values(pairs.map((p) => ({ workspaceId, userId, threadId: p.threadId, patientId: p.patientId })))
    .onConflictDoUpdate({
      target: [dmPhiReads.workspaceId, dmPhiReads.threadId, dmPhiReads.userId, dmPhiReads.patientId],
      set: { loggedAt: sql`now()` },
      setWhere: sql`${dmPhiReads.loggedAt} < now() - interval '1 hour'`,
    })
    .returning({ threadId: dmPhiReads.threadId, patientId: dmPhiReads.patientId });
}

export interface SearchRow {
  id: string;
  thread_id: string;
  seq: string | number;
  sender_id: string;
  body: string;
  mentions: string[];
  created_at: string | Date;
  rank: number;
  /** The newest candidate's id (the ceiling later pages keep to) and how many matched, up to one past those ranked. */
  ceiling: string;
  candidates: string | number;
}

/** How many of the newest matches are ranked; bounds the cost of very common terms. */
export const SEARCH_CANDIDATES = 300;

const searchQuery = (q: string) => sql`websearch_to_tsquery('english', ${q})`;

/**
 * Full-text search over the workspace's messages: stemmed English, `websearch_to_tsquery`
 * syntax, GIN index on the stored tsvector (the body's words, mention tokens left out: migration 0043).
 * A message is also found by the name of a patient it mentions: `named` holds the workspace's patients
 * whose name shares a word with the query (the caller looks them up); a message mentioning one of them
 * (GIN index on `mentions`) is a candidate, and every candidate is checked against its words and the
 * names of the named patients it mentions, so "Vance WhatsApp" finds a message saying WhatsApp that
 * mentions Eleanor Vance, and "WhatsApp -Vance" leaves it out. The newest SEARCH_CANDIDATES matches are
 * ranked with ts_rank (the query stays a plan-time constant so PostgreSQL picks the GIN index for rare
 * terms and a backward primary-key walk for common ones). Snippets: `headlines`, for the page returned.
 */
export async function searchMessages(
  tx: Tx,
  workspaceId: string,
  query: {
    q: string;
    participantId?: string;
    senderId?: string;
    limit: number;
    offset: number;
    /** Later pages rank the same candidates as the first: none newer than its newest. */
    ceiling?: string;
    /** Patients (id → display name) whose name has a word of `q`. */
    named: Map<string, string>;
  },
): Promise<SearchRow[]> {
  const tsquery = searchQuery(query.q);
  const ids = sql`${textArray([...query.named.keys()])}::text[]`;
  const named = sql`${JSON.stringify(Object.fromEntries(query.named))}::jsonb`;
  const byName = query.named.size > 0;
  // The words a message is found by: its own, and the names of the named patients it mentions, looked up by the
  // message's own mentions (a few) rather than by every named patient (up to a thousand). Names are joined by a
  // stop word, which keeps a gap in the positions, so a phrase never runs from one name into the next.
  const words = byName
    ? sql`m.search || CASE WHEN m.mentions ?| ${ids} THEN to_tsvector('english'::regconfig, coalesce(
          (SELECT string_agg(${named} ->> e.id, ' the ') FROM jsonb_array_elements_text(m.mentions) AS e(id)
            WHERE ${named} ? e.id), '')) ELSE ''::tsvector END`
    : sql`m.search`;
  return queryRows<SearchRow>(
    tx,
    sql`WITH candidates AS (
        SELECT m.id, m.thread_id, m.seq, m.sender_id, m.body, m.mentions, m.created_at, w.words
          FROM dm_messages m
          CROSS JOIN LATERAL (SELECT ${words} AS words) w
         WHERE m.workspace_id = ${workspaceId}
           AND ${byName ? sql`(m.search @@ ${tsquery} OR m.mentions ?| ${ids}) AND w.words @@ ${tsquery}` : sql`m.search @@ ${tsquery}`}
           ${query.ceiling ? sql`AND m.id <= ${query.ceiling}` : sql``}
           ${query.senderId ? sql`AND m.sender_id = ${query.senderId}` : sql``}
           ${
             query.participantId
               ? sql`AND m.thread_id IN (SELECT p.thread_id FROM dm_participants p
                      WHERE p.workspace_id = ${workspaceId} AND p.user_id = ${query.participantId})`
               : sql``
           }
         ORDER BY m.id DESC
         LIMIT ${SEARCH_CANDIDATES + 1}
      ),
      ranked AS (SELECT * FROM candidates ORDER BY id DESC LIMIT ${SEARCH_CANDIDATES}),
      hits AS (
        SELECT c.id, c.thread_id, c.seq, c.sender_id, c.body, c.mentions, c.created_at,
               ts_rank(c.words, ${tsquery}) AS rank
          FROM ranked c
         ORDER BY rank DESC, c.id DESC
         LIMIT ${query.limit + 1} OFFSET ${query.offset}
      )
      SELECT hits.*,
             (SELECT max(id) FROM candidates) AS ceiling,
             (SELECT count(*) FROM candidates) AS candidates
        FROM hits
       ORDER BY hits.rank DESC, hits.id DESC`,
  );
}

/**
 * The search's snippet of each text (a hit's body as read, mentions as names), in order: `ts_headline`,
 * up to two excerpts around the matches of `q`, the text's & < > as entities and the matches between
 * `startSel` and `stopSel`.
 */
export async function headlines(
  tx: Tx,
  q: string,
  texts: string[],
  startSel: string,
  stopSel: string,
): Promise<string[]> {
  if (texts.length === 0) return [];
  const options = `StartSel=${startSel}, StopSel=${stopSel}, MaxWords=30, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "`;
  // ts_headline's parser takes `<…>` for markup and drops it, so the text goes in with & < > as entities
  // (which it copies through untouched) and without our marker characters.
  const escaped = sql`replace(replace(replace(translate(u.text, ${startSel + stopSel}, ''), '&', '&amp;'), '<', '&lt;'), '>', '&gt;')`;
  const rows = await queryRows<{ snippet: string }>(
    tx,
    sql`SELECT ts_headline('english', ${escaped}, ${searchQuery(q)}, ${options}) AS snippet
          FROM jsonb_array_elements_text(${JSON.stringify(texts)}::jsonb) WITH ORDINALITY AS u(text, i)
         ORDER BY u.i`,
  );
  return rows.map((r) => r.snippet);
}

/** Messages mentioning the patient in threads the user takes part in (never other people's threads). */
export async function recentMentions(tx: Tx, workspaceId: string, userId: string, patientId: string, limit: number) {
  return tx
    .select({
      id: dmMessages.id,
      threadId: dmMessages.threadId,
      senderId: dmMessages.senderId,
      body: dmMessages.body,
      createdAt: dmMessages.createdAt,
    })
    .from(dmMessages)
    .innerJoin(
      dmParticipants,
      and(
        eq(dmParticipants.workspaceId, dmMessages.workspaceId),
        eq(dmParticipants.threadId, dmMessages.threadId),
        eq(dmParticipants.userId, userId),
      ),
    )
    .where(
      and(
        eq(dmMessages.workspaceId, workspaceId),
        sql`${dmMessages.mentions} @> ${JSON.stringify([patientId])}::jsonb`,
      ),
    )
    .orderBy(desc(dmMessages.createdAt))
    .limit(limit);
}
