// Inbound messaging channels (contract §8): connections with sealed credentials, webhook receipt
// (verified on the raw bytes before anything is read or stored, deduplicated by the provider's id
// under a unique constraint), the inbox (conversations, messages, unread counts, statuses),
// replies through each provider's send API, and linking a contact to a patient (audited).
import { and, desc, eq, gt, inArray, isNotNull, isNull, lte, or, type SQL, sql } from 'drizzle-orm';
import { countAccepted, countRefused } from '../../platform/acceptance.js';
import { auditPhiShown, writeAudit } from '../../platform/audit/audit.js';
import type { RequestContext, Tier } from '../../platform/context.js';
import { encryptSecret, safeEqual } from '../../platform/crypto.js';
import type { Tx } from '../../platform/db/client.js';
import { groupCommit } from '../../platform/db/group-commit.js';
import { inList } from '../../platform/db/lists.js';
import { withSystem, withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound, validationFailed } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { decodeCursor, encodeCursor, exactTime, olderThanCursor, timeIdCursor } from '../../platform/pagination.js';
import { requireFeature } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import { workspaceTier } from '../identity/index.js';
import { patientExists, patientNames } from '../patients/index.js';
import { aad, baseUrlOf, credentialsOf, keys } from './credentials.js';
import { type ConnectionRow, clean, clip, notifyConversations, storeInbound, watermarkTime } from './inbound.js';
import { enqueueContactProfiles } from './profiles.js';
import { attachmentLabel } from './providers/content.js';
import {
  ADAPTERS,
  CHANNEL_LABEL,
  type ChannelAdapter,
  type ChannelName,
  type InboundMessage,
  MalformedPayload,
  SendFailed,
  type StatusUpdate,
  type WebhookRequest,
} from './providers/index.js';
import {
  channelConnections,
  channelContacts,
  channelConversations,
  channelMessages,
  channelPendingStatuses,
} from './tables.js';

export { CHANNELS_NOTIFY, type ChannelNotice } from './inbound.js';

/** Where a provider reaches this workspace's connection. */
export const webhookUrlOf = (deps: AppDeps, channel: string, id: string) =>
  `${deps.selfUrl()}/api/v1/${channel}/webhook?connection=${id}`;

// ---------------------------------------------------------------- receipt counters (health probes)

/** The acceptance source of a channel's webhook (`countAccepted` / `measureAcceptance`). */
export const acceptanceSource = (channel: ChannelName) => `webhook:${channel}`;

// ---------------------------------------------------------------- connections

const presentConnection = (deps: AppDeps, r: ConnectionRow) => ({
  id: r.id,
  channel: r.channel as ChannelName,
  name: r.name,
  webhookUrl: webhookUrlOf(deps, r.channel, r.id),
  createdAt: r.createdAt.toISOString(),
});

export async function connect(
  deps: AppDeps,
  ctx: RequestContext,
  input: { channel: ChannelName; name: string; credentials: Record<string, unknown> },
) {
  requireFeature(ctx, 'inbound_channels');
  const adapter = ADAPTERS[input.channel];
  const parsed = adapter.credentials.safeParse(input.credentials);
  if (!parsed.success) {
    throw validationFailed(
      parsed.error.issues.map((i) => ({ path: ['body', 'credentials', ...i.path].join('.'), message: i.message })),
      `Some of these ${CHANNEL_LABEL[input.channel]} credentials are not right: see each field`,
    );
  }
  const id = newId('chn');
  const webhookUrl = webhookUrlOf(deps, input.channel, id);
  // Telegram learns its webhook from us: connecting is one step. A refusal stores nothing.
  if (adapter.register) {
    try {
      await adapter.register(
        { baseUrl: baseUrlOf(deps, adapter), requestId: ctx.requestId, statusCallbackUrl: webhookUrl, breakerKey: id },
        parsed.data,
        webhookUrl,
      );
    } catch (err) {
      if (err instanceof SendFailed)
        throw new AppError('provider_refused', 502, err.message, { provider: input.channel });
      throw err;
    }
  }
  const row = await withTenant(deps.db, ctx, async (tx) => {
    const inserted = await insertConnection(tx, deps, ctx, id, { ...input, credentials: parsed.data });
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'channel.connected',
      target: id,
      connectionId: id,
      channel: input.channel,
    });
    return inserted;
  });
  return presentConnection(deps, row);
}

/** Stores a connection with its credentials sealed (bound to the workspace and the connection id). */
async function insertConnection(
  tx: Tx,
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  input: { channel: ChannelName; name: string; credentials: Record<string, string> },
): Promise<ConnectionRow> {
  const [row] = await tx
    .insert(channelConnections)
    .values({
      workspaceId: ctx.workspaceId,
      id,
      channel: input.channel,
      name: input.name,
      credentialsEnc: encryptSecret(keys(deps)[0], JSON.stringify(input.credentials), aad(ctx.workspaceId, id)),
      createdBy: ctx.userId,
    })
    .returning();
  return row;
}

export async function listConnections(deps: AppDeps, ctx: RequestContext) {
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(channelConnections)
      .where(and(eq(channelConnections.workspaceId, ctx.workspaceId), isNull(channelConnections.deletedAt)))
      .orderBy(channelConnections.createdAt),
  );
  return { items: rows.map((r) => presentConnection(deps, r)) };
}

export async function disconnect(deps: AppDeps, ctx: RequestContext, id: string): Promise<void> {
  await withTenant(deps.db, ctx, async (tx) => {
    const done = await tx
      .update(channelConnections)
      .set({ deletedAt: sql`now()`, credentialsEnc: '' })
      .where(
        and(
          eq(channelConnections.workspaceId, ctx.workspaceId),
          eq(channelConnections.id, id),
          isNull(channelConnections.deletedAt),
        ),
      )
      .returning({ id: channelConnections.id, channel: channelConnections.channel });
    if (!done[0]) throw notFound('Channel connection');
    forgetConnection(deps, done[0].channel, id);
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'channel.disconnected',
      target: id,
      connectionId: id,
      channel: done[0].channel,
    });
  });
}

