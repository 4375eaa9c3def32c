import { createHash } from 'node:crypto';
import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import { z } from 'zod';
import { auditInsertSql, writeAudit } from '../../platform/audit/audit.js';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { withSystem, withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound, unprocessable } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { decodeCursor, encodeCursor, type Page, timeIdCursor } from '../../platform/pagination.js';
import { requireFeature } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import { memberNames, membershipStarts, userNames } from '../identity/index.js';
import * as patients from '../patients/index.js';
import { parsePatientMentions, splitMentions } from './mentions.js';
import * as repo from './repository.js';
import type { Message, Receipt, SearchQuery, SendInput, Thread, ThreadListItem } from './schema.js';
import { dmMessages, dmParticipants } from './tables.js';

const MODULE = 'direct-messages';

type Ctx = Pick<RequestContext, 'workspaceId' | 'userId' | 'requestId' | 'role' | 'tier'>;
type PatientNames = Map<string, string>;

// ---------------------------------------------------------------- presentation

async function patientNames(tx: Tx, ctx: Ctx, rows: { mentions: string[] }[]): Promise<PatientNames> {
  const ids = [...new Set(rows.flatMap((r) => r.mentions))];
  return patients.patientNames(tx, ctx.workspaceId, ids);
}

export function presentMessage(row: repo.MessageRow, names: PatientNames): Message {
  return {
    id: row.id,
    threadId: row.threadId,
    senderId: row.senderId,
    body: row.body,
    mentions: row.mentions.map((patientId) => ({
      type: 'patient' as const,
      patientId,
      displayName: names.get(patientId) ?? null,
    })),
    createdAt: new Date(row.createdAt).toISOString(),
  };
}

/** Follows a former member's name wherever the thread is titled by its people. */
const FORMER_MEMBER = '(no longer a member)';

/** The caller's title of a thread: the group's title, else the other participants' names (theirs, if alone). */
function displayTitle(customTitle: string | null, participants: Thread['participants'], callerId: string): string {
  if (customTitle !== null) return customTitle;
  const others = participants.filter((p) => p.userId !== callerId);
  return (others.length > 0 ? others : participants)
    .map((p) => (p.former ? `${p.name} ${FORMER_MEMBER}` : p.name))
    .join(', ');
}

/**
 * A participant whose name is null is no longer a member of the workspace (the tenant transaction does not
 * see their user row): marked `former`, and named by `nameFormerParticipants` once that transaction is over.
 */
function presentThread(
  thread: repo.ThreadRow,
  participants: { userId: string; name: string | null; joinedAt: Date }[],
  callerId: string,
): Thread {
  const people = participants.map((p) => {
    const person = { userId: p.userId, name: p.name ?? '', former: p.name === null };
    joinedAt.set(person, p.joinedAt.getTime());
    return person;
  });
  return {
    id: thread.id,
    kind: thread.kind,
    title: displayTitle(thread.title, people, callerId),
    customTitle: thread.title,
    participants: people,
    createdAt: thread.createdAt.toISOString(),
    updatedAt: thread.updatedAt.toISOString(),
  };
}

/** When each presented participant joined their thread: the order of participants once every name is known. */
const joinedAt = new WeakMap<Thread['participants'][number], number>();
// Code-unit order, as the repository sorts names (the databases' C collation).
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Names of people removed from the workspace who take part in its threads. The workspace's transaction sees
 * members only, so they are read in a system one of their own (never nested in the tenant one: one connection
 * on PGlite), and only for ids taken from this workspace's participant rows.
 */
async function formerNames(deps: AppDeps, userIds: string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  return withSystem(deps.db, (tx) => userNames(tx, userIds));
}

