import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { writeAudit } from '../../platform/audit/audit.js';
import type { RequestContext } from '../../platform/context.js';
import { decryptSecret, encryptSecret, type SecretKey } from '../../platform/crypto.js';
import type { Tx } from '../../platform/db/client.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, conflict, notFound } from '../../platform/errors.js';
import { type DomainEvent, publishEvent } from '../../platform/events/events.js';
import { checkOutboundUrl, UnsafeUrlError } from '../../platform/http/url-guard.js';
import { newId } from '../../platform/ids.js';
import { JOBS_CHANNEL } from '../../platform/jobs/index.js';
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js';
import { generateSigningSecret } from '../../platform/signing.js';
import { requireFeature } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import { memberNames } from '../identity/index.js';
import { eventBody } from './jobs/delivery-worker.js';
import * as repo from './repository.js';
import type {
  Attempt,
  CreateEndpointInput,
  DeliveriesQuery,
  DeliveryDetail,
  Endpoint,
  InboxItem,
  InboxQuery,
  PatchEndpointInput,
} from './schema.js';

/** How long a rotated-out secret keeps signing (contract: 24 h, both signatures in the header). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function secretKeys(deps: Pick<AppDeps, 'config'>): SecretKey[] {
  return [{ id: deps.config.encryptionKeyId, key: deps.config.encryptionKey }];
}

/** Binds a stored secret to its endpoint, so an encrypted value copied to another row won't decrypt. */
export const secretAad = (workspaceId: string, endpointId: string) => `webhook:${workspaceId}:${endpointId}`;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentEndpoint(row: repo.EndpointRow): Endpoint {
  const rotating = row.previousSecretExpiresAt && row.previousSecretExpiresAt > new Date();
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    previousSecretExpiresAt: rotating ? iso(row.previousSecretExpiresAt) : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function presentAttempt(row: repo.AttemptRow): Attempt {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    attempt: row.attempt,
    outcome: row.outcome,
    status: row.status,
    error: row.error,
    durationMs: row.durationMs,
    attemptedAt: row.attemptedAt.toISOString(),
    nextAttemptAt: iso(row.nextAttemptAt),
  };
}

function presentInbox(row: repo.InboxRow, names: Map<string, string>): InboxItem {
  return {
    id: row.id,
    kind: row.kind,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: row.eventType,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    state: row.state,
    handledAt: iso(row.handledAt),
    handledBy: row.handledBy,
    handledByName: row.handledBy ? (names.get(row.handledBy) ?? null) : null,
  };
}

/** The names of the members who handled these items (a former member has none). */
async function handlerNames(tx: Tx, workspaceId: string, rows: repo.InboxRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.flatMap((r) => (r.handledBy ? [r.handledBy] : [])))];
  const members = await memberNames(tx, workspaceId, ids);
  return new Map(members.map((m) => [m.userId, m.name]));
}

/** Checks a URL against §7.3 before it is stored (the worker checks again at every attempt). */
async function checkEndpointUrl(deps: AppDeps, url: string): Promise<void> {
  try {
    await checkOutboundUrl(url, { allowCidrs: deps.config.webhooks.allowCidrs });
  } catch (err) {
    if (err instanceof UnsafeUrlError) {
      throw new AppError('unsafe_url', 422, err.message, {
        reason: err.reason,
        errors: [{ path: 'body.url', message: err.message }],
      });
    }
    throw err;
  }
}

function gate(ctx: RequestContext): void {
  requireFeature(ctx, 'outbound_webhooks');
}