/** A workspace's connections that are not disconnected, narrowed by `which`. */
const liveConnections = (workspaceId: string, which: SQL) =>
  and(eq(channelConnections.workspaceId, workspaceId), which, isNull(channelConnections.deletedAt));

async function liveConnection(tx: Tx, workspaceId: string, id: string) {
  const [row] = await tx
    .select()
    .from(channelConnections)
    .where(liveConnections(workspaceId, eq(channelConnections.id, id)));
  return row;
}

// ---------------------------------------------------------------- webhooks

const unverified = () =>
  new AppError('unauthenticated', 401, 'The request is not signed by the provider for this connection');

/** Finds a live connection of the channel by id, across workspaces (the provider does not sign in). */
async function connectionForWebhook(deps: AppDeps, channel: ChannelName, id: string | undefined) {
  if (!id || !/^chn_[0-9a-z]{10,40}$/.test(id)) return undefined;
  // Cross-tenant by design: the webhook names only the connection; its workspace comes from here.
  return withSystem(deps.db, async (tx) => {
    const [row] = await tx
      .select()
      .from(channelConnections)
      .where(
        and(
          eq(channelConnections.id, id),
          eq(channelConnections.channel, channel),
          isNull(channelConnections.deletedAt),
        ),
      );
    if (!row) return undefined;
    const tier = await workspaceTier(tx, row.workspaceId);
    return tier ? { row, tier } : undefined;
  });
}

/**
 * Connections as webhooks see them, kept for a short while: a provider posts to the same one
 * again and again, and its signature is checked before anything else. A connection's id and
 * credentials never change, and whether it is still live is checked again in the transaction that
 * stores (a disconnect on any instance takes effect at once); only the decrypted credentials and
 * the workspace are reused.
 */
const WEBHOOK_CONNECTION_TTL_MS = 30_000;
const WEBHOOK_CONNECTIONS_MAX = 10_000;
interface KnownConnection {
  row: ConnectionRow;
  credentials: Record<string, string>;
  /** The workspace's tier: a workspace moved below Standard receives nothing. */
  tier: Tier;
  until: number;
}
const knownConnections = new WeakMap<AppDeps['db'], Map<string, KnownConnection>>();

/** This instance's known connections; a tier change (on any instance: the auth NOTIFY) forgets them all. */
function knownConnectionsOf(deps: AppDeps): Map<string, KnownConnection> {
  let known = knownConnections.get(deps.db);
  if (!known) {
    const fresh = new Map<string, KnownConnection>();
    deps.principals.onInvalidate((key) => {
      if (key === '*') fresh.clear();
    });
    knownConnections.set(deps.db, fresh);
    known = fresh;
  }
  return known;
}

async function webhookConnection(
  deps: AppDeps,
  channel: ChannelName,
  id: string | undefined,
): Promise<KnownConnection | undefined> {
  const known = knownConnectionsOf(deps);
  const key = `${channel}:${id}`;
  const hit = known.get(key);
  if (hit && hit.until > Date.now()) return hit;
  known.delete(key);
  const found = await connectionForWebhook(deps, channel, id);
  if (!found) return undefined;
  const { row, tier } = found;
  if (known.size >= WEBHOOK_CONNECTIONS_MAX) known.delete(known.keys().next().value as string);
  const entry = { row, tier, credentials: credentialsOf(deps, row), until: Date.now() + WEBHOOK_CONNECTION_TTL_MS };
  known.set(key, entry);
  return entry;
}

function forgetConnection(deps: AppDeps, channel: string, id: string) {
  knownConnections.get(deps.db)?.delete(`${channel}:${id}`);
}

/** Meta's subscription handshake: the challenge when the verify token matches, else 403. */
export async function metaHandshake(
  deps: AppDeps,
  channel: ChannelName,
  query: { connection?: string; 'hub.mode'?: string; 'hub.verify_token'?: string; 'hub.challenge'?: string },
): Promise<string> {
  const row = (await connectionForWebhook(deps, channel, query.connection))?.row;
  const adapter = ADAPTERS[channel];
  const expected = row && adapter.verifyToken ? adapter.verifyToken(credentialsOf(deps, row)) : undefined;
  if (
    query['hub.mode'] !== 'subscribe' ||
    !expected ||
    !query['hub.challenge'] ||
    !safeEqual(query['hub.verify_token'] ?? '', expected)
  ) {
    throw new AppError('forbidden', 403, 'The verify token does not match this connection');
  }
  return query['hub.challenge'];
}

/**
 * One provider callback: verified first (401 and nothing stored otherwise), then parsed (400 for a
 * payload that is not the provider's shape), then stored. A message the provider sends again is
 * acknowledged and stored once.
 *
 * Storing is a group commit: callbacks for one workspace that arrive while its previous batch is
 * being written are stored together in the next transaction, and each is answered only after that
 * transaction committed (nothing acknowledged is ever lost).
 */
