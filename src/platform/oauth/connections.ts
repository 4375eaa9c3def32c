// Provider connections: what is stored (sealed tokens per workspace and connection), listing and
// disconnecting. The flow is in authorize.ts, token use and refresh in tokens.ts.
import { type SQL, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { writeAudit } from '../audit/audit.js';
import { decryptSecret, encryptSecret, type SecretKey } from '../crypto.js';
import type { Tx } from '../db/client.js';
import { queryRows, withSystem, withTenant } from '../db/tenant.js';
import { AppError, notFound } from '../errors.js';
import type { AppDeps } from '../types.js';
import { type OAuthProvider, revokeToken, type TokenSet } from './token-client.js';

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

export const reauthRequired = (provider: string) =>
  new AppError('reauth_required', 409, `The ${provider} connection must be connected again`);

export const keys = (deps: OAuthDeps): SecretKey[] => [
  { id: deps.config.encryptionKeyId, key: deps.config.encryptionKey },
];
/** Binds each sealed token to its workspace, connection and kind, so a copied value will not open elsewhere. */
export const aad = (workspaceId: string, connectionId: string, kind: 'access' | 'refresh') =>
  `oauth:${workspaceId}:${connectionId}:${kind}`;

export function providerOf(deps: OAuthDeps, name: string): OAuthProvider {
  const provider = deps.oauthProviders(name);
  if (!provider) throw new AppError('provider_unavailable', 422, `Provider ${name} is not configured`);
  return provider;
}

export type Outcome = 'ok' | 'reauth_required' | 'error';

export const auditTokenUse = (
  tx: Tx,
  ctx: TokenUser,
  data: { provider: string; connectionId: string; reason: string },
  outcome: Outcome,
  extra: Record<string, unknown> = {},
) => writeAudit(tx, ctx, 'token_access', { ...data, outcome, ...extra });

/** Seals and stores a token set; with `holder`, only while that refresh lease is still held. */
export async function storeTokens(
  deps: OAuthDeps,
  tx: Tx,
  workspaceId: string,
  connectionId: string,
  tokens: TokenSet,
  requestedScopes: string[],
  /**
   * `sinceVersion` (a refresh): stores only when no tokens were stored since the row had that `token_version`
   * (the refresher's claim), and keeps the refresh token a non-rotating provider did not send again.
   */
  options: { userId?: string; sinceVersion?: number },
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
               refresh_token_enc = ${options.sinceVersion !== undefined ? sql`coalesce(${refresh}, refresh_token_enc)` : sql`${refresh}`},
               expires_at = ${expiresAt}, scopes = ${scopes}::jsonb, status = 'active',
               token_version = token_version + 1, refresh_lease_until = NULL, refresh_holder = NULL,
               user_id = coalesce(${options.userId ?? null}, user_id), updated_at = now()
         WHERE workspace_id = ${workspaceId} AND id = ${connectionId}
           ${options.sinceVersion !== undefined ? sql`AND token_version = ${options.sinceVersion}` : sql``}
        RETURNING id`,
  );
  return rows.length;
}

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

interface Removed {
  id: string;
  provider: string;
  account_email: string;
  refresh_token_enc: string | null;
  access_token_enc: string;
}

/** Deletes connections (tokens gone) in `tx`, one `token.revoke` row each; returns what to revoke at the provider. */
async function deleteConnections(
  tx: Tx,
  ctx: TokenUser,
  which: SQL,
  extra: Record<string, unknown> = {},
): Promise<Removed[]> {
  const deleted = await queryRows<Removed>(
    tx,
    sql`DELETE FROM oauth_connections WHERE workspace_id = ${ctx.workspaceId} AND ${which}
        RETURNING id, provider, account_email, refresh_token_enc, access_token_enc`,
  );
  for (const row of deleted) {
    await auditTokenUse(tx, ctx, { provider: row.provider, connectionId: row.id, reason: 'token.revoke' }, 'ok', extra);
  }
  return deleted;
}

/**
 * Asks the provider to revoke each deleted connection's refresh token (RFC 7009, best effort). Not when the same
 * account is still connected elsewhere (another workspace, or connected again meanwhile): Google's revocation
 * ends the account's whole grant to our client, so it would cut that other connection off too.
 */
async function revokeDeleted(deps: OAuthDeps, ctx: TokenUser, removed: Removed[]): Promise<void> {
  await Promise.all(
    removed.map(async (row) => {
      const connectionId = row.id;
      const provider = deps.oauthProviders(row.provider);
      if (!provider?.revokeUrl) return;
      const [elsewhere] = await withSystem(deps.db, (tx) =>
        queryRows<{ n: number }>(
          tx,
          sql`SELECT 1 AS n FROM oauth_connections WHERE provider = ${row.provider} AND account_email = ${row.account_email} LIMIT 1`,
        ),
      );
      if (elsewhere) return;
      const [blob, kind, hint] = row.refresh_token_enc
        ? ([row.refresh_token_enc, 'refresh', 'refresh_token'] as const)
        : ([row.access_token_enc, 'access', 'access_token'] as const);
      try {
        const token = decryptSecret(keys(deps), blob, aad(ctx.workspaceId, connectionId, kind));
        const revoked = await revokeToken(provider, token, hint);
        if (!revoked) {
          ctx.log?.warn({ provider: provider.name, connectionId }, 'provider did not confirm token revocation');
        }
      } catch (err) {
        ctx.log?.warn({ err, provider: provider.name, connectionId }, 'token revocation failed');
      }
    }),
  );
}

/**
 * Deletes the connection and its sealed tokens (404 when it is not this workspace's), then asks
 * the provider to revoke the refresh token (RFC 7009, best effort, after commit).
 */
export async function disconnect(deps: OAuthDeps, ctx: TokenUser, connectionId: string): Promise<void> {
  const done = await withTenant(deps.db, ctx, (tx) => disconnectIn(deps, tx, ctx, { connectionId }));
  if (done.connectionIds.length === 0) throw notFound('Connection');
  await done.afterCommit();
}

/**
 * Disconnects in the caller's transaction (so a module's own rows change with it): one connection,
 * or every connection a user made in the workspace to one of `providers` (a member's removal; the
 * `token.revoke` rows then carry `removedMember`). Tokens are deleted; returns the ids disconnected
 * and what to run after commit (the revocation at the provider, best effort).
 */
export async function disconnectIn(
  deps: OAuthDeps,
  tx: Tx,
  ctx: TokenUser,
  which: { connectionId: string } | { userId: string; providers: string[] },
): Promise<{ connectionIds: string[]; afterCommit: () => Promise<void> }> {
  let removed: Removed[];
  if ('connectionId' in which) {
    removed = await deleteConnections(tx, ctx, sql`id = ${which.connectionId}`);
  } else if (which.providers.length === 0) {
    removed = [];
  } else {
    removed = await deleteConnections(
      tx,
      ctx,
      sql`user_id = ${which.userId} AND provider IN (${sql.join(
        which.providers.map((p) => sql`${p}`),
        sql`, `,
      )})`,
      { removedMember: which.userId },
    );
  }
  return { connectionIds: removed.map((r) => r.id), afterCommit: () => revokeDeleted(deps, ctx, removed) };
}

/**
 * Whether the connection still exists, keeping it from being deleted (`FOR KEY SHARE`) until the
 * caller's transaction ends: a module storing what it just fetched with the connection's token does
 * not bring it back after a disconnect that committed meanwhile.
 */
export async function holdConnection(tx: Tx, workspaceId: string, connectionId: string): Promise<boolean> {
  const rows = await queryRows(
    tx,
    sql`SELECT 1 FROM oauth_connections WHERE workspace_id = ${workspaceId} AND id = ${connectionId} FOR KEY SHARE`,
  );
  return rows.length > 0;
}