async function requireEndpoint(tx: Tx, ctx: RequestContext, id: string): Promise<repo.EndpointRow> {
  const row = await repo.findEndpoint(tx, ctx.workspaceId, id);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

export async function createEndpoint(deps: AppDeps, ctx: RequestContext, input: CreateEndpointInput) {
  gate(ctx);
  // DNS happens here, before the transaction: nothing inside a transaction calls the network.
  await checkEndpointUrl(deps, input.url);
  const id = newId('whk');
  const secret = generateSigningSecret();
  const row = await withTenant(deps.db, ctx, async (tx) => {
    const created = await repo.insertEndpoint(tx, {
      workspaceId: ctx.workspaceId,
      id,
      url: input.url,
      description: input.description || null,
      events: input.events ?? ['*'],
      enabled: true,
      secretEnc: encryptSecret(secretKeys(deps)[0], secret, secretAad(ctx.workspaceId, id)),
      createdBy: ctx.userId,
    });
    await writeAudit(tx, ctx, 'admin_action', { action: 'webhooks.create', target: id, url: input.url });
    return created;
  });
  return { ...presentEndpoint(row), secret };
}

export async function listEndpoints(
  deps: AppDeps,
  ctx: RequestContext,
): Promise<{ items: Endpoint[]; nextCursor: null }> {
  gate(ctx);
  const rows = await withTenant(deps.db, ctx, (tx) => repo.listEndpoints(tx, ctx.workspaceId));
  return { items: rows.map(presentEndpoint), nextCursor: null };
}

export async function getEndpoint(deps: AppDeps, ctx: RequestContext, id: string): Promise<Endpoint> {
  gate(ctx);
  return withTenant(deps.db, ctx, async (tx) => presentEndpoint(await requireEndpoint(tx, ctx, id)));
}

export async function patchEndpoint(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  patch: PatchEndpointInput,
): Promise<Endpoint> {
  gate(ctx);
  if (patch.url !== undefined) await checkEndpointUrl(deps, patch.url);
  return withTenant(deps.db, ctx, async (tx) => {
    await requireEndpoint(tx, ctx, id);
    const row = await repo.updateEndpoint(tx, ctx.workspaceId, id, {
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.events !== undefined ? { events: patch.events } : {}),
      ...(patch.description !== undefined ? { description: patch.description || null } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
    });
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'webhooks.update',
      target: id,
      changed: Object.keys(patch),
    });
    // Its waiting deliveries may go again: wake the delivery workers.
    if (patch.enabled) await tx.execute(sql`SELECT pg_notify(${JOBS_CHANNEL}, ${repo.DELIVERY_JOB.type})`);
    return presentEndpoint(row!);
  });
}

export async function deleteEndpoint(deps: AppDeps, ctx: RequestContext, id: string): Promise<void> {
  gate(ctx);
  await withTenant(deps.db, ctx, async (tx) => {
    if (!(await repo.deleteEndpoint(tx, ctx.workspaceId, id))) throw notFound('Webhook endpoint');
    await writeAudit(tx, ctx, 'admin_action', { action: 'webhooks.delete', target: id });
  });
}

/**
 * New secret now; the old one keeps signing for 24 h so receivers can switch without a gap. Rotations at once
 * run one after another (the row is locked before it is read): each one's previous secret is the one before it,
 * so every secret handed out was in effect, and the last two sign (before, each kept the secret all had read).
 */
export async function rotateSecret(deps: AppDeps, ctx: RequestContext, id: string) {
  gate(ctx);
  const secret = generateSigningSecret();
  return withTenant(deps.db, ctx, async (tx) => {
    const row = await repo.lockEndpoint(tx, ctx.workspaceId, id);
    if (!row) throw notFound('Webhook endpoint');
    const expiresAt = new Date(Date.now() + ROTATION_OVERLAP_MS);
    await repo.updateEndpoint(tx, ctx.workspaceId, id, {
      secretEnc: encryptSecret(secretKeys(deps)[0], secret, secretAad(ctx.workspaceId, id)),
      previousSecretEnc: row.secretEnc,
      previousSecretExpiresAt: expiresAt,
    });
    await writeAudit(tx, ctx, 'admin_action', { action: 'webhooks.rotate_secret', target: id });
    return { id, secret, previousSecretExpiresAt: expiresAt.toISOString() };
  });
}