export async function receiveWebhook(
  deps: AppDeps,
  channel: ChannelName,
  connectionId: string | undefined,
  request: WebhookRequest,
  /** `from`: the client address (a refusal is counted against the channel's health per client network). */
  options: { messageId?: string; from?: string } = {},
): Promise<{ stored: number; statuses: number; skipped: Record<string, number> }> {
  const from = options.from ?? 'unknown';
  const known = await webhookConnection(deps, channel, connectionId);
  const adapter = ADAPTERS[channel];
  if (!known || !adapter.verify(request, known.credentials)) {
    // Only a real connection whose signature fails is a signal (a secret out of step at the provider);
    // a call naming no connection, or one that does not exist, is anyone's and not the channel's health.
    if (known) countRefused(deps, acceptanceSource(channel), from);
    throw unverified();
  }
  // Verified, but the workspace is no longer on a tier with channels: the provider is told (and
  // retries or gives up, as it does), and nothing is stored. Not counted against the channel's health.
  requireFeature(known, 'inbound_channels');
  let events: (InboundMessage | StatusUpdate)[];
  // Parts of the notification that are not handled: acknowledged with the rest, counted by kind.
  const skipped: Record<string, number> = {};
  try {
    events = [];
    for (const event of adapter.parse(request)) {
      if (event.kind === 'skipped') skipped[event.what] = (skipped[event.what] ?? 0) + 1;
      else if (event.kind === 'status' && event.providerMessageIds)
        // The ids a report names, as our messages' provider ids are stored (well-formed text, 200 at most):
        // a malformed one (a lone surrogate) matches nothing instead of failing the whole notification.
        events.push({ ...event, providerMessageIds: event.providerMessageIds.map((id) => clip(clean(id), 200)) });
      else events.push(event);
    }
  } catch (err) {
    if (err instanceof MalformedPayload) {
      countRefused(deps, acceptanceSource(channel), from);
      throw new AppError('malformed_payload', 400, err.message);
    }
    throw err;
  }
  const messageId =
    options.messageId && /^chm_[0-9a-z]{10,40}$/.test(options.messageId) ? options.messageId : undefined;
  const groups = await routeByBusiness(deps, channel, known, events);
  const results = await Promise.all(
    groups.map(async (group) => ({
      own: group.connection.id === known.row.id,
      result: await inboundCommitter(deps).submit({ connection: group.connection, events: group.events, messageId }),
    })),
  );
  if (results.some((r) => r.own && !r.result)) {
    // Disconnected since its credentials were read: the same answer as for an unknown connection
    // (and, like it, not counted against the channel's health).
    forgetConnection(deps, channel, known.row.id);
    throw unverified();
  }
  countAccepted(deps, acceptanceSource(channel));
  const total = { stored: 0, statuses: 0, skipped };
  for (const r of results) {
    total.stored += r.result?.stored ?? 0;
    total.statuses += r.result?.statuses ?? 0;
  }
  return total;
}

/**
 * Whose events these are. One Meta app posts the events of every WhatsApp number, Facebook page and
 * Instagram account it serves to one callback URL, so a notification may name another number (its
 * `phone_number_id`) or page (`entry[].id`) than this connection's: those events go to the
 * workspace's live connection of that number or page, if it has one that was signed with the same
 * app secret, and are otherwise acknowledged and not stored (filed here they would show under the
 * wrong number or page, and replies would leave from it).
 */
async function routeByBusiness(
  deps: AppDeps,
  channel: ChannelName,
  known: KnownConnection,
  events: (InboundMessage | StatusUpdate)[],
): Promise<{ connection: ConnectionRow; events: (InboundMessage | StatusUpdate)[] }[]> {
  const adapter = ADAPTERS[channel] as ChannelAdapter;
  if (!adapter.businessIdOf) return [{ connection: known.row, events }];
  const own = adapter.businessIdOf(known.credentials);
  const byBusiness = new Map<string, (InboundMessage | StatusUpdate)[]>();
  for (const event of events) {
    const id = event.businessId ?? own;
    const list = byBusiness.get(id);
    if (list) list.push(event);
    else byBusiness.set(id, [event]);
  }
  if (byBusiness.size === 0) return [{ connection: known.row, events }];
  const groups: { connection: ConnectionRow; events: (InboundMessage | StatusUpdate)[] }[] = [];
  let siblings: { row: ConnectionRow; credentials: Record<string, string> }[] | undefined;
  const secret = adapter.signingSecretOf?.(known.credentials);
  for (const [id, list] of byBusiness) {
    if (id === own) {
      groups.push({ connection: known.row, events: list });
      continue;
    }
    siblings ??= await withTenant(deps.db, { workspaceId: known.row.workspaceId }, async (tx) =>
      (
        await tx
          .select()
          .from(channelConnections)
          .where(liveConnections(known.row.workspaceId, eq(channelConnections.channel, channel)))
      ).map((row) => ({ row, credentials: credentialsOf(deps, row) })),
    );
    const match = siblings.find(
      (s) => adapter.businessIdOf?.(s.credentials) === id && adapter.signingSecretOf?.(s.credentials) === secret,
    );
    if (match) groups.push({ connection: match.row, events: list });
  }
  return groups;
}

interface InboundBatchItem {
  connection: ConnectionRow;
  events: (InboundMessage | StatusUpdate)[];
  /** Our reply's id, when the provider reports on it at a URL naming it (Twilio's StatusCallback). */
  messageId?: string;
}
type InboundResult = { stored: number; statuses: number } | null;

const committers = new WeakMap<AppDeps['db'], ReturnType<typeof groupCommit<InboundBatchItem, InboundResult>>>();

/** Batches written so far by this database's group commit (the benchmark prints them). */
export const inboundBatchStats = (deps: AppDeps) =>
  committers.get(deps.db)?.stats() ?? { batches: 0, items: 0, largest: 0 };

/** The group commit of one database: batches per workspace. */
function inboundCommitter(deps: AppDeps) {
  let committer = committers.get(deps.db);
  if (!committer) {
    committer = groupCommit<InboundBatchItem, InboundResult>({
      key: (item) => item.connection.workspaceId,
      flush: (workspaceId, items) => storeBatch(deps, workspaceId, items),
    });
    committers.set(deps.db, committer);
  }
  return committer;
}

