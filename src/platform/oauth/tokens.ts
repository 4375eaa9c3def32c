// The one way to get a provider token: audited per use, refreshed once however many ask.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { auditInsertSql } from '../audit/audit.js';
import { decryptSecret } from '../crypto.js';
import type { Db, Tx } from '../db/client.js';
import { preparedRows, queryRows, withTenant } from '../db/tenant.js';
import { AppError, notFound } from '../errors.js';
import {
  aad,
  auditTokenUse,
  keys,
  type OAuthDeps,
  type Outcome,
  providerOf,
  reauthRequired,
  storeTokens,
  type TokenUser,
} from './connections.js';
import {
  OAuthGrantError,
  type OAuthProvider,
  refreshGrant,
  type TokenSet,
  tokenEndpointError,
  tokenTimeoutMs,
} from './token-client.js';

/** A token this close to its expiry is refreshed first. */
const EXPIRY_SKEW_SECS = 60;
/**
 * The refresh lease lasts the token call's timeout plus this margin (claiming before it, storing after it),
 * so it never runs out while its holder's call may still be answered: no other instance presents the same
 * refresh token meanwhile.
 */
const REFRESH_LEASE_MARGIN_SECS = 30;
const refreshLeaseSecs = (provider: OAuthProvider) =>
  Math.ceil(tokenTimeoutMs(provider) / 1000) + REFRESH_LEASE_MARGIN_SECS;
/**
 * Every transaction here writes only what a retry of the request may write again (a `token_access` row, a
 * refreshed token, the refresh lease): none of them is the outcome of the request that needed the token, so
 * none marks its Idempotency-Key committed (platform/db/tenant.ts). A request killed during its provider call
 * has then saved nothing, and a retry with the same key runs it again.
 */
const tokenTx = <T>(deps: OAuthDeps, ctx: TokenUser, fn: (tx: Tx) => Promise<T>): Promise<T> =>
  withTenant(deps.db, ctx, fn, { outcome: false });

interface ConnectionRow {
  provider: string;
  status: 'active' | 'reauth_required';
  access_token_enc: string;
  token_version: number;
  /** Expired, or about to. */
  expiring: boolean;
}

const connectionSql = (workspaceId: string, connectionId: string) =>
  sql`SELECT provider, status, access_token_enc, token_version,
             coalesce(expires_at <= now() + make_interval(secs => ${EXPIRY_SKEW_SECS}), false) AS expiring
        FROM oauth_connections WHERE workspace_id = ${workspaceId} AND id = ${connectionId}`;

const readConnection = async (tx: Tx, workspaceId: string, connectionId: string) =>
  (await queryRows<ConnectionRow>(tx, connectionSql(workspaceId, connectionId)))[0];

/**
 * A valid access token for the connection, for `reason` (e.g. `calendar.events.list`). Writes one
 * `token_access` audit row per call. Refreshes first when the token has expired, or when
 * `forceRefresh` (the provider just answered 401 with it). Concurrent callers share one refresh:
 * in this process through a promise map, across instances through a lease on the row. A refused
 * refresh (`invalid_grant`) marks the connection `reauth_required`: 409 `reauth_required` from then on.
 * A connection of another workspace is 404 and nothing is read or audited.
 */
