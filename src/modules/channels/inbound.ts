// Storing verified inbound messages, set-based: however many messages a batch holds (one webhook's, or
// many webhooks' under group commit), the contacts and conversations are one statement, the messages
// and the conversations' counters another, the events and notices a few more.
import { sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { preparedRows } from '../../platform/db/tenant.js';
import { publishEvents } from '../../platform/events/events.js';
import { linkUrl } from '../../platform/http/url-guard.js';
import { newId } from '../../platform/ids.js';
import { storableText } from '../../platform/text.js';
import { attachmentLabel } from './providers/content.js';
import type { InboundMessage } from './providers/index.js';
import type { channelConnections } from './tables.js';

export type ConnectionRow = typeof channelConnections.$inferSelect;

export const CHANNELS_NOTIFY = 'atrium_channels';
export interface ChannelNotice {
  /** workspace id */
  w: string;
  /** conversation id */
  c: string;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * At most `n` UTF-16 units, with `…` in place of what was cut. The cut is never inside a surrogate pair
 * (a lone half is not storable: PostgreSQL's JSON refuses it) nor inside a grapheme (a flag, a skin-toned
 * or family emoji, a letter with its accents stays whole or goes). Text within the limit is returned as is.
 */
export function clip(text: string, n: number): string {
  if (text.length <= n) return text;
  let cut = Math.max(0, n - 1);
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  // The grapheme the cut falls in starts at the last boundary at or before it (only the clipped part
  // and a little after it are segmented).
  let boundary = 0;
  for (const { index } of graphemes.segment(text.slice(0, cut + 16))) {
    if (index > cut) break;
    boundary = index;
  }
  return `${text.slice(0, boundary)}…`;
}

/** Text as stored: well-formed UTF-16, C0 controls (but tab and newlines) and DEL removed, at most 8,000 characters. */
export function clean(text: string): string {
  return clip(storableText(text), 8000);
}

/** Wakes the inbox streams of these conversations after commit (one statement). */
export async function notifyConversations(tx: Tx, workspaceId: string, conversationIds: Iterable<string>) {
  const notices = [...new Set(conversationIds)].map((c) =>
    JSON.stringify({ w: workspaceId, c } satisfies ChannelNotice),
  );
  if (notices.length === 0) return;
  await tx.execute(
    sql`SELECT pg_notify(${CHANNELS_NOTIFY}, n) FROM jsonb_array_elements_text(${JSON.stringify(notices)}::jsonb) AS n`,
  );
}

/** No provider's message is older than this; a time before it is the provider's error, not the message's. */
const EARLIEST_MESSAGE = Date.parse('2000-01-01T00:00:00Z');
/** How far ahead of our clock a provider's clock may be before its time is not believed. */
const CLOCK_SKEW_MS = 60 * 60_000;

/**
 * The time a message is filed at: the provider's own time when it is a believable one, else the
 * time it reached us. A verified message with a nonsense time (none, before 2000, in the future,
 * or past what the database can hold) is still stored, never refused or failed on it.
 */
export function messageTime(at: Date, received: Date = new Date()): Date {
  const t = at.getTime();
  return Number.isFinite(t) && t >= EARLIEST_MESSAGE && t <= received.getTime() + CLOCK_SKEW_MS ? at : received;
}

/**
 * A read or delivery watermark ("everything sent before this"): one in the future means everything
 * sent so far; `undefined` for one that cannot mean any message (no time, or before 2000).
 */
export function watermarkTime(at: Date, received: Date = new Date()): Date | undefined {
  const t = at.getTime();
  if (!Number.isFinite(t) || t < EARLIEST_MESSAGE) return undefined;
  return t > received.getTime() ? received : at;
}

export interface StoredInbound {
  messageId: string;
  conversationId: string;
  contactId: string;
  /**
   * The contact has no name and the provider has not refused to tell it in the last 30 days: a
   * channel whose webhooks carry no name (Messenger, Instagram) asks for it (`channels.contact-profile`).
   */
  nameWanted: boolean;
}

/**
 * Stores a connection's inbound messages; one answer per message, `null` for one already stored
 * (a provider's retry, or the same id twice in the batch). Contacts keep a known name or phone when
 * a message carries none; each conversation's preview is its newest new message and its unread count
 * grows by the number of new ones.
 */
export async function storeInbound(
  tx: Tx,
  connection: ConnectionRow,
  messages: InboundMessage[],
): Promise<(StoredInbound | null)[]> {
  if (messages.length === 0) return [];
  const { workspaceId, id: connectionId, channel } = connection;
  const received = new Date();
  const rows = messages.map((m, ord) => {
    const text = clean(m.text);
    const attachments = m.attachments.slice(0, 10).map((a) => {
      // Shown as a link in the inbox: only an http(s) address is kept.
      const url = linkUrl(a.url);
      return {
        type: clip(clean(a.type), 40),
        ...(url ? { url: clip(clean(url), 2000) } : {}),
        ...(a.mimeType ? { mimeType: clip(clean(a.mimeType), 100) } : {}),
        ...(a.name ? { name: clip(clean(a.name), 300) } : {}),
      };
    });
    return {
      ord,
      id: newId('chm'),
      ext: clip(clean(m.contact.externalId), 200),
      name: m.contact.name ? clip(clean(m.contact.name), 200) : null,
      phone: m.contact.phone ? clip(clean(m.contact.phone), 40) : null,
      pid: clip(clean(m.providerMessageId), 200),
      dedup: clip(clean(m.dedupKey), 220),
      text,
      att: attachments,
      at: messageTime(m.at, received).toISOString(),
      preview: clip(text || (attachments.length ? `[${attachmentLabel(attachments[0].type)}]` : ''), 200),
    };
  });

  // Contacts (the newest known name and phone of each) and their conversations, in key order.
  const people = new Map<string, { ext: string; name: string | null; phone: string | null }>();
  for (const r of rows) {
    const known = people.get(r.ext);
    people.set(r.ext, { ext: r.ext, name: r.name ?? known?.name ?? null, phone: r.phone ?? known?.phone ?? null });
  }
  const contactInput = [...people.values()]
    .sort((a, b) => (a.ext < b.ext ? -1 : a.ext > b.ext ? 1 : 0))
    .map((p) => ({ ...p, ctc: newId('ctc'), cnv: newId('cnv') }));
  const threads = await preparedRows<{
    ext: string;
    contact_id: string;
    conversation_id: string;
    name_wanted: boolean;
  }>(
    tx,
    sql`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(contactInput)}::jsonb)
                 AS x(ext text, name text, phone text, ctc text, cnv text)
    ), c AS (
      INSERT INTO channel_contacts (workspace_id, id, connection_id, channel, external_id, name, phone)
      SELECT ${workspaceId}, ctc, ${connectionId}, ${channel}, ext, name, phone FROM input ORDER BY ext
      ON CONFLICT (workspace_id, connection_id, external_id) DO UPDATE
         SET name = coalesce(excluded.name, channel_contacts.name),
             phone = coalesce(excluded.phone, channel_contacts.phone)
      RETURNING id, external_id,
                name IS NULL AND (name_refused_at IS NULL OR name_refused_at < now() - interval '30 days') AS name_wanted
    ), v AS (
      INSERT INTO channel_conversations (workspace_id, id, connection_id, channel, contact_id)
      SELECT ${workspaceId}, i.cnv, ${connectionId}, ${channel}, c.id
        FROM c JOIN input i ON i.ext = c.external_id ORDER BY c.id
      ON CONFLICT (workspace_id, contact_id) DO UPDATE SET connection_id = excluded.connection_id
      RETURNING id, contact_id
    )
    SELECT c.external_id AS ext, c.id AS contact_id, v.id AS conversation_id, c.name_wanted
      FROM v JOIN c ON c.id = v.contact_id`,
  );
  const threadOf = new Map(threads.map((t) => [t.ext, t]));

  // Messages, each dedup key once; the conversations' preview and unread count from the new ones.
  const firstOfKey = new Map<string, number>();
  for (const r of rows) if (!firstOfKey.has(r.dedup)) firstOfKey.set(r.dedup, r.ord);
  const messageInput = rows
    .filter((r) => firstOfKey.get(r.dedup) === r.ord)
    .map((r) => ({
      ord: r.ord,
      id: r.id,
      cnv: threadOf.get(r.ext)?.conversation_id,
      pid: r.pid,
      dedup: r.dedup,
      text: r.text,
      att: r.att,
      at: r.at,
      preview: r.preview,
    }));
  const fresh = await preparedRows<{ id: string }>(
    tx,
    sql`
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(messageInput)}::jsonb)
                 AS x(ord int, id text, cnv text, pid text, dedup text, text text, att jsonb, at timestamptz, preview text)
    ), m AS (
      INSERT INTO channel_messages (workspace_id, id, conversation_id, connection_id, channel, direction,
                                    provider_message_id, dedup_key, text, attachments, status, at)
      SELECT ${workspaceId}, id, cnv, ${connectionId}, ${channel}, 'in', pid, dedup, text, att, 'received', at
        FROM input ORDER BY ord
      ON CONFLICT DO NOTHING
      RETURNING id
    ), fresh AS (
      SELECT i.ord, i.id, i.cnv, i.at, i.preview FROM m JOIN input i ON i.id = m.id
    ), counted AS (
      UPDATE channel_conversations cv
         SET last_message_text = l.preview, last_message_at = l.at,
             unread_count = cv.unread_count + l.n, updated_at = now()
        FROM (SELECT DISTINCT ON (cnv) cnv, preview, at, count(*) OVER (PARTITION BY cnv) AS n
                FROM fresh ORDER BY cnv, ord DESC) l
       WHERE cv.workspace_id = ${workspaceId} AND cv.id = l.cnv
    ), notices AS (
      -- The inbox streams of these conversations wake after commit (ChannelNotice, one per conversation).
      SELECT count(pg_notify(${CHANNELS_NOTIFY}, json_build_object('w', ${workspaceId}::text, 'c', cnv)::text)) AS n
        FROM (SELECT DISTINCT cnv FROM fresh) d
    )
    SELECT id FROM fresh, notices`,
  );
  const stored = new Set(fresh.map((f) => f.id));

  const results = rows.map((r): StoredInbound | null => {
    const thread = threadOf.get(r.ext);
    if (!stored.has(r.id) || !thread) return null;
    return {
      messageId: r.id,
      conversationId: thread.conversation_id,
      contactId: thread.contact_id,
      nameWanted: thread.name_wanted,
    };
  });
  const created = results.filter((r): r is StoredInbound => r !== null);
  await publishEvents(
    tx,
    { workspaceId },
    'channel.message.received',
    created.map((r) => ({ messageId: r.messageId, conversationId: r.conversationId, channel, contactId: r.contactId })),
  );
  return results;
}