/** One transaction for a workspace's batch: `null` for an item whose connection is gone. */
async function storeBatch(deps: AppDeps, workspaceId: string, items: InboundBatchItem[]): Promise<InboundResult[]> {
  return withTenant(deps.db, { workspaceId }, async (tx) => {
    const ids = [...new Set(items.map((i) => i.connection.id))];
    const live = new Set(
      (
        await tx
          .select({ id: channelConnections.id })
          .from(channelConnections)
          .where(liveConnections(workspaceId, inArray(channelConnections.id, ids)))
      ).map((r) => r.id),
    );
    const results: InboundResult[] = items.map((i) => (live.has(i.connection.id) ? { stored: 0, statuses: 0 } : null));
    // The provider ids the batch's delivery reports name are locked against a reply storing one of them: all
    // at once, in one order, and before any row is touched (a reply takes the same lock before it updates its
    // conversation, so taking it after storing messages into that conversation could deadlock with it).
    await lockProviderIds(
      tx,
      items.flatMap((item) =>
        live.has(item.connection.id)
          ? item.events.flatMap((e) =>
              e.kind === 'status' && e.providerMessageIds?.length
                ? e.providerMessageIds.slice(0, 100).map((pid) => ({ connectionId: item.connection.id, pid }))
                : [],
            )
          : [],
      ),
    );
    // Messages of every item, per connection, in one set-based write each.
    for (const id of ids) {
      if (!live.has(id)) continue;
      const owners: number[] = [];
      const messages: InboundMessage[] = [];
      items.forEach((item, n) => {
        if (item.connection.id !== id) return;
        for (const e of item.events)
          if (e.kind === 'message') {
            owners.push(n);
            messages.push(e);
          }
      });
      const connection = items[owners[0] ?? 0].connection;
      const stored = await storeInbound(tx, connection, messages);
      stored.forEach((s, k) => {
        const r = results[owners[k]];
        if (s && r) r.stored += 1;
      });
      // Webhooks without names (Messenger, Instagram): each new nameless contact's name is asked for once.
      if (ADAPTERS[connection.channel as ChannelName].profile)
        await enqueueContactProfiles(
          tx,
          workspaceId,
          stored.flatMap((s) => (s?.nameWanted ? [s.contactId] : [])),
        );
    }
    // Delivery and read reports, in the order they came.
    for (const [n, item] of items.entries()) {
      const r = results[n];
      if (!r) continue;
      for (const e of item.events)
        if (e.kind === 'status') r.statuses += await applyStatus(tx, item.connection, e, item.messageId);
    }
    return results;
  });
}

const RANK = { sending: 0, sent: 1, delivered: 2, read: 3, failed: 4, received: 0 } as const;

/** A delivery/read report moves our messages forward only (a late `delivered` never undoes `read`). */
async function applyStatus(tx: Tx, connection: ConnectionRow, s: StatusUpdate, messageId?: string): Promise<number> {
  // `failed` only for a message not yet delivered: one the patient has received or read stays so.
  const lower =
    s.status === 'failed'
      ? (['sending', 'sent'] as const)
      : (Object.keys(RANK) as (keyof typeof RANK)[]).filter(
          (k) => k !== 'received' && RANK[k] < RANK[s.status] && k !== 'failed',
        );
  if (lower.length === 0) return 0;
  const base = and(
    eq(channelMessages.workspaceId, connection.workspaceId),
    eq(channelMessages.connectionId, connection.id),
    eq(channelMessages.direction, 'out'),
    inArray(channelMessages.status, lower),
  );
  let where = base;
  if (s.providerMessageIds?.length) {
    const byProviderId = inArray(channelMessages.providerMessageId, s.providerMessageIds.slice(0, 100));
    // A report that names our reply arrives before the provider's answer to the send was stored: it
    // finds the reply by our id (status only moves forward, so the answer does not undo it).
    where = and(
      base,
      messageId
        ? or(byProviderId, and(eq(channelMessages.id, messageId), isNull(channelMessages.providerMessageId)))
        : byProviderId,
    );
  } else if (s.contactExternalId && s.upToProviderMessageId) {
    // This message (one of ours, to this contact) and every earlier one of ours in its conversation.
    // Its time to the microsecond (a JavaScript Date would cut it to the millisecond and leave it out).
    const [seen] = await tx
      .select({ conversationId: channelMessages.conversationId, at: exactTime(channelMessages.at) })
      .from(channelMessages)
      .innerJoin(
        channelConversations,
        and(
          eq(channelConversations.workspaceId, channelMessages.workspaceId),
          eq(channelConversations.id, channelMessages.conversationId),
        ),
      )
      .innerJoin(channelContacts, contactOfConversation)
      .where(
        and(
          eq(channelMessages.workspaceId, connection.workspaceId),
          eq(channelMessages.connectionId, connection.id),
          eq(channelMessages.providerMessageId, s.upToProviderMessageId),
          eq(channelContacts.externalId, s.contactExternalId),
        ),
      )
      .limit(1);
    if (!seen) return 0;
    where = and(
      base,
      eq(channelMessages.conversationId, seen.conversationId),
      sql`${channelMessages.at} <= ${seen.at}::timestamptz`,
    );
  } else if (s.contactExternalId && s.watermark) {
    const watermark = watermarkTime(s.watermark);
    if (!watermark) return 0;
    const conversations = tx
      .select({ id: channelConversations.id })
      .from(channelConversations)
      .innerJoin(channelContacts, contactOfConversation)
      .where(
        and(
          eq(channelConversations.workspaceId, connection.workspaceId),
          eq(channelContacts.connectionId, connection.id),
          eq(channelContacts.externalId, s.contactExternalId),
        ),
      );
    where = and(base, inArray(channelMessages.conversationId, conversations), lte(channelMessages.at, watermark));
  } else {
    return 0;
  }
  const error = s.error ? clip(clean(s.error), 500) : null;
  const updated = await tx
    .update(channelMessages)
    .set({ status: s.status, error })
    .where(where)
    .returning({ conversationId: channelMessages.conversationId });
  if (s.providerMessageIds?.length && updated.length < s.providerMessageIds.length)
    await keepUnmatched(tx, connection, s.providerMessageIds.slice(0, 100), s.status, error);
  await notifyConversations(
    tx,
    connection.workspaceId,
    updated.map((u) => u.conversationId),
  );
  return updated.length;
}

/**
 * Serializes a report about provider ids with the reply that stores one of them (a transaction-level
 * advisory lock per connection and provider id). Without it a report and the send's answer arriving
 * together could lose the report: the report's UPDATE finds no message, the reply stores its id and
 * commits, and the report's `keepUnmatched` then sees the message and keeps nothing; or the report's
 * pending row is not yet committed when the reply looks for it, and waits an hour to be pruned. Each
 * side takes the lock before it looks (the report before its UPDATE, the reply before storing the id),
 * so whichever comes second sees what the first committed. Several keys (a group-commit batch's) are
 * taken in one statement, sorted, so two transactions never wait on each other's keys in opposite orders.
 */
