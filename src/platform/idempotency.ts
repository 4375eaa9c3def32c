import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import { authModeOf } from './auth/authenticate.js';
import { decryptSecret, encryptSecret, type SecretKey, sha256Hex } from './crypto.js';
import { commitMarks, withTenant } from './db/tenant.js';
import { AppError, isDatabaseUnavailable } from './errors.js';
import { routedPath } from './http/hardening.js';
import { idempotencyKeys } from './platform-tables.js';

/** A key: 1–255 visible ASCII characters (the OpenAPI document declares the same pattern). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** How long a key's answer is kept and replayed. */
export const IDEMPOTENCY_TTL_HOURS = 24;
const TTL_MS = IDEMPOTENCY_TTL_HOURS * 60 * 60 * 1000;
/**
 * A claim older than this whose request never finished (crash) is stale: taken over by a retry when
 * nothing of the request committed, else answered 409 `idempotency_outcome_unknown`.
 */
const STALE_PENDING_MS = 60 * 1000;

/**
 * Answers a retry should not replay: the request changed nothing and may succeed later (the caller
 * was asked to wait, 429; the state it met may change, 409, 408), or the server failed (5xx).
 */
const releases = (status: number) => status >= 500 || status === 429 || status === 409 || status === 408;

/**
 * Freeing or recording a key that failed because the database connection was lost (often the same moment that
 * failed the request itself: a failover, pg_terminate_backend) is tried again, each time in a new transaction on a
 * connection the pool hands out afresh: first before the answer goes out, after these pauses while no more than
 * RECORD_RETRY_WITHIN_MS have passed (a pool that waited seconds for a connection is not asked again), then after
 * the answer, in the background, after the longer pauses (a client told Retry-After: 1 finds the key free when the
 * database is back within seconds). A key left pending answers its retries 409 "still in progress" for
 * STALE_PENDING_MS, although a 5xx is documented to free it.
 */
const RECORD_RETRY_DELAYS_MS = [50, 250];
const RECORD_RETRY_WITHIN_MS = 1000;
const RECORD_BACKGROUND_DELAYS_MS = [1000, 2000, 4000];

async function withRetries(work: () => Promise<void>, delays: number[], withinMs = Number.POSITIVE_INFINITY) {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const delay = delays[attempt];
      if (delay === undefined || !isDatabaseUnavailable(err) || Date.now() - started + delay > withinMs) throw err;
      // Unreferenced: a retry still waiting never holds up the process's exit.
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
    }
  }
}

interface Claimed {
  workspaceId: string;
  userId: string;
  key: string;
  route: string;
  /**
   * This claim of the key (`claim_id`, new at each claim and takeover). What the request later writes to its row
   * requires it: a freeing tried again after its first try committed unacknowledged, or a request whose stale claim
   * was taken over, would otherwise delete or overwrite the claim of a later request with the same key.
   */
  claimId: string;
}

const claims = new WeakMap<FastifyRequest, Claimed>();

const keysOf = (app: FastifyInstance): SecretKey[] => [
  { id: app.atrium.config.encryptionKeyId, key: app.atrium.config.encryptionKey },
];

/**
 * The route reached with its parameters (`POST /api/v1/direct-messages/thr_1`), not the URL as written:
 * `/%61pi/v1/patients` reaches `/api/v1/patients` and shares its keys.
 */
function routeOf(request: FastifyRequest): string {
  const params = (request.params ?? {}) as Record<string, string>;
  const path = (request.routeOptions.url ?? request.url).replace(/:([A-Za-z0-9_]+)/g, (_, name: string) =>
    encodeURIComponent(params[name] ?? ''),
  );
  return `${request.method} ${path}`;
}

function scopeOf(request: FastifyRequest) {
  const ctx = request.ctx!;
  return { workspaceId: ctx.workspaceId, userId: ctx.userId, route: routeOf(request) };
}

/** Run last in each of the request's transactions: the claim is "committed" with its first write. */
const commitMark = (c: Claimed) => sql`UPDATE idempotency_keys SET state = 'committed'
   WHERE workspace_id = ${c.workspaceId} AND user_id = ${c.userId} AND route = ${c.route} AND key = ${c.key}
     AND claim_id = ${c.claimId} AND state = 'pending' AND txid_current_if_assigned() IS NOT NULL`;

// Stored responses may hold secrets shown once (e.g. a webhook secret): encrypted at rest, bound to the claim.
const aadOf = (c: Claimed) => `${c.workspaceId}|${c.userId}|${c.route}|${c.key}`;

const rowWhere = (c: Omit<Claimed, 'claimId'>) =>
  and(
    eq(idempotencyKeys.workspaceId, c.workspaceId),
    eq(idempotencyKeys.userId, c.userId),
    eq(idempotencyKeys.route, c.route),
    eq(idempotencyKeys.key, c.key),
  );

