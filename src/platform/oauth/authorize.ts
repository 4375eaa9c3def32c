// The authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636) and a signed, expiring state.
import { sql } from 'drizzle-orm';
import { writeAudit } from '../audit/audit.js';
import type { Tx } from '../db/client.js';
import { queryRows, withTenant } from '../db/tenant.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { type OAuthDeps, providerOf, storeTokens } from './connections.js';
import { requireMember } from './membership.js';
import { codeChallengeS256, createCodeVerifier } from './pkce.js';
import { invalidState, signState, verifyState } from './state.js';
import { accountEmail, exchangeCode, OAuthGrantError, type TokenSet, tokenEndpointError } from './token-client.js';

export const STATE_TTL_MS = 10 * 60_000;

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

/**
 * A module's check of a connection about to be stored, in its transaction (throw to refuse: nothing
 * is kept). `repaired` when the account was already connected.
 */
export type AdmitConnection = (
  tx: Tx,
  connection: { workspaceId: string; connectionId: string; repaired: boolean },
) => Promise<void>;

/** How many of the workspace's connections are to these providers, leaving one out (in `tx`). */
export async function countConnections(
  tx: Tx,
  workspaceId: string,
  providers: string[],
  except: string,
): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    tx,
    sql`SELECT count(*)::int AS n FROM oauth_connections
         WHERE workspace_id = ${workspaceId} AND provider IN ${sql`(${sql.join(
           providers.map((p) => sql`${p}`),
           sql`, `,
         )})`} AND id <> ${except}`,
  );
  return row.n;
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
  options: { expectedUserId?: string; requestId?: string; admit?: AdmitConnection } = {},
): Promise<CompletedAuthorization> {
  const state = verifyState(deps.config.encryptionKey, query.state ?? '');
  if (state.provider !== providerName) throw invalidState();
  if (options.expectedUserId && options.expectedUserId !== state.userId) {
    throw invalidState('Another user started this connection; sign in as them, or start connecting again');
  }
  if (query.error || !query.code) {
    throw new AppError('authorization_failed', 400, `The provider did not authorize: ${query.error ?? 'no code'}`);
  }
  const provider = providerOf(deps, providerName);
  // Removed from the workspace since starting: refused before the code is exchanged (checked again as it is stored).
  await withTenant(deps.db, { workspaceId: state.workspaceId }, (tx) =>
    requireMember(tx, state.workspaceId, state.userId),
  );
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
  const saved = await saveConnection(
    deps,
    { workspaceId: state.workspaceId, userId: state.userId, requestId: options.requestId },
    provider.name,
    email,
    tokens,
    options.admit,
  );
  return {
    ...saved,
    workspaceId: state.workspaceId,
    userId: state.userId,
    accountEmail: email,
    returnTo: state.returnTo,
  };
}

/**
 * Stores a token set as the workspace's connection of (provider, account): a new connection, or the
 * existing one repaired (new tokens, `active`); 400 `invalid_state` when the user is no longer a
 * member of the workspace (nothing is stored). The callback uses it; so does the demo seed, which
 * gets its tokens from an emulator without a browser.
 */
export async function saveConnection(
  deps: OAuthDeps,
  actor: { workspaceId: string; userId: string; requestId?: string },
  providerName: string,
  email: string,
  tokens: TokenSet,
  admit?: AdmitConnection,
): Promise<{ connectionId: string; repaired: boolean }> {
  const provider = providerOf(deps, providerName);
  return withTenant(deps.db, actor, async (tx) => {
    // Held until commit: a removal of this member waits for it (and then disconnects what was stored).
    await requireMember(tx, actor.workspaceId, actor.userId);
    const fresh = newId('oac');
    const inserted = await queryRows<{ id: string }>(
      tx,
      sql`INSERT INTO oauth_connections (workspace_id, id, provider, account_email, user_id, access_token_enc)
          VALUES (${actor.workspaceId}, ${fresh}, ${provider.name}, ${email}, ${actor.userId}, '')
          ON CONFLICT (workspace_id, provider, account_email) DO NOTHING RETURNING id`,
    );
    const [row] = inserted.length
      ? inserted
      : await queryRows<{ id: string }>(
          tx,
          sql`SELECT id FROM oauth_connections
               WHERE workspace_id = ${actor.workspaceId} AND provider = ${provider.name} AND account_email = ${email}
               FOR UPDATE`,
        );
    // The module's own rule (e.g. how many connections a tier may have) decides before anything is kept.
    await admit?.(tx, { workspaceId: actor.workspaceId, connectionId: row.id, repaired: inserted.length === 0 });
    await storeTokens(deps, tx, actor.workspaceId, row.id, tokens, provider.scopes, { userId: actor.userId });
    await writeAudit(tx, actor, 'token_access', {
      provider: provider.name,
      connectionId: row.id,
      reason: 'token.exchange',
      outcome: 'ok',
    });
    return { connectionId: row.id, repaired: inserted.length === 0 };
  });
}