async function lockProviderIds(tx: Tx, ids: { connectionId: string; pid: string }[]): Promise<void> {
  const keys = [...new Set(ids.map((i) => `channels.status:${i.connectionId}:${i.pid}`))];
  if (keys.length === 0) return;
  await tx.execute(sql`
    SELECT pg_advisory_xact_lock(k)
      FROM (SELECT DISTINCT hashtext(key) AS k FROM jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb) AS key
             ORDER BY k) sorted`);
}

/** How long a report that overtook the send's answer waits for the reply's provider id. */
export const PENDING_STATUS_TTL_MS = 60 * 60_000;

/**
 * Reports about provider ids none of our messages has (yet): the send's answer, which brings the id, may
 * still be on its way (a `failed` that overtakes it would otherwise leave the reply `sent` for ever).
 * Kept per connection, id and status; `applyPendingStatuses` applies them when the id is stored.
 */
async function keepUnmatched(
  tx: Tx,
  connection: ConnectionRow,
  providerMessageIds: string[],
  status: StatusUpdate['status'],
  error: string | null,
) {
  await tx.execute(sql`
    INSERT INTO channel_pending_statuses (workspace_id, connection_id, provider_message_id, status, error)
    SELECT ${connection.workspaceId}, ${connection.id}, pid, ${status}, ${error}
      FROM (SELECT DISTINCT left(pid, 200) AS pid FROM jsonb_array_elements_text(${JSON.stringify(providerMessageIds)}::jsonb) AS pid) ids
     WHERE NOT EXISTS (SELECT 1 FROM channel_messages m
                        WHERE m.workspace_id = ${connection.workspaceId} AND m.connection_id = ${connection.id}
                          AND m.provider_message_id = ids.pid)
    ON CONFLICT (workspace_id, connection_id, provider_message_id, status)
    DO UPDATE SET error = excluded.error, received_at = excluded.received_at`);
}

/**
 * The reports that came for this provider id before it was stored (within the hour), applied in order
 * (`sent`, `delivered`, `read`, then `failed`, so statuses still only move forward) and removed.
 */
async function applyPendingStatuses(tx: Tx, connection: ConnectionRow, providerMessageId: string): Promise<number> {
  const pending = await tx
    .delete(channelPendingStatuses)
    .where(
      and(
        eq(channelPendingStatuses.workspaceId, connection.workspaceId),
        eq(channelPendingStatuses.connectionId, connection.id),
        eq(channelPendingStatuses.providerMessageId, providerMessageId),
      ),
    )
    .returning();
  const fresh = pending
    .filter((p) => Date.now() - p.receivedAt.getTime() <= PENDING_STATUS_TTL_MS)
    .sort((a, b) => RANK[a.status] - RANK[b.status]);
  let applied = 0;
  for (const p of fresh)
    applied += await applyStatus(tx, connection, {
      kind: 'status',
      status: p.status,
      providerMessageIds: [providerMessageId],
      error: p.error ?? undefined,
    });
  return applied;
}

/** Drops the reports that waited an hour for a message of ours (the schedule `channels.prune-pending-statuses`). */
export async function prunePendingStatuses(deps: AppDeps, now = new Date()): Promise<number> {
  // Every workspace's, by time only: a maintenance sweep of the whole table.
  const gone = await withSystem(deps.db, (tx) =>
    tx
      .delete(channelPendingStatuses)
      .where(lte(channelPendingStatuses.receivedAt, new Date(now.getTime() - PENDING_STATUS_TTL_MS)))
      .returning({ id: channelPendingStatuses.providerMessageId }),
  );
  return gone.length;
}

/**
 * The demo seed's door: a connection stored without calling the provider (the server is not
 * listening yet), and events stored as if a verified webhook had brought them.
 */
export async function seedConnection(
  deps: AppDeps,
  ctx: RequestContext,
  input: { channel: ChannelName; name: string; credentials: Record<string, string> },
  events: (InboundMessage | (InboundMessage & { reply: string }))[],
): Promise<{ contacts: Map<string, string> }> {
  const id = newId('chn');
  return withTenant(deps.db, ctx, async (tx) => {
    const row = await insertConnection(tx, deps, ctx, id, input);
    const contacts = new Map<string, string>();
    for (const event of events) {
      const [stored] = await storeInbound(tx, row, [event]);
      if (!stored) continue;
      const conversation = { id: stored.conversationId };
      contacts.set(event.contact.externalId, stored.contactId);
      // The demo's messages are from earlier today: the inbox is ordered by when they came.
      await tx
        .update(channelConversations)
        .set({ updatedAt: event.at })
        .where(
          and(eq(channelConversations.workspaceId, ctx.workspaceId), eq(channelConversations.id, conversation.id)),
        );
      if ('reply' in event) {
        const at = new Date(event.at.getTime() + 4 * 60_000);
        await tx.insert(channelMessages).values({
          workspaceId: ctx.workspaceId,
          id: newId('chm'),
          conversationId: conversation.id,
          connectionId: id,
          channel: input.channel,
          direction: 'out',
          providerMessageId: `demo-${newId('out')}`,
          text: event.reply,
          status: 'read',
          sentBy: ctx.userId,
          at,
        });
        await tx
          .update(channelConversations)
          .set({ lastMessageText: event.reply, lastMessageAt: at, unreadCount: 0, updatedAt: at })
          .where(
            and(eq(channelConversations.workspaceId, ctx.workspaceId), eq(channelConversations.id, conversation.id)),
          );
      }
    }
    return { contacts };
  });
}

// ---------------------------------------------------------------- the inbox

/**
 * A reply still `sending` this long after it was stored lost its send to a crash or restart (a send,
 * retries included, ends well within it): it is shown as failed, with a word that it may have gone
 * out. The row keeps `sending`, so a delivery report that still comes moves it on.
 */