/** Fills in the former participants' names (and the titles made of them) of threads presented above. */
async function nameFormerParticipants(deps: AppDeps, callerId: string, threads: Thread[]): Promise<void> {
  const former = threads.flatMap((t) => t.participants.filter((p) => p.former).map((p) => p.userId));
  if (former.length === 0) return;
  const names = await formerNames(deps, [...new Set(former)]);
  for (const thread of threads) {
    if (!thread.participants.some((p) => p.former)) continue;
    for (const p of thread.participants) if (p.former) p.name = names.get(p.userId) ?? 'A former member';
    thread.participants.sort((a, b) => (joinedAt.get(a) ?? 0) - (joinedAt.get(b) ?? 0) || byName(a.name, b.name));
    thread.title = displayTitle(thread.customTitle, thread.participants, callerId);
  }
}

const presentReceipt = (p: { userId: string; lastReadMessageId: string | null; readAt: Date | null }): Receipt => ({
  userId: p.userId,
  lastReadMessageId: p.lastReadMessageId,
  readAt: p.readAt ? p.readAt.toISOString() : null,
});

function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

// ---------------------------------------------------------------- PHI audit

/**
 * Reads of messages that mention patients are PHI accesses: one `phi_access` row per reader,
 * thread and patient per hour (the dedup claim and the audit row share the transaction).
 */
async function recordPhiReads(tx: Tx, ctx: Ctx, messages: repo.MessageRow[]): Promise<void> {
  const firstMessage = new Map<string, { threadId: string; patientId: string; messageId: string }>();
  for (const m of messages) {
    for (const patientId of m.mentions) {
      const key = `${m.threadId}\u0000${patientId}`;
      if (!firstMessage.has(key)) firstMessage.set(key, { threadId: m.threadId, patientId, messageId: m.id });
    }
  }
  if (firstMessage.size === 0) return;
  const claimed = await repo.claimPhiReads(tx, ctx.workspaceId, ctx.userId, [...firstMessage.values()]);
  for (const pair of claimed) {
    const seen = firstMessage.get(`${pair.threadId}\u0000${pair.patientId}`);
    await writeAudit(tx, ctx, 'phi_access', {
      patientId: pair.patientId,
      context: MODULE,
      access: 'read',
      threadId: pair.threadId,
      messageId: seen?.messageId,
    });
  }
}

// ---------------------------------------------------------------- threads

async function requireParticipation(tx: Tx, ctx: Ctx, threadId: string) {
  const found = await repo.findThreadOfParticipant(tx, ctx.workspaceId, threadId, ctx.userId);
  if (!found) throw notFound('Thread');
  return found;
}

/** When the caller's current membership of the workspace began. */
const memberSince = async (tx: Tx, ctx: Ctx) =>
  (await membershipStarts(tx, ctx.workspaceId, [ctx.userId])).get(ctx.userId);

/**
 * A member who was removed and later added again (same user id) reads their old threads from their
 * return on: what was sent before their current membership began (perhaps while they were away) is not
 * theirs to read. Per thread, the last seq they may not see (threads started after their return: none).
 */
async function hiddenThrough(
  tx: Tx,
  ctx: Ctx,
  threads: { id: string; createdAt: Date }[],
): Promise<Map<string, number>> {
  const since = await memberSince(tx, ctx);
  const older = since ? threads.filter((t) => t.createdAt < since).map((t) => t.id) : [];
  if (!since || older.length === 0) return new Map();
  const rows = await tx
    .select({ threadId: dmMessages.threadId, seq: sql<number>`max(${dmMessages.seq})` })
    .from(dmMessages)
    .where(
      and(
        eq(dmMessages.workspaceId, ctx.workspaceId),
        inArray(dmMessages.threadId, older),
        lt(dmMessages.createdAt, since),
      ),
    )
    .groupBy(dmMessages.threadId);
  return new Map(rows.map((r) => [r.threadId, Number(r.seq)]));
}

/** "a", "a and b", "a, b and c" */
const inWords = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * 409 `recipients_left`, naming who the thread was with (`formerParticipants: [{userId, name}]`). Raised in
 * the tenant transaction with the ids only; `explainRecipientsLeft` names them once it is over.
 */
