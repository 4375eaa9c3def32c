// Provider connections: the authorization code flow with PKCE, tokens in the secret box, and the
// one way to get a provider token (getAccessToken: audited, refreshed once however many ask).
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { writeAudit } from '../audit/audit.js';
import { decryptSecret, encryptSecret, type SecretKey } from '../crypto.js';
import type { Db, Tx } from '../db/client.js';
import { queryRows, withTenant } from '../db/tenant.js';
import { AppError, notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { AppDeps } from '../types.js';
import { codeChallengeS256, createCodeVerifier } from './pkce.js';
import { invalidState, signState, verifyState } from './state.js';
import {
  accountEmail,
  exchangeCode,
  OAuthGrantError,
  type OAuthProvider,
  refreshGrant,
  revokeToken,
  type TokenSet,
  tokenEndpointError,
} from './token-client.js';

/** What platform/oauth needs: the database, the encryption key, and the providers a module offers. */
export interface OAuthDeps extends Pick<AppDeps, 'db'> {
  config: Pick<AppDeps['config'], 'encryptionKey' | 'encryptionKeyId'>;
  oauthProviders(name: string): OAuthProvider | undefined;
}

/** Who uses the token: a request context or a job's (with its workspace). */
export interface TokenUser {
  workspaceId: string;
  userId?: string | null;
  requestId?: string;
  log?: FastifyBaseLogger;
}

export interface Connection {
  id: string;
  provider: string;
  accountEmail: string;
  userId: string;
  status: 'active' | 'reauth_required';
  scopes: string[];
  createdAt: string;
}

export const STATE_TTL_MS = 10 * 60_000;
/** A token this close to its expiry is refreshed first. */
const EXPIRY_SKEW_SECS = 60;
const REFRESH_LEASE_SECS = 30;

export const reauthRequired = (provider: string) =>
  new AppError('reauth_required', 409, `The ${provider} connection must be connected again`);

const keys = (deps: OAuthDeps): SecretKey[] => [{ id: deps.config.encryptionKeyId, key: deps.config.encryptionKey }];
/** Binds each sealed token to its workspace, connection and kind, so a copied value will not open elsewhere. */
const aad = (workspaceId: string, connectionId: string, kind: 'access' | 'refresh') =>
  `oauth:${workspaceId}:${connectionId}:${kind}`;

function providerOf(deps: OAuthDeps, name: string): OAuthProvider {
  const provider = deps.oauthProviders(name);
  if (!provider) throw new AppError('provider_unavailable', 422, `Provider ${name} is not configured`);
  return provider;
}

// ---------------------------------------------------------------------------------------------
// Authorization code flow with PKCE

/** The provider's consent URL for this user; `state` is signed, expiring, and seals the PKCE verifier. */
export function startAuthorization(
  deps: OAuthDeps,
  ctx: { workspaceId: string; userId: string },
  providerName: string,
  options: { redirectUri: string; returnTo?: string; loginHint?: string; now?: number },
): { authorizeUrl: string; state: string } {
  const provider = providerOf(deps, providerName);
  const codeVerifier = createCodeVerifier();
  const state = signState(deps.config.encryptionKey, {
    workspaceId: ctx.workspaceId,
    userId: ctx.userId,
    provider: provider.name,
    codeVerifier,
    redirectUri: options.redirectUri,
    returnTo: options.returnTo,
    expiresAt: (options.now ?? Date.now()) + STATE_TTL_MS,
  });
  const url = new URL(provider.authorizeUrl);
  const params: Record<string, string | undefined> = {
    ...provider.authorizeParams,
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: options.redirectUri,
    scope: provider.scopes.join(' '),
    state,
    code_challenge: codeChallengeS256(codeVerifier),
    code_challenge_method: 'S256',
    login_hint: options.loginHint,
  };
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return { authorizeUrl: url.toString(), state };
}

export interface CompletedAuthorization {
  connectionId: string;
  workspaceId: string;
  userId: string;
  accountEmail: string;
  /** True when an existing connection of that account was repaired instead of a new one added. */
  repaired: boolean;
  returnTo?: string;
}

/**
 * The callback: checks the state (400 `invalid_state`), exchanges the code with its PKCE verifier,
 * and stores the tokens sealed. Connecting an account that is already connected in the workspace
 * repairs that connection (new tokens, `active`). Pass `expectedUserId` (the signed-in user) so a
 * state issued to someone else is refused.
 */
export async function completeAuthorization(
  deps: OAuthDeps,
  providerName: string,
  query: { code?: string; state?: string; error?: string },
  options: { expectedUserId?: string; requestId?: string } = {},
): Promise<CompletedAuthorization> {
  const state = verifyState(deps.config.encryptionKey, query.state ?? '');
  if (state.provider !== providerName) throw invalidState();
  if (options.expectedUserId && options.expectedUserId !== state.userId) throw invalidState();
  if (query.error || !query.code) {
    throw new AppError('authorization_failed', 400, `The provider did not authorize: ${query.error ?? 'no code'}`);
  }
  const provider = providerOf(deps, providerName);
  let tokens: TokenSet;
  let email: string;
  try {
    tokens = await exchangeCode(
      provider,
      { code: query.code, redirectUri: state.redirectUri, codeVerifier: state.codeVerifier },
      options.requestId,
    );
    email = await accountEmail(provider, tokens, options.requestId);
  } catch (err) {
    if (err instanceof OAuthGrantError) {
      throw new AppError('authorization_failed', 400, `${provider.name} refused the authorization code (${err.error})`);
    }
    throw tokenEndpointError(provider, err);
  }
  const actor = { workspaceId: state.workspaceId, userId: state.userId, requestId: options.requestId };
  return withTenant(deps.db, actor, async (tx) => {
    const fresh = newId('oac');
    const inserted = await queryRows<{ id: string }>(
      tx,
      sql`INSERT INTO oauth_connections (workspace_id, id, provider, account_email, user_id, access_token_enc)
          VALUES (${state.workspaceId}, ${fresh}, ${provider.name}, ${email}, ${state.userId}, '')
          ON CONFLICT (workspace_id, provider, account_email) DO NOTHING RETURNING id`,
    );
    const [row] = inserted.length
      ? inserted
      : await queryRows<{ id: string }>(
          tx,
          sql`SELECT id FROM oauth_connections
               WHERE workspace_id = ${state.workspaceId} AND provider = ${provider.name} AND account_email = ${email}
               FOR UPDATE`,
        );
    await storeTokens(deps, tx, state.workspaceId, row.id, tokens, provider.scopes, { userId: state.userId });
    await writeAudit(tx, actor, 'token_access', {
      provider: provider.name,
      connectionId: row.id,
      reason: 'token.exchange',
      outcome: 'ok',
    });
    return {
      connectionId: row.id,
      workspaceId: state.workspaceId,
      userId: state.userId,
      accountEmail: email,
      repaired: inserted.length === 0,
      returnTo: state.returnTo,
    };
  });
}

async function storeTokens(
  deps: OAuthDeps,
  tx: Tx,
  workspaceId: string,
  connectionId: string,
  tokens: TokenSet,
  requestedScopes: string[],
  options: { userId?: string; holder?: string },
): Promise<number> {
  const key = keys(deps)[0];
  const access = encryptSecret(key, tokens.accessToken, aad(workspaceId, connectionId, 'access'));
  // A provider that does not rotate refresh tokens sends none on refresh: keep the one we have.
  const refresh = tokens.refreshToken
    ? encryptSecret(key, tokens.refreshToken, aad(workspaceId, connectionId, 'refresh'))
    : null;
  const expiresAt =
    tokens.expiresInSec !== undefined ? sql`now() + make_interval(secs => ${tokens.expiresInSec}::float8)` : sql`NULL`;
  const scopes = JSON.stringify(tokens.scopes ?? requestedScopes);
  const rows = await queryRows(
    tx,
    sql`UPDATE oauth_connections
           SET access_token_enc = ${access},
               refresh_token_enc = ${options.holder ? sql`coalesce(${refresh}, refresh_token_enc)` : sql`${refresh}`},
               expires_at = ${expiresAt}, scopes = ${scopes}::jsonb, status = 'active',
               token_version = token_version + 1, refresh_lease_until = NULL, refresh_holder = NULL,
               user_id = coalesce(${options.userId ?? null}, user_id), updated_at = now()
         WHERE workspace_id = ${workspaceId} AND id = ${connectionId}
           ${options.holder ? sql`AND refresh_holder = ${options.holder}` : sql``}
        RETURNING id`,
  );
  return rows.length;
}

// ---------------------------------------------------------------------------------------------
// Tokens

interface ConnectionRow {
  provider: string;
  status: 'active' | 'reauth_required';
  access_token_enc: string;
  token_version: number;
  /** Expired, or about to. */
  expiring: boolean;
}

const readConnection = async (tx: Tx, workspaceId: string, connectionId: string) =>
  (
    await queryRows<ConnectionRow>(
      tx,
      sql`SELECT provider, status, access_token_enc, token_version,
                 coalesce(expires_at <= now() + make_interval(secs => ${EXPIRY_SKEW_SECS}), false) AS expiring
            FROM oauth_connections WHERE workspace_id = ${workspaceId} AND id = ${connectionId}`,
    )
  )[0];

type Outcome = 'ok' | 'reauth_required' | 'error';

const audit = (
  tx: Tx,
  ctx: TokenUser,
  data: { provider: string; connectionId: string; reason: string },
  outcome: Outcome,
  extra: Record<string, unknown> = {},
) => writeAudit(tx, ctx, 'token_access', { ...data, outcome, ...extra });

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
  const first = await withTenant(deps.db, ctx, async (tx) => {
    const row = await readConnection(tx, ctx.workspaceId, connectionId);
    if (!row) return undefined;
    const use = { provider: row.provider, connectionId, reason };
    if (row.status !== 'active') {
      await audit(tx, ctx, use, 'reauth_required');
      return { row };
    }
    if (!options.forceRefresh && !row.expiring) {
      await audit(tx, ctx, use, 'ok');
      return {
        row,
        token: decryptSecret(keys(deps), row.access_token_enc, aad(ctx.workspaceId, connectionId, 'access')),
      };
    }
    return { row };
  });
  if (!first) throw notFound('Connection');
  if (first.token !== undefined) return first.token;
  const { row } = first;
  if (row.status !== 'active') throw reauthRequired(row.provider);

  const use = { provider: row.provider, connectionId, reason };
  try {
    const token = await singleFlight(deps.db, `${ctx.workspaceId}:${connectionId}`, () =>
      refreshConnection(deps, ctx, connectionId, row, options.forceRefresh === true),
    );
    await withTenant(deps.db, ctx, (tx) => audit(tx, ctx, use, 'ok', { refreshed: true }));
    return token;
  } catch (err) {
    const outcome: Outcome = err instanceof AppError && err.code === 'reauth_required' ? 'reauth_required' : 'error';
    await withTenant(deps.db, ctx, (tx) => audit(tx, ctx, use, outcome, { refreshed: true })).catch(() => undefined);
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
  const deadline = Date.now() + (REFRESH_LEASE_SECS + 5) * 1000;

  for (;;) {
    const [claim] = await withTenant(deps.db, ctx, (tx) =>
      queryRows<Claim>(
        tx,
        sql`UPDATE oauth_connections
               SET refresh_lease_until = now() + make_interval(secs => ${REFRESH_LEASE_SECS}), refresh_holder = ${holder}
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
    const now = await withTenant(deps.db, ctx, (tx) => readConnection(tx, ctx.workspaceId, connectionId));
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
  await withTenant(deps.db, ctx, (tx) =>
    storeTokens(deps, tx, ctx.workspaceId, connectionId, tokens, provider.scopes, { holder }),
  );
  return tokens.accessToken;
}

const releaseLease = (deps: OAuthDeps, ctx: TokenUser, where: ReturnType<typeof sql>, holder: string) =>
  withTenant(deps.db, ctx, (tx) =>
    tx.execute(
      sql`UPDATE oauth_connections SET refresh_lease_until = NULL, refresh_holder = NULL
           WHERE ${where} AND refresh_holder = ${holder}`,
    ),
  );

const markReauth = (deps: OAuthDeps, ctx: TokenUser, where: ReturnType<typeof sql>, holder: string) =>
  withTenant(deps.db, ctx, (tx) =>
    tx.execute(
      sql`UPDATE oauth_connections SET status = 'reauth_required', refresh_lease_until = NULL, refresh_holder = NULL,
                                      updated_at = now()
           WHERE ${where} AND refresh_holder = ${holder}`,
    ),
  );

// ---------------------------------------------------------------------------------------------
// Listing and disconnecting

export async function listConnections(
  deps: Pick<OAuthDeps, 'db'>,
  ctx: { workspaceId: string },
  filter: { provider?: string; userId?: string } = {},
): Promise<Connection[]> {
  const rows = await withTenant(deps.db, ctx, (tx) =>
    queryRows<{
      id: string;
      provider: string;
      account_email: string;
      user_id: string;
      status: Connection['status'];
      scopes: string[];
      created_at: Date | string;
    }>(
      tx,
      sql`SELECT id, provider, account_email, user_id, status, scopes, created_at FROM oauth_connections
           WHERE workspace_id = ${ctx.workspaceId}
             ${filter.provider ? sql`AND provider = ${filter.provider}` : sql``}
             ${filter.userId ? sql`AND user_id = ${filter.userId}` : sql``}
           ORDER BY id`,
    ),
  );
  return rows.map((r) => ({
    id: r.id,
    provider: r.provider,
    accountEmail: r.account_email,
    userId: r.user_id,
    status: r.status,
    scopes: r.scopes,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}

/**
 * Deletes the connection and its sealed tokens (404 when it is not this workspace's), then asks
 * the provider to revoke the refresh token (RFC 7009, best effort, after commit).
 */
export async function disconnect(deps: OAuthDeps, ctx: TokenUser, connectionId: string): Promise<void> {
  const [row] = await withTenant(deps.db, ctx, async (tx) => {
    const deleted = await queryRows<{ provider: string; refresh_token_enc: string | null; access_token_enc: string }>(
      tx,
      sql`DELETE FROM oauth_connections WHERE workspace_id = ${ctx.workspaceId} AND id = ${connectionId}
          RETURNING provider, refresh_token_enc, access_token_enc`,
    );
    if (deleted[0]) {
      await audit(tx, ctx, { provider: deleted[0].provider, connectionId, reason: 'token.revoke' }, 'ok');
    }
    return deleted;
  });
  if (!row) throw notFound('Connection');
  const provider = deps.oauthProviders(row.provider);
  if (!provider?.revokeUrl) return;
  const [blob, kind, hint] = row.refresh_token_enc
    ? ([row.refresh_token_enc, 'refresh', 'refresh_token'] as const)
    : ([row.access_token_enc, 'access', 'access_token'] as const);
  try {
    const token = decryptSecret(keys(deps), blob, aad(ctx.workspaceId, connectionId, kind));
    const revoked = await revokeToken(provider, token, hint);
    if (!revoked) ctx.log?.warn({ provider: provider.name, connectionId }, 'provider did not confirm token revocation');
  } catch (err) {
    ctx.log?.warn({ err, provider: provider.name, connectionId }, 'token revocation failed');
  }
}