export async function getAccessToken(
  deps: OAuthDeps,
  ctx: TokenUser,
  connectionId: string,
  reason: string,
  options: { forceRefresh?: boolean } = {},
): Promise<string> {
  // The row and, unless a refresh comes first, its audit row: one statement, one round trip.
  const force = options.forceRefresh === true;
  const audit = auditInsertSql(
    ctx,
    'token_access',
    { connectionId, reason },
    sql`c.status <> 'active' OR NOT (c.expiring OR ${force})`,
    {
      from: sql`c`,
      more: sql`jsonb_build_object('provider', c.provider,
                                   'outcome', CASE WHEN c.status = 'active' THEN 'ok' ELSE 'reauth_required' END)`,
    },
  );
  const first = await tokenTx(deps, ctx, async (tx) => {
    // Prepared on the server: every provider call starts with this statement.
    const [row] = await preparedRows<ConnectionRow>(
      tx,
      sql`WITH c AS (${connectionSql(ctx.workspaceId, connectionId)}), audit AS (${audit.statement}) SELECT * FROM c`,
    );
    if (row?.status !== 'active' || force || row.expiring) return { row };
    // Opened inside the transaction: a token that will not open leaves no `ok` audit row behind.
    return {
      row,
      token: decryptSecret(keys(deps), row.access_token_enc, aad(ctx.workspaceId, connectionId, 'access')),
    };
  });
  const { row } = first;
  if (!row) throw notFound('Connection');
  if (first.token !== undefined) return first.token;
  if (row.status !== 'active') throw reauthRequired(row.provider);

  const use = { provider: row.provider, connectionId, reason };
  try {
    const token = await singleFlight(deps.db, `${ctx.workspaceId}:${connectionId}`, () =>
      refreshConnection(deps, ctx, connectionId, row, options.forceRefresh === true),
    );
    await tokenTx(deps, ctx, (tx) => auditTokenUse(tx, ctx, use, 'ok', { refreshed: true }));
    return token;
  } catch (err) {
    const outcome: Outcome = err instanceof AppError && err.code === 'reauth_required' ? 'reauth_required' : 'error';
    await tokenTx(deps, ctx, (tx) => auditTokenUse(tx, ctx, use, outcome, { refreshed: true })).catch(() => undefined);
    throw err;
  }
}

/** In-process single flight, per database (two app instances in one process still coordinate through the row). */
const refreshes = new WeakMap<object, Map<string, Promise<string>>>();

function singleFlight(db: Db, key: string, run: () => Promise<string>): Promise<string> {
  let inFlight = refreshes.get(db);
  if (!inFlight) {
    inFlight = new Map();
    refreshes.set(db, inFlight);
  }
  const existing = inFlight.get(key);
  if (existing) return existing;
  const map = inFlight;
  const promise = run().finally(() => map.delete(key));
  map.set(key, promise);
  return promise;
}

interface Claim {
  refresh_token_enc: string | null;
  token_version: number;
  access_token_enc: string;
  expiring: boolean;
}

/**
 * Refreshes once across instances. The refresher takes a short lease on the row (no transaction is
 * held across the token call; convention 3), re-checking that nobody refreshed since we read it;
 * the others wait for the lease to end and use the token it stored.
 */