export async function listDeliveries(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  query: DeliveriesQuery,
): Promise<Page<Attempt>> {
  gate(ctx);
  const before = decodeCursor(query.cursor, z.string());
  const rows = await withTenant(deps.db, ctx, async (tx) => {
    await requireEndpoint(tx, ctx, id);
    return repo.listAttempts(tx, ctx.workspaceId, id, { limit: query.limit, before, status: query.status });
  });
  const page = toPage(rows, query.limit, (r) => r.id);
  return { items: page.items.map(presentAttempt), nextCursor: page.nextCursor };
}

export async function replayEvent(deps: AppDeps, ctx: RequestContext, id: string, eventId: string) {
  gate(ctx);
  return withTenant(deps.db, ctx, async (tx) => {
    await requireEndpoint(tx, ctx, id);
    if (!(await repo.resetDelivery(tx, ctx.workspaceId, id, eventId))) {
      throw notFound('Delivery of this event to this endpoint');
    }
    // Its dead letters in the inbox are handled: replayed, now, by this admin.
    const handled = await repo.handleInboxItems(
      tx,
      ctx.workspaceId,
      { endpointId: id, eventId },
      'replayed',
      ctx.userId ?? null,
    );
    await writeAudit(tx, ctx, 'admin_action', {
      action: 'webhooks.replay',
      target: id,
      eventId,
      ...(handled.length > 0 ? { inboxItems: handled.map((r) => r.id) } : {}),
    });
    return { eventId, state: 'pending' as const };
  });
}

/** §7.1: a `webhook.test` event to this endpoint only (whatever its filter), signed and logged like any. */
export async function sendTestEvent(deps: AppDeps, ctx: RequestContext, id: string): Promise<{ eventId: string }> {
  gate(ctx);
  return withTenant(deps.db, ctx, async (tx) => {
    await requireEndpoint(tx, ctx, id);
    const event = await publishEvent(tx, ctx, 'webhook.test', { endpointId: id, sentBy: ctx.userId ?? null });
    await writeAudit(tx, ctx, 'admin_action', { action: 'webhooks.test', target: id, eventId: event.id });
    return { eventId: event.id };
  });
}

/** §7.1: one attempt with the exact request (body rebuilt from the event) and the response kept. */
export async function getDeliveryDetail(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  deliveryId: string,
): Promise<DeliveryDetail> {
  gate(ctx);
  const found = await withTenant(deps.db, ctx, async (tx) => {
    await requireEndpoint(tx, ctx, id);
    return repo.findAttemptWithEvent(tx, ctx.workspaceId, id, deliveryId);
  });
  if (!found) throw notFound('Delivery attempt');
  const { attempt, event } = found;
  const request =
    attempt.requestUrl && attempt.requestHeaders && event
      ? {
          url: attempt.requestUrl,
          headers: attempt.requestHeaders,
          body: eventBody({
            event_id: event.id,
            event_type: event.type,
            event_created_at: event.createdAt,
            workspace_id: event.workspaceId,
            data: event.data,
          }),
        }
      : null;
  const response =
    attempt.status !== null && attempt.responseHeaders
      ? {
          status: attempt.status,
          headers: attempt.responseHeaders,
          body: attempt.responseBody ?? '',
          truncated: attempt.responseTruncated,
        }
      : null;
  return { ...presentAttempt(attempt), request, response };
}

export async function listInbox(deps: AppDeps, ctx: RequestContext, query: InboxQuery): Promise<Page<InboxItem>> {
  gate(ctx);
  const before = decodeCursor(query.cursor, z.string());
  return withTenant(deps.db, ctx, async (tx) => {
    const rows = await repo.listInbox(tx, ctx.workspaceId, { limit: query.limit, before, state: query.state });
    const page = toPage(rows, query.limit, (r) => r.id);
    const names = await handlerNames(tx, ctx.workspaceId, page.items);
    return { items: page.items.map((r) => presentInbox(r, names)), nextCursor: page.nextCursor };
  });
}

/**
 * Dismisses an open inbox item without a replay (the admin dealt with it otherwise, or it needs nothing):
 * `resolved`, now, by this admin, audited. An item already replayed or resolved is a 409 and stays as it is.
 */