const recipientsLeft = (people: { userId: string; name?: string }[]) => {
  const named = people.every((p) => p.name !== undefined);
  const who = inWords(people.map((p) => p.name ?? ''));
  return new AppError(
    'recipients_left',
    409,
    named && people.length > 0
      ? `${who} ${people.length === 1 ? 'is' : 'are'} no longer a member of this workspace, so no one would read ` +
          'a message here; nothing was sent'
      : 'No one else in this thread is a member of the workspace any more; nothing was sent',
    { formerParticipants: people },
  );
};

async function explainRecipientsLeft<T>(deps: AppDeps, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'recipients_left') throw err;
    const ids = (err.extras.formerParticipants as { userId: string }[]).map((p) => p.userId);
    const names = await formerNames(deps, ids);
    throw recipientsLeft(ids.map((userId) => ({ userId, name: names.get(userId) ?? 'A former member' })));
  }
}

/**
 * 404 unless the caller takes part in the thread; 409 `recipients_left` when none of the others is
 * still a member of the workspace (a message there would be read by no one, or by someone removed
 * should they ever come back).
 */
async function requireRecipients(tx: Tx, ctx: Ctx, threadId: string): Promise<void> {
  const rows = await tx
    .select({ userId: dmParticipants.userId })
    .from(dmParticipants)
    .where(and(eq(dmParticipants.workspaceId, ctx.workspaceId), eq(dmParticipants.threadId, threadId)));
  if (!rows.some((r) => r.userId === ctx.userId)) throw notFound('Thread');
  const others = rows.map((r) => r.userId).filter((id) => id !== ctx.userId);
  if ((await memberNames(tx, ctx.workspaceId, others)).length === 0) {
    throw recipientsLeft(others.map((userId) => ({ userId })));
  }
}

export async function listThreads(
  deps: AppDeps,
  ctx: Ctx,
  query: { limit: number; cursor?: string },
): Promise<Page<ThreadListItem>> {
  const after = decodeCursor(query.cursor, timeIdCursor);
  const page = await withTenant(deps.db, ctx, async (tx) => {
    const rows = await repo.listThreadsOfUser(tx, ctx.workspaceId, ctx.userId, query.limit, after);
    const page = rows.slice(0, query.limit);
    const participants = groupBy(
      await repo.participantsOf(
        tx,
        ctx.workspaceId,
        page.map((r) => r.thread.id),
      ),
      (p) => p.threadId,
    );
    const hidden = await hiddenThrough(
      tx,
      ctx,
      page.map((r) => r.thread),
    );
    const visibleLast = (r: (typeof page)[number]) =>
      r.last && (r.last as repo.MessageRow).seq > (hidden.get(r.thread.id) ?? 0) ? (r.last as repo.MessageRow) : null;
    const lastMessages = page.flatMap((r) => visibleLast(r) ?? []);
    const names = await patientNames(tx, ctx, lastMessages);
    await recordPhiReads(tx, ctx, lastMessages);
    const items = page.map((r) => {
      const last = visibleLast(r);
      return {
        ...presentThread(r.thread, participants.get(r.thread.id) ?? [], ctx.userId),
        lastMessage: last ? presentMessage(last, names) : null,
        unreadCount: Math.max(0, r.thread.lastSeq - Math.max(r.lastReadSeq, hidden.get(r.thread.id) ?? 0)),
      };
    });
    const last = page[page.length - 1];
    const nextCursor = rows.length > query.limit && last ? encodeCursor([last.key, last.thread.id]) : null;
    return { items, nextCursor };
  });
  await nameFormerParticipants(deps, ctx.userId, page.items);
  return page;
}

/** Hash of the sorted member ids: the identity of a 1:1 pair or a group's member set. */
function memberKeyOf(userIds: string[]): string {
  return createHash('sha256')
    .update([...userIds].sort().join('\n'))
    .digest('hex');
}

