import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestContext } from '../context.js';
import { safeEqual, sha256Hex } from '../crypto.js';
import { withSystem } from '../db/tenant.js';
import { AppError } from '../errors.js';
import { routedPath } from '../http/hardening.js';
import type { AppDeps, AuthMode } from '../types.js';
import { type Principal, principalResolver } from './principals.js';
import { checkNamedWorkspace } from './workspace-guard.js';

export const SESSION_COOKIE = 'atrium_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

const unauthenticated = () => new AppError('unauthenticated', 401, 'Sign in or send a valid API token');

function contextFor(request: FastifyRequest, p: Principal, via: RequestContext['via']): RequestContext {
  return {
    workspaceId: p.workspaceId,
    organizationId: p.organizationId,
    tier: p.tier,
    userId: p.userId,
    role: p.role,
    isProvider: p.isProvider,
    requestId: String(request.id),
    log: request.log,
    via,
  };
}

/** The origin the browser app is served from: the public URL, else what the request was addressed to. */
function expectedOrigin(app: FastifyInstance, request: FastifyRequest): string {
  const configured = app.atrium.config.publicUrl;
  if (configured) return new URL(configured).origin;
  return `${request.protocol}://${request.host}`;
}

/** Cookie-authenticated unsafe requests must come from our own pages (Origin match or X-Requested-With). */
function checkCsrf(app: FastifyInstance, request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  const expected = expectedOrigin(app, request);
  if (origin && origin !== expected) throw new AppError('forbidden', 403, 'Cross-site request refused');
  if (origin === expected || request.headers['x-requested-with']) return;
  throw new AppError('forbidden', 403, 'Cookie-authenticated requests need an X-Requested-With header or Origin');
}

/** Reads a credential (by hash) from the database, past the cache; undefined once revoked or expired. */
export async function lookupCredential(
  deps: AppDeps,
  hash: string,
  via: 'token' | 'session',
): Promise<(Principal & { sessionExpiresAt?: Date }) | undefined> {
  const resolver = principalResolver();
  return withSystem(deps.db, (tx) =>
    via === 'token' ? resolver.byTokenHash(tx, hash) : resolver.bySessionHash(tx, hash),
  );
}

/** Resolves the caller from an API token or the session cookie; undefined when neither is valid. */
async function resolvePrincipal(
  app: FastifyInstance,
  request: FastifyRequest,
): Promise<{ principal: Principal; via: 'token' | 'session'; hash: string } | undefined> {
  const token = bearer(request);
  const cookie = token ? undefined : request.cookies?.[SESSION_COOKIE];
  const secret = token ?? cookie;
  if (!secret) return undefined;
  const hash = sha256Hex(secret);
  const cached = app.atrium.principals.get(hash);
  if (cached) return { ...cached, hash };
  const via = token ? 'token' : 'session';
  const generation = app.atrium.principals.generation;
  const found = await lookupCredential(app.atrium, hash, via);
  if (!found) return undefined;
  const { sessionExpiresAt, ...principal } = found;
  app.atrium.principals.set(hash, principal, via, sessionExpiresAt, generation);
  return { principal, via, hash };
}

/** How a route authenticates: its `config.auth`, else `user` under /api/v1 and `public` elsewhere. */
export function authModeOf(configured: AuthMode | undefined, routePath: string): AuthMode {
  return configured ?? (routePath.startsWith('/api/v1/') ? 'user' : 'public');
}

export function registerAuthentication(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    // Unknown routes answer 404 whoever asks (the not-found handler runs these hooks too).
    if (request.is404) return;
    // By the matched route, not the URL as sent (`/%61pi/v1/…` reaches the same routes).
    const mode = authModeOf(request.routeOptions.config?.auth, routedPath(request));
    if (mode === 'public') return;
    const token = bearer(request);
    const { operatorToken, cronSecret } = app.atrium.config;
    if (mode === 'operator') {
      if (!token || !safeEqual(token, operatorToken)) throw unauthenticated();
      return;
    }
    if (mode === 'cron') {
      const ok =
        token && (safeEqual(token, operatorToken) || (cronSecret !== undefined && safeEqual(token, cronSecret)));
      if (!ok) throw unauthenticated();
      return;
    }
    const resolved = await resolvePrincipal(app, request);
    if (!resolved) throw unauthenticated();
    if (resolved.via === 'session') checkCsrf(app, request);
    // Made for the workspace the credential is in now (a tab may show one its session has since left)?
    await checkNamedWorkspace(app.atrium, request, resolved.principal.workspaceId, resolved.via);
    request.ctx = contextFor(request, resolved.principal, resolved.via);
    request.sessionId = resolved.principal.sessionId;
    request.credential = { hash: resolved.hash, via: resolved.via };
    if (mode === 'admin' && resolved.principal.role !== 'admin') {
      throw new AppError('forbidden', 403, 'Only workspace admins may do this');
    }
  });
}

/**
 * On a public route, who is signed in (session cookie or token), if anyone: a browser coming back from
 * a provider's consent page carries its session, so a flow started by someone else can be refused.
 */
export async function signedInUserId(request: FastifyRequest): Promise<string | undefined> {
  return (await resolvePrincipal(request.server, request))?.principal.userId;
}

/** The caller's context; routes that run behind `user`/`admin` auth always have one. */
export function requireCtx(request: FastifyRequest): RequestContext {
  if (!request.ctx) throw unauthenticated();
  return request.ctx;
}