/** The request's own claim: the key's row as long as no later request claimed it (see `Claimed.claimId`). */
const claimWhere = (c: Claimed) => and(rowWhere(c), eq(idempotencyKeys.claimId, c.claimId));

/**
 * Whether a route honours Idempotency-Key: it opts in (`config.idempotent`) and runs for a workspace
 * member (`user`/`admin` auth: keys are kept per workspace and user). The runtime below and the
 * OpenAPI document (which declares the header on exactly these operations) both ask this.
 */
export function honoursIdempotencyKey(config: Partial<FastifyContextConfig> | undefined, routePath: string): boolean {
  const mode = authModeOf(config?.auth, routePath);
  return config?.idempotent === true && (mode === 'user' || mode === 'admin');
}

/** The response header a replayed answer carries (`true`). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * Idempotency-Key for routes with `config.idempotent` (contract §1): the first request claims the
 * key; a repeat with the same body within 24 h gets the stored response; a different body is 422.
 */
export function registerIdempotency(app: FastifyInstance): void {
  app.addHook('preHandler', async (request, reply) => {
    if (!request.ctx || !honoursIdempotencyKey(request.routeOptions.config, routedPath(request))) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new AppError('validation_failed', 400, 'Idempotency-Key must be 1–255 visible ASCII characters', {
        errors: [{ path: 'headers.idempotency-key', message: 'Invalid key' }],
      });
    }
    const claim: Claimed = { ...scopeOf(request), key, claimId: randomUUID() };
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
        .set({ requestHash, claimId: claim.claimId, createdAt: sql`now()` })
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
      commitMarks.set(request.ctx, commitMark(claim));
      // With the route: the same key sent to two routes is two requests, so nothing derived from it may collide.
      request.ctx.idempotencyKey = `${claim.route}|${key}`;
      return;
    }
    const existing = outcome.existing;
    if (!existing) return;
    if (existing.requestHash !== requestHash) {
      throw new AppError('idempotency_key_reused', 422, 'This Idempotency-Key was used with a different request body');
    }
    if (
      existing.state === 'committed' &&
      (existing.statusCode !== null || Date.now() - existing.createdAt.getTime() > STALE_PENDING_MS)
    ) {
      // The first request changed data and then failed (a 5xx after its work was saved: `status_code` is set) or
      // died (a crash) before its answer was recorded: doing the work again could do it twice, and its answer is lost.
      throw new AppError(
        'idempotency_outcome_unknown',
        409,
        'The first request with this Idempotency-Key was interrupted after it saved its work, and its answer was lost. Look up whether it took effect before sending it again with a new key.',
      );
    }
    if (existing.state !== 'done') {
      throw new AppError('conflict', 409, 'A request with this Idempotency-Key is still in progress');
    }
    reply.header(REPLAYED_HEADER, 'true');
    reply.status(existing.statusCode ?? 200).header('content-type', existing.responseType ?? 'application/json');
    const body = existing.responseBody ? decryptSecret(keysOf(app), existing.responseBody, aadOf(claim)) : '';
    return reply.send(body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = claims.get(request);
    if (!claim || !request.ctx) return payload;
    claims.delete(request);
    const ctx = request.ctx;
    commitMarks.delete(ctx);
    const text = typeof payload === 'string' ? payload : payload == null ? '' : JSON.stringify(payload);
    const record = () =>
      withTenant(app.atrium.db, ctx, async (tx) => {
        if (releases(reply.statusCode)) {
          // Nothing to replay: the same request may succeed when retried (a server failure, a wait asked
          // for, a state that may change), so the key is free again, if the request saved nothing.
          await tx.delete(idempotencyKeys).where(and(claimWhere(claim), eq(idempotencyKeys.state, 'pending')));
          // It did save its work (the claim was marked committed with it; e.g. the connection was lost at COMMIT
          // and the request answered 503): running it again could do it twice. The claim stays, and its status
          // says the request ended without an answer to keep: a retry is 409 idempotency_outcome_unknown at once.
          await tx
            .update(idempotencyKeys)
            .set({ statusCode: reply.statusCode })
            .where(and(claimWhere(claim), eq(idempotencyKeys.state, 'committed')));
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
          .where(and(claimWhere(claim), inArray(idempotencyKeys.state, ['pending', 'committed'])));
      });
    // The response goes out whatever happens here; a claim that stays pending is taken over by a retry later.
    const failed = (err: unknown) => request.log.error({ err }, 'could not record the idempotent response');
    await withRetries(record, RECORD_RETRY_DELAYS_MS, RECORD_RETRY_WITHIN_MS).catch((err) => {
      if (!isDatabaseUnavailable(err)) return failed(err);
      request.log.warn({ err }, 'could not record the idempotent response yet: trying again after the answer');
      void withRetries(record, RECORD_BACKGROUND_DELAYS_MS).catch(failed);
    });
    return payload;
  });
}