async function resolveRecipients(tx: Tx, ctx: Ctx, recipients: string[]) {
  const others = [...new Set(recipients)].filter((id) => id !== ctx.userId);
  if (others.length === 0) {
    throw unprocessable('unprocessable', 'Name at least one workspace member other than yourself', {
      errors: [{ path: 'body.recipients', message: 'Name at least one member other than yourself' }],
    });
  }
  const found = await memberNames(tx, ctx.workspaceId, others);
  const known = new Set(found.map((m) => m.userId));
  const unknown = others.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw unprocessable('unknown_recipient', 'Every recipient must be a member of this workspace', {
      recipients: unknown,
      errors: unknown.map((id) => ({ path: 'body.recipients', message: `${id} is not a member of this workspace` })),
    });
  }
  return others;
}

async function resolveMentions(tx: Tx, ctx: Ctx, body: string) {
  const mentioned = parsePatientMentions(body);
  if (mentioned.length === 0) return { mentioned, names: new Map() as PatientNames };
  const names = await patients.patientNames(tx, ctx.workspaceId, mentioned);
  const unknown = mentioned.filter((id) => !names.has(id));
  if (unknown.length > 0) {
    throw unprocessable('unknown_patient', 'A mentioned patient does not exist in this workspace', {
      patientIds: unknown,
      errors: unknown.map((id) => ({ path: 'body.body', message: `Unknown patient ${id}` })),
    });
  }
  return { mentioned, names };
}

/**
 * Appends a message if the caller takes part in the thread (404 otherwise), with its audit rows
 * and the realtime notice, in the caller's transaction. `existing`: a thread named by id, whose
 * other participants must not all have left the workspace (409 `recipients_left`).
 */
async function appendMessage(tx: Tx, ctx: Ctx, threadId: string, body: string, existing: boolean): Promise<Message> {
  // Into an existing thread: someone else in it must still be a member (a caller outside it gets 404).
  if (existing) await requireRecipients(tx, ctx, threadId);
  // Mentions are checked first (no write happens before), but a caller outside the thread still
  // learns only that the thread is not found.
  const { mentioned, names } = await resolveMentions(tx, ctx, body).catch(async (err: unknown) => {
    await requireParticipation(tx, ctx, threadId);
    throw err;
  });
  const row: Omit<repo.MessageRow, 'seq'> = {
    workspaceId: ctx.workspaceId,
    id: newId('msg'),
    threadId,
    senderId: ctx.userId,
    body,
    mentions: mentioned,
    createdAt: new Date(),
  };
  // Seq, message, receipt, audit row and NOTIFY in one round trip (issue 9 bench).
  const seq = await repo.appendMessageRow(
    tx,
    row,
    (when) => auditInsertSql(ctx, 'message_send', { module: MODULE, threadId, messageId: row.id }, when).statement,
  );
  if (seq === undefined) throw notFound('Thread');
  for (const patientId of mentioned) {
    await writeAudit(tx, ctx, 'phi_access', {
      patientId,
      context: MODULE,
      access: 'write',
      threadId,
      messageId: row.id,
    });
  }
  return presentMessage({ ...row, seq }, names);
}

export async function send(deps: AppDeps, ctx: Ctx, input: SendInput): Promise<{ threadId: string; message: Message }> {
  requireFeature(ctx, 'direct_messages_send');
  return explainRecipientsLeft(deps, sendInTenant(deps, ctx, input));
}

