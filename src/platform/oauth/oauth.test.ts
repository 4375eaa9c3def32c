import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import Fastify from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { TEST_SERVER_URL } from '../../../test/helpers/db.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { decryptSecret, encryptSecret } from '../crypto.js';
import type { Db } from '../db/client.js';
import { queryRows, withSystem } from '../db/tenant.js';
import { AppError, installErrorHandling } from '../errors.js';
import { completeAuthorization, startAuthorization } from './authorize.js';
import { disconnect, listConnections, type OAuthDeps } from './connections.js';
import { codeChallengeS256, createCodeVerifier } from './pkce.js';
import { signState, verifyState } from './state.js';
import type { OAuthProvider } from './token-client.js';
import { getAccessToken } from './tokens.js';

// ---------------------------------------------------------------------------------------------
// A tiny OAuth 2.0 authorization server (RFC 6749 + RFC 7636 + RFC 7009) on a loopback port.

interface TokenServer {
  url: string;
  /** grant_type of every POST /token, in order. */
  grants: string[];
  refreshCalls(): number;
  revoked: string[];
  /** Seconds the issued access tokens live. */
  expiresIn: number;
  /** Held before answering a refresh, so concurrent callers overlap. */
  refreshDelayMs: number;
  /** Delays of the next refreshes, in order (then `refreshDelayMs`). */
  refreshDelays: number[];
  /** The refresh tokens issued, in order. */
  issuedRefreshTokens: string[];
  /** Makes every refresh token issued so far invalid (the user revoked access at the provider). */
  revokeAllRefreshTokens(): void;
  close(): Promise<void>;
}

const CLIENT_ID = 'atrium-test';
const CLIENT_SECRET = 's3cret';

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function startTokenServer(): Promise<TokenServer> {
  const codes = new Map<string, { challenge: string; redirectUri: string; email: string }>();
  const refreshTokens = new Map<string, { email: string; valid: boolean }>();
  const grants: string[] = [];
  const revoked: string[] = [];
  const token = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
  const idToken = (email: string) =>
    [
      Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url'),
      Buffer.from(JSON.stringify({ sub: email, email })).toString('base64url'),
      '',
    ].join('.');

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const issue = (email: string) => {
      const refresh = token('rt');
      refreshTokens.set(refresh, { email, valid: true });
      self.issuedRefreshTokens.push(refresh);
      json(200, {
        access_token: token('at'),
        token_type: 'Bearer',
        expires_in: self.expiresIn,
        refresh_token: refresh,
        scope: 'calendar.read calendar.write',
        id_token: idToken(email),
      });
    };

    if (req.method === 'GET' && url.pathname === '/authorize') {
      // Consents at once, like the emulators (contract §11).
      const q = url.searchParams;
      if (q.get('client_id') !== CLIENT_ID || q.get('response_type') !== 'code')
        return json(400, { error: 'invalid_request' });
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
        return json(400, { error: 'invalid_request' });
      const code = token('code');
      codes.set(code, {
        challenge: q.get('code_challenge') as string,
        redirectUri: q.get('redirect_uri') as string,
        email: q.get('login_hint') ?? 'demo@provider.example',
      });
      const back = new URL(q.get('redirect_uri') as string);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (req.method === 'POST' && (url.pathname === '/token' || url.pathname === '/revoke')) {
      if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
        return json(400, { error: 'invalid_request' });
      }
      const form = await readForm(req);
      if (form.get('client_id') !== CLIENT_ID || form.get('client_secret') !== CLIENT_SECRET) {
        return json(401, { error: 'invalid_client' });
      }
      if (url.pathname === '/revoke') {
        const t = form.get('token') ?? '';
        revoked.push(t);
        const known = refreshTokens.get(t);
        if (known) known.valid = false;
        res.writeHead(200);
        return res.end();
      }
      const grant = form.get('grant_type') ?? '';
      grants.push(grant);
      if (grant === 'authorization_code') {
        const entry = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (!entry || entry.redirectUri !== form.get('redirect_uri') || entry.challenge !== challenge) {
          return json(400, { error: 'invalid_grant', error_description: 'code, redirect_uri or code_verifier wrong' });
        }
        return issue(entry.email);
      }
      if (grant === 'refresh_token') {
        // The provider rotates at once (the refresh token presented is spent); its answer may come late.
        const entry = refreshTokens.get(form.get('refresh_token') ?? '');
        const valid = entry?.valid === true;
        if (entry) entry.valid = false; // rotation: each refresh token works once
        await new Promise((r) => setTimeout(r, self.refreshDelays.shift() ?? self.refreshDelayMs));
        if (!entry || !valid) return json(400, { error: 'invalid_grant' });
        return issue(entry.email);
      }
      return json(400, { error: 'unsupported_grant_type' });
    }
    json(404, { error: 'not_found' });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const self: TokenServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    grants,
    refreshCalls: () => grants.filter((g) => g === 'refresh_token').length,
    revoked,
    expiresIn: 3600,
    refreshDelayMs: 0,
    refreshDelays: [],
    issuedRefreshTokens: [],
    revokeAllRefreshTokens() {
      for (const entry of refreshTokens.values()) entry.valid = false;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return self;
}

// ---------------------------------------------------------------------------------------------

let t: TestApp;
let server: TokenServer;
let provider: OAuthProvider;
let ws: TestWorkspace;
let other: TestWorkspace;

const REDIRECT = 'https://atrium.example/calendar/oauth/testprov/callback';

function depsFor(db: Db): OAuthDeps {
  return { db, config: t.config, oauthProviders: (name) => (name === provider.name ? provider : undefined) };
}
const deps = () => depsFor(t.database.db);
const ctxOf = (w: TestWorkspace) => ({ workspaceId: w.id, userId: w.admin.userId, requestId: 'req_test' });

beforeAll(async () => {
  t = await createTestApp();
  server = await startTokenServer();
  provider = {
    name: 'testprov',
    authorizeUrl: `${server.url}/authorize`,
    tokenUrl: `${server.url}/token`,
    revokeUrl: `${server.url}/revoke`,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    scopes: ['calendar.read', 'calendar.write'],
  };
  ws = await createWorkspace(t);
  other = await createWorkspace(t);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});
beforeEach(() => {
  server.expiresIn = 3600;
  server.refreshDelayMs = 0;
  server.refreshDelays = [];
});

/** The browser's round trip: open the authorize URL, follow nothing, read the callback's query. */
async function consent(authorizeUrl: string): Promise<{ code: string; state: string }> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location') as string);
  expect(back.origin + back.pathname).toBe(REDIRECT);
  return { code: back.searchParams.get('code') as string, state: back.searchParams.get('state') as string };
}