export const SENDING_GIVEN_UP_MS = 5 * 60_000;
const INTERRUPTED = 'The send was interrupted (the service restarted during it); it may not have reached the patient';

type MessageRow = typeof channelMessages.$inferSelect;
const interrupted = (r: { status: string; at: Date }, now: number) =>
  r.status === 'sending' && now - r.at.getTime() > SENDING_GIVEN_UP_MS;
const presentMessage = (r: MessageRow, now = Date.now()) => {
  const cutOff = interrupted(r, now);
  return {
    id: r.id,
    conversationId: r.conversationId,
    channel: r.channel as ChannelName,
    direction: r.direction,
    providerMessageId: r.providerMessageId,
    text: r.text,
    attachments: r.attachments as { type: string; url?: string; mimeType?: string; name?: string }[],
    status: cutOff ? ('failed' as const) : r.status,
    error: cutOff ? INTERRUPTED : r.error,
    at: r.at.toISOString(),
  };
};

/** Conversations joined to their contact. */
const contactOfConversation = and(
  eq(channelContacts.workspaceId, channelConversations.workspaceId),
  eq(channelContacts.id, channelConversations.contactId),
);

/** Whether the workspace has a live connection on any of these channels (health banners). */
export async function hasLiveConnection(tx: Tx, workspaceId: string, channels: ChannelName[]): Promise<boolean> {
  const rows = await tx
    .select({ id: channelConnections.id })
    .from(channelConnections)
    .where(liveConnections(workspaceId, inArray(channelConnections.channel, channels)))
    .limit(1);
  return rows.length > 0;
}

/** A message as a conversation's preview: its text, else its first attachment's kind (`[Voice message]`). */
const previewOf = (m: { text: string; attachments: unknown }) => {
  const first = (m.attachments as { type?: string }[] | null)?.[0];
  return clip(m.text || (first?.type ? `[${attachmentLabel(first.type)}]` : ''), 200);
};

type ConversationFilter = { channel?: ChannelName; patientId?: string; id?: string };

/**
 * Conversations with their contact and newest message, most recent first; the linked patients among
 * them are named (read by id) and, being shown, audited as a PHI read in `context`.
 */
async function readConversations(
  tx: Tx,
  ctx: RequestContext,
  filter: ConversationFilter,
  page: { limit: number; after?: Parameters<typeof olderThanCursor>[2] },
  context: string,
) {
  // Each conversation's newest message (index on workspace, conversation, at): its direction and
  // status tell a reply the provider refused from one that went out.
  const last = tx
    .select({
      id: channelMessages.id,
      direction: channelMessages.direction,
      text: channelMessages.text,
      attachments: channelMessages.attachments,
      status: channelMessages.status,
      at: channelMessages.at,
    })
    .from(channelMessages)
    .where(
      and(
        eq(channelMessages.workspaceId, channelConversations.workspaceId),
        eq(channelMessages.conversationId, channelConversations.id),
      ),
    )
    .orderBy(desc(channelMessages.at), desc(channelMessages.id))
    .limit(1)
    .as('last_message');
  const rows = await tx
    .select({
      conversation: channelConversations,
      contact: channelContacts,
      last: {
        id: last.id,
        direction: last.direction,
        text: last.text,
        attachments: last.attachments,
        status: last.status,
        at: last.at,
      },
      key: exactTime(channelConversations.updatedAt),
    })
    .from(channelConversations)
    .innerJoin(channelContacts, contactOfConversation)
    .leftJoinLateral(last, sql`true`)
    .where(
      and(
        eq(channelConversations.workspaceId, ctx.workspaceId),
        filter.id ? eq(channelConversations.id, filter.id) : undefined,
        filter.channel ? eq(channelConversations.channel, filter.channel) : undefined,
        filter.patientId ? eq(channelContacts.patientId, filter.patientId) : undefined,
        olderThanCursor(channelConversations.updatedAt, channelConversations.id, page.after),
      ),
    )
    .orderBy(desc(channelConversations.updatedAt), desc(channelConversations.id))
    .limit(page.limit + 1);
  // A linked contact is shown by the patient's name (as the thread header already did, read by id):
  // seeing whose conversation it is, and its last words, is a PHI read (convention 16).
  const linked = [
    ...new Set(rows.slice(0, page.limit).flatMap((r) => (r.contact.patientId ? [r.contact.patientId] : []))),
  ];
  await auditPhiShown(tx, ctx, linked, context);
  const names = linked.length ? await patientNames(tx, ctx.workspaceId, linked) : new Map<string, string>();
  const now = Date.now();
  const items = rows.slice(0, page.limit).map(({ conversation: c, contact, last: newest }) => {
    const last = newest?.id ? newest : null;
    return {
      id: c.id,
      channel: c.channel as ChannelName,
      connectionId: c.connectionId,
      contact: {
        id: contact.id,
        externalId: contact.externalId,
        name: contact.name,
        phone: contact.phone,
        patientId: contact.patientId,
        patientName: contact.patientId ? (names.get(contact.patientId) ?? null) : null,
      },
      lastMessage: last
        ? {
            text: previewOf(last),
            at: last.at.toISOString(),
            direction: last.direction,
            status: interrupted(last, now) ? ('failed' as const) : last.status,
          }
        : null,
      unreadCount: c.unreadCount,
      updatedAt: c.updatedAt.toISOString(),
    };
  });
  const lastRow = rows.length > page.limit ? rows[page.limit - 1] : undefined;
  return { items, nextCursor: lastRow ? encodeCursor([lastRow.key, lastRow.conversation.id]) : null };
}

export async function listConversations(
  deps: AppDeps,
  ctx: RequestContext,
  query: { channel?: ChannelName; patientId?: string; limit: number; cursor?: string },
) {
  requireFeature(ctx, 'inbound_channels');
  const after = decodeCursor(query.cursor, timeIdCursor);
  return withTenant(deps.db, ctx, (tx) =>
    readConversations(
      tx,
      ctx,
      { channel: query.channel, patientId: query.patientId },
      { limit: query.limit, after },
      'channels.inbox',
    ),
  );
}