function sendInTenant(deps: AppDeps, ctx: Ctx, input: SendInput): Promise<{ threadId: string; message: Message }> {
  return withTenant(deps.db, ctx, async (tx) => {
    if (input.threadId !== undefined) {
      return { threadId: input.threadId, message: await appendMessage(tx, ctx, input.threadId, input.body, true) };
    }
    const others = await resolveRecipients(tx, ctx, input.recipients ?? []);
    // Validate mentions before creating a thread, so a refused message leaves nothing behind.
    await resolveMentions(tx, ctx, input.body);
    const members = [ctx.userId, ...others];
    const now = new Date();
    const { thread, created } = await repo.upsertThread(tx, {
      workspaceId: ctx.workspaceId,
      id: newId('thr'),
      kind: members.length === 2 ? 'direct' : 'group',
      title: members.length === 2 ? null : (input.title ?? null),
      memberKey: memberKeyOf(members),
      createdBy: ctx.userId,
      createdAt: now,
      updatedAt: now,
    });
    if (created) await repo.insertParticipants(tx, ctx.workspaceId, thread.id, members, now);
    return { threadId: thread.id, message: await appendMessage(tx, ctx, thread.id, input.body, false) };
  });
}

export async function sendInThread(
  deps: AppDeps,
  ctx: Ctx,
  threadId: string,
  body: string,
): Promise<{ message: Message }> {
  requireFeature(ctx, 'direct_messages_send');
  return explainRecipientsLeft(
    deps,
    withTenant(deps.db, ctx, async (tx) => ({ message: await appendMessage(tx, ctx, threadId, body, true) })),
  );
}

async function seqOfPosition(tx: Tx, ctx: Ctx, threadId: string, position: string): Promise<number> {
  if (position.startsWith('msg_')) {
    const message = await repo.findMessageInThread(tx, ctx.workspaceId, threadId, position);
    if (!message) {
      throw new AppError('validation_failed', 400, 'before names no message of this thread', {
        errors: [{ path: 'query.before', message: 'Unknown message' }],
      });
    }
    return message.seq;
  }
  return decodeCursor(position, z.number().int().min(0)) ?? 0;
}

export async function getHistory(
  deps: AppDeps,
  ctx: Ctx,
  threadId: string,
  query: { before?: string; cursor?: string; limit: number },
) {
  const history = await withTenant(deps.db, ctx, async (tx) => {
    const { thread } = await requireParticipation(tx, ctx, threadId);
    const position = query.before ?? query.cursor;
    const beforeSeq = position ? await seqOfPosition(tx, ctx, threadId, position) : undefined;
    const hidden = (await hiddenThrough(tx, ctx, [thread])).get(threadId) ?? 0;
    const rows = (await repo.messagesBefore(tx, ctx.workspaceId, threadId, query.limit + 1, beforeSeq)).filter(
      (m) => m.seq > hidden,
    );
    const page = rows.slice(0, query.limit);
    const participants = await repo.participantsOf(tx, ctx.workspaceId, [threadId]);
    const names = await patientNames(tx, ctx, page);
    await recordPhiReads(tx, ctx, page);
    const last = page[page.length - 1];
    return {
      thread: presentThread(thread, participants, ctx.userId),
      items: page.map((m) => presentMessage(m, names)),
      nextCursor: rows.length > query.limit && last ? encodeCursor(last.seq) : null,
      // Members' receipts (a former participant reads nothing more here).
      receipts: participants.filter((p) => p.name !== null).map(presentReceipt),
    };
  });
  await nameFormerParticipants(deps, ctx.userId, [history.thread]);
  return history;
}

export async function markRead(
  deps: AppDeps,
  ctx: Ctx,
  threadId: string,
  input: { lastReadMessageId?: string },
): Promise<{ receipt: Receipt }> {
  return withTenant(deps.db, ctx, async (tx) => {
    const { thread, participant } = await requireParticipation(tx, ctx, threadId);
    const target = input.lastReadMessageId
      ? await repo.findMessageInThread(tx, ctx.workspaceId, threadId, input.lastReadMessageId)
      : await repo.findMessageBySeq(tx, ctx.workspaceId, threadId, thread.lastSeq);
    if (input.lastReadMessageId && !target) {
      throw unprocessable('unknown_message', 'lastReadMessageId is not a message of this thread', {
        errors: [{ path: 'body.lastReadMessageId', message: 'Not a message of this thread' }],
      });
    }
    if (!target) return { receipt: presentReceipt(participant) };
    // Monotonic: an older message id leaves the receipt where it is.
    const moved = await repo.advanceReceipt(
      tx,
      ctx.workspaceId,
      threadId,
      ctx.userId,
      target.seq,
      target.id,
      new Date(),
    );
    if (moved) await repo.notify(tx, { w: ctx.workspaceId, t: threadId, k: 'r', u: ctx.userId });
    return { receipt: presentReceipt(moved ?? participant) };
  });
}

