// The OAuth 2.0 side of the calendar emulators: an authorize endpoint that consents at once
// (login_hint picks the account), a token endpoint (authorization_code with PKCE S256,
// refresh_token, invalid_grant), optional RFC 7009 revocation, expire-tokens, and bearer checks.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { applyFault, type FaultBook } from '../faults.js';
import { OAUTH_KEY, type OAuthDoc, oauthInitial, readDoc, updateDoc } from './store.js';
import { type EmulatorName, issueCode, issueTokens, verify } from './tokens.js';

export interface OAuthServerOptions {
  emulator: Exclude<EmulatorName, 'zoom'>;
  authorizePath: string;
  tokenPath: string;
  revokePath?: string;
  faults: FaultBook;
  /** Extra members of a token response (id_token, scope…). */
  tokenExtras(email: string, clientId: string): Record<string, unknown>;
  /** Extra members of a token error (Microsoft's error_codes…). */
  errorExtras?(): Record<string, unknown>;
  /** Creates the account (and its primary calendar) on first consent. */
  ensureAccount(email: string): Promise<void>;
}

const S256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

function clientOf(request: FastifyRequest, form: Record<string, string>): { id?: string; secret?: string } {
  const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? '');
  if (basic) {
    const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
    return { id: decodeURIComponent(id ?? ''), secret: decodeURIComponent(secret ?? '') };
  }
  return { id: form.client_id, secret: form.client_secret };
}

export function registerOAuthServer(fastify: FastifyInstance, options: OAuthServerOptions): void {
  const db = () => fastify.atrium.db;
  const { emulator } = options;

  fastify.get(options.authorizePath, { schema: { hide: true } }, async (request, reply) => {
    const q = request.query as Record<string, string | undefined>;
    if (!q.redirect_uri || !q.client_id || q.response_type !== 'code') {
      return reply
        .status(400)
        .type('text/plain')
        .send('invalid_request: client_id, redirect_uri and response_type=code');
    }
    if (!q.code_challenge || (q.code_challenge_method ?? 'plain') !== 'S256') {
      return reply.status(400).type('text/plain').send('invalid_request: PKCE with S256 is required');
    }
    const email = (q.login_hint || `demo@${emulator}.example`).toLowerCase().slice(0, 320);
    await options.ensureAccount(email);
    const target = new URL(q.redirect_uri);
    target.searchParams.set('code', issueCode(emulator, email, q.redirect_uri, q.code_challenge));
    if (q.state) target.searchParams.set('state', q.state);
    return reply.redirect(target.toString(), 302);
  });

  const refuse = (reply: FastifyReply, status: number, error: string, description: string) =>
    reply
      .status(status)
      .header('cache-control', 'no-store')
      .send({ error, error_description: description, ...options.errorExtras?.() });

  fastify.post(options.tokenPath, { schema: { hide: true }, config: { formBody: true } }, async (request, reply) => {
    const fault = await applyFault(options.faults, 'token');
    if (fault) {
      return reply
        .status(fault.status!)
        .send(
          fault.body ??
            (fault.status === 400
              ? { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' }
              : { error: 'temporarily_unavailable' }),
        );
    }
    const form = (request.body ?? {}) as Record<string, string>;
    const client = clientOf(request, form);
    if (!client.id || !client.secret) return refuse(reply, 401, 'invalid_client', 'The OAuth client was not found.');
    const state = (await readDoc<OAuthDoc>(db(), emulator, OAUTH_KEY)) ?? oauthInitial();
    let email: string;
    let withRefresh = true;
    if (form.grant_type === 'authorization_code') {
      const code = verify(emulator, form.code ?? '', 'c');
      if (!code || code.r !== form.redirect_uri || !form.code_verifier || S256(form.code_verifier) !== code.c) {
        return refuse(reply, 400, 'invalid_grant', 'Malformed auth code, wrong redirect_uri or code_verifier.');
      }
      // As the providers do: a code is exchanged once (a replayed callback URL gets nothing).
      const first = await updateDoc(db(), emulator, OAUTH_KEY, oauthInitial, (doc: OAuthDoc) => {
        const now = Date.now();
        doc.redeemed = Object.fromEntries(Object.entries(doc.redeemed ?? {}).filter(([, until]) => until > now));
        if (doc.redeemed[code.n]) return false;
        doc.redeemed[code.n] = code.x;
        return true;
      });
      if (!first) return refuse(reply, 400, 'invalid_grant', 'The authorization code was already redeemed.');
      email = code.e;
    } else if (form.grant_type === 'refresh_token') {
      const refresh = verify(emulator, form.refresh_token ?? '', 'r');
      if (!refresh || state.revoked.includes(refresh.n)) {
        return refuse(reply, 400, 'invalid_grant', 'Token has been expired or revoked.');
      }
      email = refresh.e;
      // Google keeps the refresh token; Microsoft rotates it.
      withRefresh = emulator === 'microsoft';
    } else {
      return refuse(reply, 400, 'unsupported_grant_type', 'Use authorization_code or refresh_token.');
    }
    const tokens = issueTokens(emulator, email, state.generation, withRefresh);
    return reply.header('cache-control', 'no-store').send({
      access_token: tokens.access_token,
      expires_in: tokens.expires_in,
      token_type: 'Bearer',
      ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
      ...options.tokenExtras(email, client.id),
    });
  });

  if (options.revokePath) {
    fastify.post(options.revokePath, { schema: { hide: true }, config: { formBody: true } }, async (request, reply) => {
      const form = {
        ...((request.body ?? {}) as Record<string, string>),
        ...(request.query as Record<string, string>),
      };
      const refresh = verify(emulator, form.token ?? '', 'r');
      if (refresh) {
        await updateDoc(db(), emulator, OAUTH_KEY, oauthInitial, (doc: OAuthDoc) => {
          doc.revoked = [...doc.revoked.slice(-999), refresh.n];
        });
      }
      return reply.send({});
    });
  }

  registerExpireTokens(fastify, emulator);
}

/** POST /expire-tokens: every access token issued so far answers 401 from now on. */
export function registerExpireTokens(fastify: FastifyInstance, emulator: EmulatorName): void {
  fastify.post(
    '/expire-tokens',
    { schema: { tags: ['emulators'], summary: 'Invalidate every access token issued so far' } },
    async (_request, reply) => {
      await updateDoc(fastify.atrium.db, emulator, OAUTH_KEY, oauthInitial, (doc: OAuthDoc) => {
        doc.generation += 1;
      });
      return reply.send({ ok: true });
    },
  );
}

/** The account e-mail of a valid bearer access token, or undefined (→ the provider's 401). */
export async function bearerEmail(fastify: FastifyInstance, request: FastifyRequest, emulator: EmulatorName) {
  const token = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
  const access = token ? verify(emulator, token, 'a') : undefined;
  if (!access) return undefined;
  const state = (await readDoc<OAuthDoc>(fastify.atrium.db, emulator, OAUTH_KEY)) ?? oauthInitial();
  return access.g === state.generation ? access.e : undefined;
}