async function connect(w: TestWorkspace, email: string) {
  const { authorizeUrl } = startAuthorization(deps(), ctxOf(w), 'testprov', {
    redirectUri: REDIRECT,
    loginHint: email,
  });
  return completeAuthorization(deps(), 'testprov', await consent(authorizeUrl), { expectedUserId: w.admin.userId });
}

interface RawConnection {
  access_token_enc: string;
  refresh_token_enc: string | null;
  status: string;
  token_version: number;
}
async function raw(id: string): Promise<RawConnection | undefined> {
  const [row] = await withSystem(t.database.db, (tx) =>
    queryRows<RawConnection>(
      tx,
      sql`SELECT access_token_enc, refresh_token_enc, status, token_version FROM oauth_connections WHERE id = ${id}`,
    ),
  );
  return row;
}
const expire = (id: string) =>
  withSystem(t.database.db, (tx) =>
    tx.execute(sql`UPDATE oauth_connections SET expires_at = now() - interval '1 minute' WHERE id = ${id}`),
  );
const tokenAudits = (workspaceId: string, connectionId: string) =>
  withSystem(t.database.db, (tx) =>
    queryRows<{ data: Record<string, unknown>; request_id: string | null; actor_user_id: string | null }>(
      tx,
      sql`SELECT data, request_id, actor_user_id FROM audit_log
           WHERE workspace_id = ${workspaceId} AND kind = 'token_access' AND data->>'connectionId' = ${connectionId}
           ORDER BY id`,
    ),
  );
const keys = () => [{ id: t.config.encryptionKeyId, key: t.config.encryptionKey }];

async function expectAppError(promise: Promise<unknown>, status: number, code: string) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ status, code });
}