// ---------------------------------------------------------------- realtime

/** Checks participation and returns the seq to stream after (`Last-Event-ID` message, else the latest). */
export async function openStream(deps: AppDeps, ctx: Ctx, threadId: string, lastEventId?: string): Promise<number> {
  return withTenant(deps.db, ctx, async (tx) => {
    const { thread } = await requireParticipation(tx, ctx, threadId);
    if (!lastEventId) return thread.lastSeq;
    const message = await repo.findMessageInThread(tx, ctx.workspaceId, threadId, lastEventId);
    // An id we do not know (or of another thread) resumes from now rather than replaying everything.
    return message ? message.seq : thread.lastSeq;
  });
}

/** Messages after `afterSeq` for a live subscriber; null when the caller no longer takes part. */
export async function messagesSince(
  deps: AppDeps,
  ctx: Ctx,
  threadId: string,
  afterSeq: number,
  limit: number,
): Promise<{ seq: number; message: Message }[] | null> {
  return withTenant(deps.db, ctx, async (tx) => {
    const found = await repo.findThreadOfParticipant(tx, ctx.workspaceId, threadId, ctx.userId);
    if (!found) return null;
    if (found.thread.lastSeq <= afterSeq) return [];
    const hidden = (await hiddenThrough(tx, ctx, [found.thread])).get(threadId) ?? 0;
    const rows = await repo.messagesAfter(tx, ctx.workspaceId, threadId, Math.max(afterSeq, hidden), limit);
    const names = await patientNames(tx, ctx, rows);
    await recordPhiReads(tx, ctx, rows);
    return rows.map((row) => ({ seq: row.seq, message: presentMessage(row, names) }));
  });
}

export async function receiptsOf(deps: AppDeps, ctx: Ctx, threadId: string, userId?: string): Promise<Receipt[]> {
  return withTenant(deps.db, ctx, async (tx) => {
    const rows = await repo.participantsOf(tx, ctx.workspaceId, [threadId]);
    // Receipts are members' only: a former participant (no name here) has none to publish.
    return rows.filter((r) => r.name !== null && (!userId || r.userId === userId)).map(presentReceipt);
  });
}

// ---------------------------------------------------------------- search

const START_SEL = '\uE000';
const STOP_SEL = '\uE001';

/**
 * The headline as HTML-escaped text with the matches in <mark>…</mark>. The repository already turned the
 * body's & < > into entities (so ts_headline kept them); the quotes are escaped here, and the private-use
 * characters that mark the matches (never in the text: they are stripped from it) become <mark>.
 */
