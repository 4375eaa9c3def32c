// The OAuth 2.0 token endpoint (RFC 6749 §4.1.3, §6) and revocation (RFC 7009), over platform/upstream.
import { z } from 'zod';
import { AppError } from '../errors.js';
import { createUpstream, type Upstream, UpstreamError, upstreamAppError } from '../upstream/index.js';

/** A provider is data: its endpoints, our client credentials and the scopes we ask for. */
export interface OAuthProvider {
  name: string;
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** RFC 7009 revocation endpoint, called (best effort) on disconnect. */
  revokeUrl?: string;
  /** Read for the account e-mail when the token response has no id_token carrying one. */
  userInfoUrl?: string;
  /** Extra authorize parameters, e.g. Google's `access_type=offline`, `prompt=consent`. */
  authorizeParams?: Record<string, string>;
  /** Client authentication at the token endpoint (RFC 6749 §2.3.1): form fields (default) or HTTP Basic. */
  clientAuth?: 'post' | 'basic';
  timeoutMs?: number;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  expiresInSec?: number;
  scopes?: string[];
  idToken?: string;
}

/** The provider refused the grant (RFC 6749 §5.2 error response), e.g. `invalid_grant`. */
export class OAuthGrantError extends Error {
  override readonly name = 'OAuthGrantError';
  constructor(
    readonly error: string,
    readonly status: number,
    description?: string,
  ) {
    super(description ? `${error}: ${description}` : error);
  }
}

const tokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().optional(),
  refresh_token: z.string().min(1).optional(),
  scope: z.string().optional(),
  id_token: z.string().optional(),
});

const errorResponse = z.object({ error: z.string(), error_description: z.string().optional() });

/** How long a call to the provider's token endpoint may take, all of it (one attempt: no retries). */
export const tokenTimeoutMs = (provider: OAuthProvider): number => provider.timeoutMs ?? 10_000;

const upstreamFor = (provider: OAuthProvider): Upstream =>
  // Token calls are never retried: a code is single-use and a rotated refresh token too.
  createUpstream({ name: `oauth:${provider.name}`, timeoutMs: tokenTimeoutMs(provider), retries: 0 });

async function tokenRequest(
  provider: OAuthProvider,
  params: Record<string, string>,
  requestId: string | undefined,
): Promise<TokenSet> {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (provider.clientAuth === 'basic') {
    const id = encodeURIComponent(provider.clientId);
    const secret = encodeURIComponent(provider.clientSecret);
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  } else {
    form.set('client_id', provider.clientId);
    form.set('client_secret', provider.clientSecret);
  }
  const res = await upstreamFor(provider).request({
    method: 'POST',
    url: provider.tokenUrl,
    headers,
    body: form.toString(),
    requestId,
  });
  let body: unknown;
  try {
    body = res.json();
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const refused = errorResponse.safeParse(body);
    if (refused.success && res.status < 500) {
      throw new OAuthGrantError(refused.data.error, res.status, refused.data.error_description);
    }
    throw new UpstreamError('http_status', `oauth:${provider.name}`, `token endpoint answered ${res.status}`, {
      status: res.status,
      attempts: res.attempts,
    });
  }
  const parsed = tokenResponse.safeParse(body);
  if (!parsed.success) {
    throw new UpstreamError('other', `oauth:${provider.name}`, 'token endpoint answered without an access_token');
  }
  const t = parsed.data;
  return {
    accessToken: t.access_token,
    refreshToken: t.refresh_token,
    expiresInSec: t.expires_in,
    scopes: t.scope ? t.scope.split(' ').filter(Boolean) : undefined,
    idToken: t.id_token,
  };
}

export function exchangeCode(
  provider: OAuthProvider,
  grant: { code: string; redirectUri: string; codeVerifier: string },
  requestId?: string,
): Promise<TokenSet> {
  return tokenRequest(
    provider,
    {
      grant_type: 'authorization_code',
      code: grant.code,
      redirect_uri: grant.redirectUri,
      code_verifier: grant.codeVerifier,
    },
    requestId,
  );
}

export function refreshGrant(provider: OAuthProvider, refreshToken: string, requestId?: string): Promise<TokenSet> {
  return tokenRequest(provider, { grant_type: 'refresh_token', refresh_token: refreshToken }, requestId);
}

/** RFC 7009: asks the provider to revoke a token. Best effort; resolves false when it did not work. */
export async function revokeToken(provider: OAuthProvider, token: string, hint: 'refresh_token' | 'access_token') {
  if (!provider.revokeUrl) return false;
  try {
    const form = new URLSearchParams({ token, token_type_hint: hint, client_id: provider.clientId });
    form.set('client_secret', provider.clientSecret);
    const res = await upstreamFor(provider).request({
      method: 'POST',
      url: provider.revokeUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * The e-mail of the account that consented: the `email` claim of the id_token (received straight
 * from the token endpoint over TLS, so OpenID Connect Core §3.1.3.7 lets TLS stand in for the
 * signature check), else the provider's userinfo endpoint.
 */
export async function accountEmail(provider: OAuthProvider, tokens: TokenSet, requestId?: string): Promise<string> {
  const claim = tokens.idToken ? idTokenEmail(tokens.idToken) : undefined;
  if (claim) return claim.toLowerCase();
  if (provider.userInfoUrl) {
    const res = await upstreamFor(provider).request({
      url: provider.userInfoUrl,
      headers: { authorization: `Bearer ${tokens.accessToken}`, accept: 'application/json' },
      requestId,
      throwOnHttpError: true,
    });
    const info = res.json<Record<string, unknown>>();
    const email = [info.email, info.mail, info.userPrincipalName].find((v) => typeof v === 'string' && v.includes('@'));
    if (typeof email === 'string') return email.toLowerCase();
  }
  throw new AppError('account_unknown', 502, `${provider.name} did not say which account consented`);
}

function idTokenEmail(idToken: string): string | undefined {
  try {
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof claims.email === 'string' && claims.email.includes('@') ? claims.email : undefined;
  } catch {
    return undefined;
  }
}

/** An upstream failure of the token endpoint as problem+json (502/503/504). */
export function tokenEndpointError(provider: OAuthProvider, err: unknown): unknown {
  return err instanceof UpstreamError ? upstreamAppError(err, `${provider.name} token endpoint`) : err;
}