describe('PKCE', () => {
  it('S256 matches RFC 7636 appendix B', () => {
    expect(codeChallengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('verifiers are 43 characters of the unreserved alphabet and never repeat', () => {
    const a = createCodeVerifier();
    expect(a).toMatch(/^[A-Za-z0-9\-._~]{43}$/);
    expect(createCodeVerifier()).not.toBe(a);
  });
});

describe('state', () => {
  const key = randomBytes(32);
  const state = {
    workspaceId: 'ws_1',
    userId: 'usr_1',
    provider: 'testprov',
    codeVerifier: createCodeVerifier(),
    redirectUri: REDIRECT,
    expiresAt: Date.now() + 60_000,
  };

  it('round-trips, and does not show the PKCE verifier', () => {
    const signed = signState(key, state);
    expect(verifyState(key, signed)).toMatchObject(state);
    expect(signed).not.toContain(state.codeVerifier);
    expect(Buffer.from(signed.split('.')[1], 'base64url').toString()).not.toContain(state.codeVerifier);
  });

  it('a changed payload, signature, key or an expired state is 400 invalid_state', () => {
    const signed = signState(key, state);
    const [v, body, mac] = signed.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, w: 'ws_victim' })).toString('base64url');
    const attempts = [`${v}.${forged}.${mac}`, `${v}.${body}.${mac.slice(0, -2)}AA`, `${v}.${body}`, 'garbage', ''];
    for (const s of attempts)
      expect(() => verifyState(key, s)).toThrow(expect.objectContaining({ status: 400, code: 'invalid_state' }));
    expect(() => verifyState(randomBytes(32), signed)).toThrow(expect.objectContaining({ code: 'invalid_state' }));
    expect(() => verifyState(key, signed, state.expiresAt + 1)).toThrow(
      expect.objectContaining({ code: 'invalid_state' }),
    );
  });

  it('a tampered or expired state at the callback is a 400 problem', async () => {
    const app = Fastify();
    installErrorHandling(app);
    app.get('/cb', async (request) => {
      const q = request.query as { code?: string; state?: string };
      return completeAuthorization(deps(), 'testprov', q);
    });
    const { authorizeUrl } = startAuthorization(deps(), ctxOf(ws), 'testprov', { redirectUri: REDIRECT });
    const { code, state: good } = await consent(authorizeUrl);
    const tampered = `${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}`;
    const expired = startAuthorization(deps(), ctxOf(ws), 'testprov', {
      redirectUri: REDIRECT,
      now: Date.now() - 11 * 60_000,
    }).state;
    const grantsBefore = server.grants.length;
    for (const state of [tampered, expired]) {
      const res = await app.inject({ method: 'GET', url: '/cb', query: { code, state } });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json()).toMatchObject({ status: 400, code: 'invalid_state' });
    }
    expect(server.grants.length).toBe(grantsBefore); // refused before any token call
    await app.close();
  });
});

describe('connecting', () => {
  it('exchanges the code with its verifier and stores the tokens sealed and bound to the connection', async () => {
    const before = server.grants.length;
    const done = await connect(ws, 'Alice@Provider.Example');
    expect(server.grants.slice(before)).toEqual(['authorization_code']);
    expect(done).toMatchObject({
      workspaceId: ws.id,
      userId: ws.admin.userId,
      accountEmail: 'alice@provider.example',
      repaired: false,
    });
    expect(done.connectionId).toMatch(/^oac_/);

    const row = (await raw(done.connectionId)) as RawConnection;
    const token = await getAccessToken(deps(), ctxOf(ws), done.connectionId, 'calendar.events.list');
    expect(token).toMatch(/^at_/);
    expect(row.access_token_enc).not.toContain(token);
    expect(row.refresh_token_enc).not.toContain('rt_');
    expect(row.access_token_enc).toMatch(/^v1\./);
    // Bound to workspace and connection: the same blob will not open for another.
    expect(() =>
      decryptSecret(keys(), row.access_token_enc, `oauth:${other.id}:${done.connectionId}:access`),
    ).toThrow();
    expect(decryptSecret(keys(), row.access_token_enc, `oauth:${ws.id}:${done.connectionId}:access`)).toBe(token);

    expect(await listConnections(deps(), ctxOf(ws))).toContainEqual(
      expect.objectContaining({
        id: done.connectionId,
        provider: 'testprov',
        accountEmail: 'alice@provider.example',
        status: 'active',
        scopes: ['calendar.read', 'calendar.write'],
      }),
    );
    expect(await listConnections(deps(), ctxOf(other))).toEqual([]);
  });

  it('a code presented with another flow’s state (wrong PKCE verifier) is refused by the provider: 400', async () => {
    const first = startAuthorization(deps(), ctxOf(ws), 'testprov', { redirectUri: REDIRECT });
    const second = startAuthorization(deps(), ctxOf(ws), 'testprov', { redirectUri: REDIRECT });
    const { code } = await consent(first.authorizeUrl);
    await expectAppError(
      completeAuthorization(deps(), 'testprov', { code, state: second.state }),
      400,
      'authorization_failed',
    );
  });

  it('a state issued to another user, or for another provider, is refused', async () => {
    const { authorizeUrl } = startAuthorization(deps(), ctxOf(ws), 'testprov', { redirectUri: REDIRECT });
    const callback = await consent(authorizeUrl);
    await expectAppError(
      completeAuthorization(deps(), 'testprov', callback, { expectedUserId: other.admin.userId }),
      400,
      'invalid_state',
    );
    await expectAppError(completeAuthorization(deps(), 'google', callback), 400, 'invalid_state');
  });
});