function snippetHtml(raw: string): string {
  return raw
    .replace(/["']/g, (c) => (c === '"' ? '&quot;' : '&#39;'))
    .replaceAll(START_SEL, '<mark>')
    .replaceAll(STOP_SEL, '</mark>');
}

/** At most this many patients named by a word of a search are looked for in the messages' mentions. */
const NAMED_PATIENTS = 1000;

/** A body as people read it: each `@patient:<id>` as `@` and the patient's name (as the web app shows it). */
function readableBody(body: string, names: PatientNames): string {
  return splitMentions(body)
    .map((part) => ('text' in part ? part.text : `@${names.get(part.patientId) ?? 'Unknown patient'}`))
    .join('');
}

export async function search(deps: AppDeps, ctx: Ctx, query: SearchQuery) {
  // The cursor keeps the first page's newest candidate: a message that matches and arrives while the admin pages
  // on does not push the ranked set along (which repeated or skipped hits across pages).
  const cursor = decodeCursor(
    query.cursor,
    z.object({ o: z.number().int().min(0).max(10_000), c: z.string().max(64).optional() }),
  );
  const offset = cursor?.o ?? 0;
  const found = await withTenant(deps.db, ctx, async (tx) => {
    // A mention is found by the patient's name (never by its `@patient:<id>` token): the workspace's patients
    // named by a word of the query, whose mentions the search also looks for.
    const named = await patients.patientsNamedByWords(tx, ctx.workspaceId, query.q, NAMED_PATIENTS);
    const rows = await repo.searchMessages(tx, ctx.workspaceId, {
      q: query.q,
      participantId: query.userId,
      senderId: query.senderId,
      limit: query.limit,
      offset,
      ceiling: cursor?.c,
      named,
    });
    const page = rows.slice(0, query.limit).map((r): repo.MessageRow & { rank: number } => ({
      workspaceId: ctx.workspaceId,
      id: r.id,
      threadId: r.thread_id,
      seq: Number(r.seq),
      senderId: r.sender_id,
      body: r.body,
      mentions: r.mentions,
      createdAt: new Date(r.created_at),
      rank: Number(r.rank),
    }));
    const threadIds = [...new Set(page.map((r) => r.threadId))];
    const threads = new Map((await repo.findThreads(tx, ctx.workspaceId, threadIds)).map((t) => [t.id, t]));
    const participants = groupBy(await repo.participantsOf(tx, ctx.workspaceId, threadIds), (p) => p.threadId);
    const names = await patientNames(tx, ctx, page);
    const snippets = await repo.headlines(
      tx,
      query.q,
      page.map((r) => readableBody(r.body, names)),
      START_SEL,
      STOP_SEL,
    );
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'direct_messages.search',
      target: MODULE,
      query: query.q,
      userId: query.userId ?? null,
      senderId: query.senderId ?? null,
      resultCount: page.length,
    });
    await recordPhiReads(tx, ctx, page);
    return {
      items: page.map((r, i) => ({
        message: presentMessage(r, names),
        thread: presentThread(threads.get(r.threadId)!, participants.get(r.threadId) ?? [], ctx.userId),
        snippet: snippetHtml(snippets[i]),
        rank: r.rank,
      })),
      nextCursor:
        rows.length > query.limit ? encodeCursor({ o: offset + query.limit, c: cursor?.c ?? rows[0]?.ceiling }) : null,
      truncated: Number(rows[0]?.candidates ?? 0) > repo.SEARCH_CANDIDATES,
    };
  });
  await nameFormerParticipants(
    deps,
    ctx.userId,
    found.items.map((hit) => hit.thread),
  );
  return found;
}

/**
 * Staff messages mentioning the patient, newest first, from threads the caller takes part in (what a
 * skill with patients:read sees). Bodies are returned whole; the caller shortens them.
 */
export async function recentMentions(deps: AppDeps, ctx: Ctx, patientId: string, limit: number) {
  const rows = await withTenant(deps.db, ctx, async (tx) => {
    const found = await repo.recentMentions(tx, ctx.workspaceId, ctx.userId, patientId, limit);
    const since = await memberSince(tx, ctx);
    if (!since) return found;
    const threads = await repo.findThreads(tx, ctx.workspaceId, [...new Set(found.map((m) => m.threadId))]);
    const older = new Set(threads.filter((t) => t.createdAt < since).map((t) => t.id));
    return found.filter((m) => !(older.has(m.threadId) && m.createdAt < since));
  });
  return rows.map((m) => ({ ...m, createdAt: m.createdAt.toISOString() }));
}