export async function resolveInboxItem(deps: AppDeps, ctx: RequestContext, id: string): Promise<InboxItem> {
  gate(ctx);
  return withTenant(deps.db, ctx, async (tx) => {
    const [row] = await repo.handleInboxItems(tx, ctx.workspaceId, { id }, 'resolved', ctx.userId ?? null);
    if (!row) {
      const existing = await repo.findInboxItem(tx, ctx.workspaceId, id);
      if (!existing) throw notFound('Inbox item');
      throw conflict(`This item was already ${existing.state}`, { state: existing.state });
    }
    await writeAudit(tx, ctx, 'admin_action', { action: 'webhooks.inbox_resolve', target: id, kind: row.kind });
    return presentInbox(row, await handlerNames(tx, ctx.workspaceId, [row]));
  });
}

/**
 * A resolved item opened again (resolved by mistake, or the trouble came back): open, its handling forgotten,
 * audited. A replayed one is not reopened (its event went again; a new failure brings a new item).
 */
export async function reopenInboxItem(deps: AppDeps, ctx: RequestContext, id: string): Promise<InboxItem> {
  gate(ctx);
  return withTenant(deps.db, ctx, async (tx) => {
    const row = await repo.reopenInboxItem(tx, ctx.workspaceId, id);
    if (!row) {
      const existing = await repo.findInboxItem(tx, ctx.workspaceId, id);
      if (!existing) throw notFound('Inbox item');
      throw conflict(
        existing.state === 'open' ? 'This item is open already' : `This item was ${existing.state}, not resolved`,
        { state: existing.state },
      );
    }
    await writeAudit(tx, ctx, 'admin_action', { action: 'webhooks.inbox_reopen', target: id, kind: row.kind });
    return presentInbox(row, await handlerNames(tx, ctx.workspaceId, [row]));
  });
}

/** The outbox fan-out hook: runs inside the transaction that publishes the event. */
export async function fanOutToWebhooks(tx: Tx, events: DomainEvent[]): Promise<void> {
  await repo.insertDeliveriesFor(tx, events);
}

/** Decrypts an endpoint's stored secret (worker side). */
export function openSecret(keys: SecretKey[], blob: string, workspaceId: string, endpointId: string): string {
  return decryptSecret(keys, blob, secretAad(workspaceId, endpointId));
}

/** Puts a notice in the workspace's inbox, in the caller's transaction (kind e.g. `health.incident_opened`). */
/** The workspace's open notices of these kinds about `eventType`, resolved by the system (no one's action). */
export async function settleInboxNotices(
  tx: Tx,
  workspaceId: string,
  eventType: string,
  kinds: string[],
): Promise<void> {
  await repo.settleInboxItems(tx, workspaceId, eventType, kinds);
}

export async function postInboxNotice(
  tx: Tx,
  workspaceId: string,
  notice: {
    kind: string;
    eventType: string;
    message: string;
    /** For a dead-lettered delivery: the endpoint, the event and the last HTTP status. */
    endpointId?: string;
    eventId?: string;
    lastStatus?: number | null;
    /**
     * The notice settles these open ones (same `eventType`, one of these kinds): they are resolved by the system
     * now, and this notice itself is filed as handled — a recovery needs nobody's action (health: "resolved"
     * closes "opened").
     */
    settles?: string[];
  },
): Promise<void> {
  const settles = notice.settles ?? [];
  if (settles.length > 0) {
    await repo.settleInboxItems(tx, workspaceId, notice.eventType, settles);
  }
  await repo.insertInboxItem(tx, {
    workspaceId,
    id: newId('inb'),
    kind: notice.kind,
    endpointId: notice.endpointId ?? null,
    eventId: notice.eventId ?? null,
    eventType: notice.eventType,
    lastStatus: notice.lastStatus ?? null,
    lastError: notice.message.slice(0, 1000),
    ...(settles.length > 0 ? { state: 'resolved' as const, handledAt: new Date() } : {}),
  });
}