describe('getAccessToken', () => {
  it('returns the stored token while valid and audits each use', async () => {
    const { connectionId } = await connect(ws, 'use@provider.example');
    const a = await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list');
    const b = await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.create');
    expect(b).toBe(a);
    const audits = await tokenAudits(ws.id, connectionId);
    expect(audits.map((r) => r.data)).toEqual([
      { provider: 'testprov', connectionId, reason: 'token.exchange', outcome: 'ok' },
      { provider: 'testprov', connectionId, reason: 'calendar.events.list', outcome: 'ok' },
      { provider: 'testprov', connectionId, reason: 'calendar.events.create', outcome: 'ok' },
    ]);
    expect(audits[1]).toMatchObject({ request_id: 'req_test', actor_user_id: ws.admin.userId });
  });

  it('refreshes an expired token, and on a reported 401 (forceRefresh)', async () => {
    const { connectionId } = await connect(ws, 'refresh@provider.example');
    const first = await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list');
    const calls = server.refreshCalls();
    await expire(connectionId);
    const second = await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list');
    expect(second).not.toBe(first);
    expect(server.refreshCalls()).toBe(calls + 1);
    expect(await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list')).toBe(second);

    const third = await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list', { forceRefresh: true });
    expect(third).not.toBe(second);
    expect(server.refreshCalls()).toBe(calls + 2);
    const audits = await tokenAudits(ws.id, connectionId);
    expect(audits.at(-1)?.data).toEqual({
      provider: 'testprov',
      connectionId,
      reason: 'calendar.events.list',
      outcome: 'ok',
      refreshed: true,
    });
  });

  it('two concurrent callers needing a refresh cause one token call, and each is audited', async () => {
    const { connectionId } = await connect(ws, 'concurrent@provider.example');
    await expire(connectionId);
    server.refreshDelayMs = 200;
    const calls = server.refreshCalls();
    const audited = (await tokenAudits(ws.id, connectionId)).length;
    const [a, b, c] = await Promise.all([
      getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list'),
      getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.calendars.list'),
      getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list', { forceRefresh: true }),
    ]);
    expect(server.refreshCalls()).toBe(calls + 1);
    expect(new Set([a, b, c]).size).toBe(1);
    expect((await tokenAudits(ws.id, connectionId)).length).toBe(audited + 3);
  });

  it('waits for a refresh another instance holds the lease for, and uses the token it stored', async () => {
    const { connectionId } = await connect(ws, 'lease@provider.example');
    await expire(connectionId);
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE oauth_connections SET refresh_lease_until = now() + interval '30 seconds',
                            refresh_holder = 'other-instance' WHERE id = ${connectionId}`),
    );
    const calls = server.refreshCalls();
    const pending = getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list');
    await new Promise((r) => setTimeout(r, 300));
    const theirs = encryptSecret(keys()[0], 'at_from_other_instance', `oauth:${ws.id}:${connectionId}:access`);
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE oauth_connections SET access_token_enc = ${theirs}, token_version = token_version + 1,
                            expires_at = now() + interval '1 hour', refresh_lease_until = NULL, refresh_holder = NULL
                      WHERE id = ${connectionId}`),
    );
    expect(await pending).toBe('at_from_other_instance');
    expect(server.refreshCalls()).toBe(calls);
  });

  it.skipIf(!TEST_SERVER_URL)('two instances needing a refresh cause one token call (row lease)', async () => {
    const second = await t.startInstance();
    const { connectionId } = await connect(ws, 'instances@provider.example');
    await expire(connectionId);
    server.refreshDelayMs = 300;
    const calls = server.refreshCalls();
    const [a, b] = await Promise.all([
      getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list'),
      getAccessToken(depsFor(second.app.atrium.db), ctxOf(ws), connectionId, 'calendar.events.list'),
    ]);
    expect(a).toBe(b);
    expect(server.refreshCalls()).toBe(calls + 1);
  });

  it('the refresh lease outlasts the token call: it is held past the token endpoint timeout', async () => {
    const { connectionId } = await connect(ws, 'slow-endpoint@provider.example');
    await expire(connectionId);
    const configured = provider.timeoutMs;
    provider.timeoutMs = 90_000;
    server.refreshDelayMs = 400;
    try {
      const calls = server.refreshCalls();
      const pending = getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list');
      while (server.refreshCalls() === calls) await new Promise((r) => setTimeout(r, 20));
      const [lease] = await withSystem(t.database.db, (tx) =>
        queryRows<{ secs: number }>(
          tx,
          sql`SELECT extract(epoch FROM refresh_lease_until - now())::float8 AS secs
                FROM oauth_connections WHERE id = ${connectionId}`,
        ),
      );
      // While the call may still be running (up to 90 s), no other instance may take the lease.
      expect(lease.secs).toBeGreaterThan(90);
      expect(await pending).toMatch(/^at_/);
    } finally {
      provider.timeoutMs = configured;
    }
  });

  it('a refresh that outlasted its lease still stores the rotated token another instance could not get', async () => {
    // A second instance: on the server a pool of its own; on PGlite another Db object over the one connection
    // (so the in-process single flight does not join the two: they meet at the row only).
    const secondDb = TEST_SERVER_URL ? (await t.startInstance()).app.atrium.db : new Proxy(t.database.db, {});
    const { connectionId } = await connect(ws, 'outlasted@provider.example');
    await expire(connectionId);
    server.refreshDelays = [800, 0];
    const calls = server.refreshCalls();
    const slow = getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list');
    while (server.refreshCalls() === calls) await new Promise((r) => setTimeout(r, 20));
    // The provider has spent the refresh token and is slow to answer: the lease runs out meanwhile.
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE oauth_connections SET refresh_lease_until = now() - interval '1 second'
                      WHERE id = ${connectionId}`),
    );
    // Another instance takes the lease and presents the same, now spent, refresh token: refused.
    await expectAppError(
      getAccessToken(depsFor(secondDb), ctxOf(ws), connectionId, 'calendar.events.list'),
      409,
      'reauth_required',
    );
    const token = await slow;
    expect(server.refreshCalls()).toBe(calls + 2);
    // The token the provider issued to the first call is the only valid one: it is kept, the connection works.
    const row = await raw(connectionId);
    expect(row?.status).toBe('active');
    const refresh = decryptSecret(keys(), row?.refresh_token_enc ?? '', `oauth:${ws.id}:${connectionId}:refresh`);
    expect(refresh).toBe(server.issuedRefreshTokens.at(-1));
    expect(await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list')).toBe(token);
  });

  it('a refresh that outlasted its lease and finds newer tokens stored keeps those, and says so in the error log', async () => {
    const { connectionId } = await connect(ws, 'overtaken@provider.example');
    await expire(connectionId);
    server.refreshDelays = [500];
    const errors: unknown[] = [];
    const log = { error: (o: unknown) => void errors.push(o), warn: () => undefined } as never;
    const calls = server.refreshCalls();
    const slow = getAccessToken(deps(), { ...ctxOf(ws), log }, connectionId, 'calendar.events.list');
    while (server.refreshCalls() === calls) await new Promise((r) => setTimeout(r, 20));
    // Meanwhile another instance (its lease taken after ours ran out) stored tokens of its own.
    const theirs = encryptSecret(keys()[0], 'at_stored_meanwhile', `oauth:${ws.id}:${connectionId}:access`);
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE oauth_connections SET access_token_enc = ${theirs}, token_version = token_version + 1,
                            expires_at = now() + interval '1 hour', refresh_lease_until = NULL, refresh_holder = NULL
                      WHERE id = ${connectionId}`),
    );
    expect(await slow).toBe('at_stored_meanwhile');
    expect(errors).toEqual([expect.objectContaining({ connectionId, provider: 'testprov' })]);
    expect(await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list')).toBe('at_stored_meanwhile');
  });

  it('invalid_grant marks the connection reauth_required: 409 from then on, without more token calls', async () => {
    const { connectionId } = await connect(ws, 'revoked@provider.example');
    server.revokeAllRefreshTokens();
    await expire(connectionId);
    await expectAppError(
      getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list'),
      409,
      'reauth_required',
    );
    expect((await raw(connectionId))?.status).toBe('reauth_required');
    const calls = server.refreshCalls();
    await expectAppError(
      getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list'),
      409,
      'reauth_required',
    );
    expect(server.refreshCalls()).toBe(calls);
    expect((await listConnections(deps(), ctxOf(ws))).find((c) => c.id === connectionId)?.status).toBe(
      'reauth_required',
    );
    const outcomes = (await tokenAudits(ws.id, connectionId)).map((r) => r.data.outcome);
    expect(outcomes.slice(-2)).toEqual(['reauth_required', 'reauth_required']);

    // Connecting the same account again repairs that connection.
    const again = await connect(ws, 'revoked@provider.example');
    expect(again).toMatchObject({ connectionId, repaired: true });
    expect((await raw(connectionId))?.status).toBe('active');
    expect(await getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list')).toMatch(/^at_/);
    const mine = (await listConnections(deps(), ctxOf(ws))).filter(
      (c) => c.accountEmail === 'revoked@provider.example',
    );
    expect(mine).toHaveLength(1);
  });

  it('a connection of another workspace is 404 and neither workspace gets an audit row', async () => {
    const { connectionId } = await connect(ws, 'private@provider.example');
    const before = (await tokenAudits(ws.id, connectionId)).length;
    await expectAppError(getAccessToken(deps(), ctxOf(other), connectionId, 'calendar.events.list'), 404, 'not_found');
    await expectAppError(disconnect(deps(), ctxOf(other), connectionId), 404, 'not_found');
    expect((await tokenAudits(ws.id, connectionId)).length).toBe(before);
    expect(await tokenAudits(other.id, connectionId)).toEqual([]);
    expect((await raw(connectionId))?.status).toBe('active');
  });
});