async function refreshConnection(
  deps: OAuthDeps,
  ctx: TokenUser,
  connectionId: string,
  seen: ConnectionRow,
  forced: boolean,
): Promise<string> {
  const provider = providerOf(deps, seen.provider);
  const holder = `refresh_${randomUUID()}`;
  const where = sql`workspace_id = ${ctx.workspaceId} AND id = ${connectionId}`;
  const openAccess = (blob: string) => decryptSecret(keys(deps), blob, aad(ctx.workspaceId, connectionId, 'access'));
  const leaseSecs = refreshLeaseSecs(provider);
  const deadline = Date.now() + (leaseSecs + 5) * 1000;

  for (;;) {
    const [claim] = await tokenTx(deps, ctx, (tx) =>
      queryRows<Claim>(
        tx,
        sql`UPDATE oauth_connections
               SET refresh_lease_until = now() + make_interval(secs => ${leaseSecs}), refresh_holder = ${holder}
             WHERE ${where} AND status = 'active'
               AND (refresh_lease_until IS NULL OR refresh_lease_until < now())
            RETURNING refresh_token_enc, token_version, access_token_enc,
                      coalesce(expires_at <= now() + make_interval(secs => ${EXPIRY_SKEW_SECS}), false) AS expiring`,
      ),
    );
    if (claim) {
      // Someone refreshed between our read and this claim: theirs is the token to use.
      if (claim.token_version !== seen.token_version && !claim.expiring) {
        await releaseLease(deps, ctx, where, holder);
        return openAccess(claim.access_token_enc);
      }
      return refreshHeld(deps, ctx, provider, connectionId, claim, holder, forced);
    }
    const now = await tokenTx(deps, ctx, (tx) => readConnection(tx, ctx.workspaceId, connectionId));
    if (!now) throw notFound('Connection');
    if (now.status !== 'active') throw reauthRequired(now.provider);
    if (now.token_version !== seen.token_version && !now.expiring) return openAccess(now.access_token_enc);
    if (Date.now() > deadline)
      throw new AppError('provider_unavailable', 502, `${provider.name} token refresh is stuck`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function refreshHeld(
  deps: OAuthDeps,
  ctx: TokenUser,
  provider: OAuthProvider,
  connectionId: string,
  claim: Claim,
  holder: string,
  forced: boolean,
): Promise<string> {
  const where = sql`workspace_id = ${ctx.workspaceId} AND id = ${connectionId}`;
  if (!claim.refresh_token_enc) {
    await markReauth(deps, ctx, where, holder);
    throw reauthRequired(provider.name);
  }
  const refreshToken = decryptSecret(
    keys(deps),
    claim.refresh_token_enc,
    aad(ctx.workspaceId, connectionId, 'refresh'),
  );
  let tokens: TokenSet;
  try {
    tokens = await refreshGrant(provider, refreshToken, ctx.requestId);
  } catch (err) {
    if (err instanceof OAuthGrantError && err.error === 'invalid_grant') {
      ctx.log?.warn(
        { provider: provider.name, connectionId },
        'refresh token refused: connection needs reauthorization',
      );
      await markReauth(deps, ctx, where, holder);
      throw reauthRequired(provider.name);
    }
    await releaseLease(deps, ctx, where, holder);
    ctx.log?.warn({ err, provider: provider.name, connectionId, forced }, 'token refresh failed');
    if (err instanceof OAuthGrantError) {
      throw new AppError('provider_unavailable', 502, `${provider.name} refused the token refresh (${err.error})`);
    }
    throw tokenEndpointError(provider, err);
  }
  // Stored unless tokens were stored since our claim — not only while we hold the lease: if the provider
  // rotates refresh tokens, the one it just issued is the only valid one, and a lease that ran out anyway
  // (another instance then refused with the spent token, and marked the connection reauth_required) must
  // not lose it.
  const stored = await tokenTx(deps, ctx, (tx) =>
    storeTokens(deps, tx, ctx.workspaceId, connectionId, tokens, provider.scopes, {
      sinceVersion: claim.token_version,
    }),
  );
  if (stored === 0) {
    const now = await tokenTx(deps, ctx, (tx) => readConnection(tx, ctx.workspaceId, connectionId));
    if (!now) throw notFound('Connection');
    // Another refresh or a new authorization stored tokens after ours started: theirs stay, ours are dropped.
    ctx.log?.error(
      { provider: provider.name, connectionId, claimedVersion: claim.token_version, storedVersion: now.token_version },
      'token refresh outlasted its lease: other tokens were stored meanwhile, the ones this refresh got are dropped',
    );
    if (now.status !== 'active') throw reauthRequired(now.provider);
    return decryptSecret(keys(deps), now.access_token_enc, aad(ctx.workspaceId, connectionId, 'access'));
  }
  return tokens.accessToken;
}

const releaseLease = (deps: OAuthDeps, ctx: TokenUser, where: ReturnType<typeof sql>, holder: string) =>
  tokenTx(deps, ctx, (tx) =>
    tx.execute(
      sql`UPDATE oauth_connections SET refresh_lease_until = NULL, refresh_holder = NULL
           WHERE ${where} AND refresh_holder = ${holder}`,
    ),
  );

const markReauth = (deps: OAuthDeps, ctx: TokenUser, where: ReturnType<typeof sql>, holder: string) =>
  tokenTx(deps, ctx, (tx) =>
    tx.execute(
      sql`UPDATE oauth_connections SET status = 'reauth_required', refresh_lease_until = NULL, refresh_holder = NULL,
                                      updated_at = now()
           WHERE ${where} AND refresh_holder = ${holder}`,
    ),
  );