/**
 * One conversation, as the list shows it: the inbox opens a link to one (`/inbox?c=`, the patient
 * record's *Open in Inbox*) that is not among the pages it has loaded. 404 when not this workspace's.
 */
export async function getConversation(deps: AppDeps, ctx: RequestContext, id: string) {
  requireFeature(ctx, 'inbound_channels');
  const { items } = await withTenant(deps.db, ctx, (tx) =>
    readConversations(tx, ctx, { id }, { limit: 1 }, 'channels.conversation'),
  );
  if (!items[0]) throw notFound('Conversation');
  return items[0];
}

async function requireConversation(tx: Tx, workspaceId: string, id: string) {
  const [row] = await tx
    .select({ conversation: channelConversations, contact: channelContacts })
    .from(channelConversations)
    .innerJoin(channelContacts, contactOfConversation)
    .where(and(eq(channelConversations.workspaceId, workspaceId), eq(channelConversations.id, id)));
  if (!row) throw notFound('Conversation');
  return row;
}

/** How many unread conversations `GET /channels/unread` lists (the newest); its totals count them all. */
export const UNREAD_ITEMS_MAX = 200;

/**
 * The unread counts of the inbox, for the navigation's badge on every page: conversation ids,
 * channels and counts only, so showing the badge reads no patient's name or words (and writes no
 * `phi_access` row, as listing the conversations does). The list is the newest 200; the totals are
 * their own aggregate over every unread conversation (both read the partial index of unread ones).
 */
export async function unreadCounts(deps: AppDeps, ctx: RequestContext) {
  requireFeature(ctx, 'inbound_channels');
  const unread = and(eq(channelConversations.workspaceId, ctx.workspaceId), gt(channelConversations.unreadCount, 0));
  const { rows, totals } = await withTenant(deps.db, ctx, async (tx) => {
    const rows = await tx
      .select({
        conversationId: channelConversations.id,
        channel: channelConversations.channel,
        unreadCount: channelConversations.unreadCount,
        updatedAt: channelConversations.updatedAt,
      })
      .from(channelConversations)
      .where(unread)
      .orderBy(desc(channelConversations.updatedAt), desc(channelConversations.id))
      .limit(UNREAD_ITEMS_MAX);
    // Fewer than the limit: the list is every unread conversation, and its sum is the total.
    if (rows.length < UNREAD_ITEMS_MAX)
      return { rows, totals: { messages: rows.reduce((n, r) => n + r.unreadCount, 0), conversations: rows.length } };
    const [totals] = await tx
      .select({
        messages: sql<number>`coalesce(sum(${channelConversations.unreadCount}), 0)::int`,
        conversations: sql<number>`count(*)::int`,
      })
      .from(channelConversations)
      .where(unread);
    return { rows, totals };
  });
  return {
    total: totals.messages,
    conversations: totals.conversations,
    items: rows.map((r) => ({ ...r, channel: r.channel as ChannelName, updatedAt: r.updatedAt.toISOString() })),
  };
}

export async function listMessages(
  deps: AppDeps,
  ctx: RequestContext,
  query: { conversationId?: string; channel?: ChannelName; limit: number; cursor?: string },
) {
  requireFeature(ctx, 'inbound_channels');
  const after = decodeCursor(query.cursor, timeIdCursor);
  const rows = await withTenant(deps.db, ctx, async (tx) => {
    if (query.conversationId) {
      // A linked patient's conversation read is a PHI read outside their record (convention 16).
      const { contact } = await requireConversation(tx, ctx.workspaceId, query.conversationId);
      if (contact.patientId) await auditPhiShown(tx, ctx, [contact.patientId], 'channels.conversation');
    }
    const page = await tx
      .select({ message: channelMessages, key: exactTime(channelMessages.at) })
      .from(channelMessages)
      .where(
        and(
          eq(channelMessages.workspaceId, ctx.workspaceId),
          query.conversationId ? eq(channelMessages.conversationId, query.conversationId) : undefined,
          query.channel ? eq(channelMessages.channel, query.channel) : undefined,
          olderThanCursor(channelMessages.at, channelMessages.id, after),
        ),
      )
      .orderBy(desc(channelMessages.at), desc(channelMessages.id))
      .limit(query.limit + 1);
    if (!query.conversationId && page.length > 0) {
      // Messages of many conversations: each linked patient among them was read.
      const conversations = [...new Set(page.slice(0, query.limit).map((r) => r.message.conversationId))];
      const linked = await tx
        .selectDistinct({ patientId: channelContacts.patientId })
        .from(channelConversations)
        .innerJoin(channelContacts, contactOfConversation)
        .where(
          and(
            eq(channelConversations.workspaceId, ctx.workspaceId),
            inList(channelConversations.id, conversations),
            isNotNull(channelContacts.patientId),
          ),
        );
      await auditPhiShown(
        tx,
        ctx,
        linked.flatMap((l) => (l.patientId ? [l.patientId] : [])),
        'channels.conversation',
      );
    }
    return page;
  });
  const last = rows.length > query.limit ? rows[query.limit - 1] : undefined;
  return {
    items: rows.slice(0, query.limit).map((r) => presentMessage(r.message)),
    nextCursor: last ? encodeCursor([last.key, last.message.id]) : null,
  };
}

export async function markRead(deps: AppDeps, ctx: RequestContext, id: string): Promise<void> {
  requireFeature(ctx, 'inbound_channels');
  await withTenant(deps.db, ctx, async (tx) => {
    await requireConversation(tx, ctx.workspaceId, id);
    await tx
      .update(channelConversations)
      .set({ unreadCount: 0 })
      .where(and(eq(channelConversations.workspaceId, ctx.workspaceId), eq(channelConversations.id, id)));
    await notifyConversations(tx, ctx.workspaceId, [id]);
  });
}