describe('disconnect', () => {
  it('destroys the tokens, revokes the refresh token at the provider, and audits it', async () => {
    const { connectionId } = await connect(ws, 'bye@provider.example');
    const row = (await raw(connectionId)) as RawConnection;
    const refresh = decryptSecret(keys(), row.refresh_token_enc as string, `oauth:${ws.id}:${connectionId}:refresh`);
    await disconnect(deps(), ctxOf(ws), connectionId);
    expect(await raw(connectionId)).toBeUndefined();
    expect(server.revoked).toContain(refresh);
    await expectAppError(getAccessToken(deps(), ctxOf(ws), connectionId, 'calendar.events.list'), 404, 'not_found');
    expect((await tokenAudits(ws.id, connectionId)).at(-1)?.data).toMatchObject({
      reason: 'token.revoke',
      outcome: 'ok',
    });
  });

  it('does not revoke at the provider while the same account is connected in another workspace', async () => {
    // Google's revocation ends the account's whole grant to our client: the other workspace would lose it too.
    const mine = await connect(ws, 'shared@provider.example');
    const theirs = await connect(other, 'shared@provider.example');
    const row = (await raw(mine.connectionId)) as RawConnection;
    const refresh = decryptSecret(
      keys(),
      row.refresh_token_enc as string,
      `oauth:${ws.id}:${mine.connectionId}:refresh`,
    );
    await disconnect(deps(), ctxOf(ws), mine.connectionId);
    expect(await raw(mine.connectionId)).toBeUndefined();
    expect(server.revoked).not.toContain(refresh);
    expect((await raw(theirs.connectionId))?.status).toBe('active');
    // The last one connected is revoked when it goes.
    const theirRow = (await raw(theirs.connectionId)) as RawConnection;
    const theirRefresh = decryptSecret(
      keys(),
      theirRow.refresh_token_enc as string,
      `oauth:${other.id}:${theirs.connectionId}:refresh`,
    );
    await disconnect(deps(), ctxOf(other), theirs.connectionId);
    expect(server.revoked).toContain(theirRefresh);
  });
});
