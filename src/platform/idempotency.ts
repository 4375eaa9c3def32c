import { and, eq, sql } from 'drizzle-orm';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { decryptSecret, encryptSecret, type SecretKey, sha256Hex } from './crypto.js';
import { withTenant } from './db/tenant.js';
import { AppError } from './errors.js';
import { pathOnly } from './http/hardening.js';
import { idempotencyKeys } from './platform-tables.js';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const TTL_MS = 24 * 60 * 60 * 1000;
/** A claim older than this whose request never finished (crash) may be taken over by a retry. */
const STALE_PENDING_MS = 60 * 1000;

interface Claimed {
  workspaceId: string;
  userId: string;
  key: string;
  route: string;
}

const claims = new WeakMap<FastifyRequest, Claimed>();

const keysOf = (app: FastifyInstance): SecretKey[] => [
  { id: app.atrium.config.encryptionKeyId, key: app.atrium.config.encryptionKey },
];

function scopeOf(request: FastifyRequest) {
  const ctx = request.ctx!;
  return {
    workspaceId: ctx.workspaceId,
    userId: ctx.userId,
    route: `${request.method} ${pathOnly(request.url)}`,
  };
}

// Stored responses may hold secrets shown once (e.g. a webhook secret): encrypted at rest, bound to the claim.
const aadOf = (c: Claimed) => `${c.workspaceId}|${c.userId}|${c.route}|${c.key}`;

const rowWhere = (c: Claimed) =>
  and(
    eq(idempotencyKeys.workspaceId, c.workspaceId),
    eq(idempotencyKeys.userId, c.userId),
    eq(idempotencyKeys.route, c.route),
    eq(idempotencyKeys.key, c.key),
  );

/**
 * Idempotency-Key for routes with `config.idempotent` (contract §1): the first request claims the
 * key; a repeat with the same body within 24 h gets the stored response; a different body is 422.
 */
export function registerIdempotency(app: FastifyInstance): void {
  app.addHook('preHandler', async (request, reply) => {
    if (!request.routeOptions.config?.idempotent || !request.ctx) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!KEY_PATTERN.test(key)) {
      throw new AppError('validation_failed', 400, 'Idempotency-Key must be 1–255 visible ASCII characters', {
        errors: [{ path: 'headers.idempotency-key', message: 'Invalid key' }],
      });
    }
    const claim: Claimed = { ...scopeOf(request), key };
    const requestHash = sha256Hex(JSON.stringify(request.body ?? null));
    const outcome = await withTenant(app.atrium.db, request.ctx, async (tx) => {
      // Expired keys are forgotten, so the key may be used afresh.
      await tx
        .delete(idempotencyKeys)
        .where(
          and(rowWhere(claim), sql`${idempotencyKeys.createdAt} < now() - make_interval(secs => ${TTL_MS / 1000})`),
        );
      const inserted = await tx
        .insert(idempotencyKeys)
        .values({ ...claim, requestHash, state: 'pending' })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key });
      if (inserted.length > 0) return { kind: 'claimed' as const };
      // A claim left pending by a request that died (crash, lost connection) is taken over.
      const takenOver = await tx
        .update(idempotencyKeys)
        .set({ requestHash, createdAt: sql`now()` })
        .where(
          and(
            rowWhere(claim),
            eq(idempotencyKeys.state, 'pending'),
            eq(idempotencyKeys.requestHash, requestHash),
            sql`${idempotencyKeys.createdAt} < now() - make_interval(secs => ${STALE_PENDING_MS / 1000})`,
          ),
        )
        .returning({ key: idempotencyKeys.key });
      if (takenOver.length > 0) return { kind: 'claimed' as const };
      const [existing] = await tx.select().from(idempotencyKeys).where(rowWhere(claim));
      return { kind: 'existing' as const, existing };
    });
    if (outcome.kind === 'claimed') {
      claims.set(request, claim);
      return;
    }
    const existing = outcome.existing;
    if (!existing) return;
    if (existing.requestHash !== requestHash) {
      throw new AppError('idempotency_key_reused', 422, 'This Idempotency-Key was used with a different request body');
    }
    if (existing.state !== 'done') {
      throw new AppError('conflict', 409, 'A request with this Idempotency-Key is still in progress');
    }
    reply.header('idempotent-replayed', 'true');
    reply.status(existing.statusCode ?? 200).header('content-type', existing.responseType ?? 'application/json');
    const body = existing.responseBody ? decryptSecret(keysOf(app), existing.responseBody, aadOf(claim)) : '';
    return reply.send(body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = claims.get(request);
    if (!claim || !request.ctx) return payload;
    claims.delete(request);
    const ctx = request.ctx;
    const text = typeof payload === 'string' ? payload : payload == null ? '' : JSON.stringify(payload);
    await withTenant(app.atrium.db, ctx, async (tx) => {
      if (reply.statusCode >= 500) {
        // A server failure may not have happened at all from the client's view: let it retry.
        await tx.delete(idempotencyKeys).where(rowWhere(claim));
        return;
      }
      await tx
        .update(idempotencyKeys)
        .set({
          state: 'done',
          statusCode: reply.statusCode,
          responseBody: text ? encryptSecret(keysOf(app)[0], text, aadOf(claim)) : '',
          responseType: String(reply.getHeader('content-type') ?? 'application/json'),
        })
        .where(rowWhere(claim));
    }).catch((err) => {
      // The response still goes out; the claim stays pending and a retry may take it over later.
      request.log.error({ err }, 'could not record the idempotent response');
    });
    return payload;
  });
}