/**
 * A reply: stored first as `sending` (so a crash mid-call leaves a visible message, never a lost
 * one), then sent through the provider, then `sent` with its id or `failed` with its words.
 */
export async function reply(deps: AppDeps, ctx: RequestContext, conversationId: string, text: string) {
  requireFeature(ctx, 'inbound_channels');
  const prepared = await withTenant(deps.db, ctx, async (tx) => {
    const { conversation, contact } = await requireConversation(tx, ctx.workspaceId, conversationId);
    const connection = await liveConnection(tx, ctx.workspaceId, conversation.connectionId);
    if (!connection) {
      throw new AppError(
        'channel_disconnected',
        409,
        'This conversation’s channel is disconnected; reconnect it to reply',
      );
    }
    const [row] = await tx
      .insert(channelMessages)
      .values({
        workspaceId: ctx.workspaceId,
        id: newId('chm'),
        conversationId,
        connectionId: connection.id,
        channel: connection.channel,
        direction: 'out',
        text: clean(text),
        status: 'sending',
        sentBy: ctx.userId,
      })
      .returning();
    // Contract §3's members of `message_send` (`module`, `threadId`, `messageId`), the conversation being
    // the thread; then the channel's own.
    await writeAudit(tx, ctx, 'message_send', {
      module: 'channels',
      threadId: conversationId,
      channel: connection.channel,
      conversationId,
      messageId: row.id,
      ...(contact.patientId ? { patientId: contact.patientId } : {}),
    });
    return { connection, contact, row };
  });
  const adapter = ADAPTERS[prepared.connection.channel as ChannelName];
  let outcome: { status: 'sent'; providerMessageId: string } | { status: 'failed'; error: string };
  try {
    const sent = await adapter.send(
      {
        baseUrl: baseUrlOf(deps, adapter),
        requestId: ctx.requestId,
        // Naming the reply lets a report that overtakes the provider's answer still find it.
        statusCallbackUrl: `${webhookUrlOf(deps, prepared.connection.channel, prepared.connection.id)}&message=${prepared.row.id}`,
        breakerKey: prepared.connection.id,
      },
      credentialsOf(deps, prepared.connection),
      { externalId: prepared.contact.externalId, phone: prepared.contact.phone },
      prepared.row.text,
    );
    outcome = { status: 'sent', providerMessageId: clip(clean(sent.providerMessageId), 200) };
  } catch (err) {
    if (!(err instanceof SendFailed)) ctx.log.error({ err }, 'channel send crashed');
    // The provider's words, as a status report's are kept: cleaned and at most 500 characters.
    outcome = {
      status: 'failed',
      error: clip(clean(err instanceof SendFailed ? err.message : 'The message could not be sent'), 500),
    };
  }
  const [row] = await withTenant(deps.db, ctx, async (tx) => {
    // A report about this id being written now is committed first, and found below (`lockProviderIds`).
    if (outcome.status === 'sent')
      await lockProviderIds(tx, [{ connectionId: prepared.connection.id, pid: outcome.providerMessageId }]);
    let updated = await tx
      .update(channelMessages)
      .set(
        outcome.status === 'sent'
          ? // A delivery report that raced ahead of this answer is kept (status only moves forward).
            {
              providerMessageId: outcome.providerMessageId,
              status: sql`CASE WHEN ${channelMessages.status} = 'sending' THEN 'sent' ELSE ${channelMessages.status} END`,
            }
          : { status: 'failed', error: outcome.error },
      )
      .where(and(eq(channelMessages.workspaceId, ctx.workspaceId), eq(channelMessages.id, prepared.row.id)))
      .returning();
    // Reports that overtook this answer (a `failed` the provider sent before telling us the id) apply now.
    if (
      outcome.status === 'sent' &&
      (await applyPendingStatuses(tx, prepared.connection, outcome.providerMessageId)) > 0
    ) {
      updated = await tx
        .select()
        .from(channelMessages)
        .where(and(eq(channelMessages.workspaceId, ctx.workspaceId), eq(channelMessages.id, prepared.row.id)));
    }
    await tx
      .update(channelConversations)
      .set({ lastMessageText: clip(prepared.row.text, 200), lastMessageAt: prepared.row.at, updatedAt: sql`now()` })
      .where(and(eq(channelConversations.workspaceId, ctx.workspaceId), eq(channelConversations.id, conversationId)));
    await notifyConversations(tx, ctx.workspaceId, [conversationId]);
    return updated;
  });
  return presentMessage(row);
}

/** Links (or unlinks, with null) a contact to a patient; the thread then shows on the patient's record. */
export async function linkContact(deps: AppDeps, ctx: RequestContext, contactId: string, patientId: string | null) {
  requireFeature(ctx, 'inbound_channels');
  return withTenant(deps.db, ctx, async (tx) => {
    const [contact] = await tx
      .select()
      .from(channelContacts)
      .where(and(eq(channelContacts.workspaceId, ctx.workspaceId), eq(channelContacts.id, contactId)));
    if (!contact) throw notFound('Contact');
    if (patientId && !(await patientExists(tx, ctx.workspaceId, patientId))) {
      throw new AppError('unknown_patient', 422, 'No such patient in this workspace');
    }
    await tx
      .update(channelContacts)
      .set({ patientId })
      .where(and(eq(channelContacts.workspaceId, ctx.workspaceId), eq(channelContacts.id, contactId)));
    const audited = patientId ?? contact.patientId;
    if (audited) {
      await writeAudit(tx, ctx, 'phi_access', {
        patientId: audited,
        context: patientId ? 'channels.contact_linked' : 'channels.contact_unlinked',
        contactId,
        channel: contact.channel,
      });
    }
    const conversations = await tx
      .select({ id: channelConversations.id })
      .from(channelConversations)
      .where(and(eq(channelConversations.workspaceId, ctx.workspaceId), eq(channelConversations.contactId, contactId)));
    await notifyConversations(
      tx,
      ctx.workspaceId,
      conversations.map((c) => c.id),
    );
    return { id: contact.id, patientId };
  });
}
