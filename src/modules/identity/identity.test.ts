import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createOrganization, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp({ signIn: { accountLimit: 3, addressLimit: 50, windowMs: 60_000 } });
  ws = await createWorkspace(t, { tier: 'standard', name: 'Main', adminEmail: 'boss@example.test' });
  other = await createWorkspace(t, { tier: 'advanced', name: 'Second' });
  await addMember(t, other, { email: 'boss@example.test', role: 'member' });
});
afterAll(async () => t?.close());

function cookieFrom(res: { headers: Record<string, unknown> }): string {
  const raw = [res.headers['set-cookie']].flat().join(';');
  const match = /atrium_session=([^;]+)/.exec(raw);
  if (!match) throw new Error(`no session cookie in ${raw}`);
  return `atrium_session=${match[1]}`;
}

const signIn = (email: string, password: string, extra: object = {}) =>
  t.request({
    method: 'POST',
    url: '/api/v1/auth/sign-in',
    payload: { email, password, ...extra },
    remoteAddress: '10.1.1.1',
  } as never);

describe('password sign-in and sessions', () => {
  it('signs in, sets an HttpOnly SameSite session cookie, and /me answers', async () => {
    const res = await signIn('boss@example.test', 'password123');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      user: { email: 'boss@example.test' },
      workspace: { id: ws.id, tier: 'standard' },
      role: 'admin',
    });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).not.toMatch(/Secure/); // http public URL in tests
    const me = await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie: cookieFrom(res) } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      user: { email: 'boss@example.test' },
      workspace: { id: ws.id, name: 'Main', tier: 'standard' },
      role: 'admin',
      isProvider: false,
    });
    expect(
      me
        .json()
        .workspaces.map((w: { id: string }) => w.id)
        .sort(),
    ).toEqual([ws.id, other.id].sort());
  });

  it('gives the same 401 for an unknown e-mail and a wrong password', async () => {
    const unknown = await signIn('nobody@example.test', 'password123');
    const wrong = await signIn('boss@example.test', 'wrong-password');
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.json().code).toBe('unauthenticated');
    expect(unknown.json().detail).toBe(wrong.json().detail);
  });

  it('rate limits sign-in per account with 429 and Retry-After', async () => {
    await addMember(t, ws, { email: 'target@example.test' });
    for (let i = 0; i < 3; i++) expect((await signIn('target@example.test', 'bad-password')).statusCode).toBe(401);
    const limited = await signIn('target@example.test', 'password123');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('parallel guesses cannot slip past the limit', async () => {
    await addMember(t, ws, { email: 'parallel@example.test' });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => signIn('parallel@example.test', 'bad-password')),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 401)).toHaveLength(3);
    expect(codes.filter((c) => c === 429)).toHaveLength(7);
  });

  it('successful sign-ins do not use up the address allowance', async () => {
    const local = await createTestApp({ signIn: { accountLimit: 100, addressLimit: 2, windowMs: 60_000 } });
    try {
      const office = await createWorkspace(local, { adminEmail: 'office@example.test' });
      expect(office.id).toBeTruthy();
      for (let i = 0; i < 4; i++) {
        const ok = await local.request({
          method: 'POST',
          url: '/api/v1/auth/sign-in',
          payload: { email: 'office@example.test', password: 'password123' },
          remoteAddress: '10.7.7.7',
        } as never);
        expect(ok.statusCode).toBe(200);
      }
    } finally {
      await local.close();
    }
  });

  it('rate limits sign-in per address', async () => {
    const local = await createTestApp({ signIn: { accountLimit: 100, addressLimit: 2, windowMs: 60_000 } });
    try {
      const attempt = (email: string) =>
        local.request({
          method: 'POST',
          url: '/api/v1/auth/sign-in',
          payload: { email, password: 'nope-nope' },
          remoteAddress: '10.9.9.9',
        } as never);
      expect((await attempt('a@example.test')).statusCode).toBe(401);
      expect((await attempt('b@example.test')).statusCode).toBe(401);
      expect((await attempt('c@example.test')).statusCode).toBe(429);
    } finally {
      await local.close();
    }
  });

  it('requires a CSRF signal for cookie-authenticated unsafe requests', async () => {
    const cookie = cookieFrom(await signIn('boss@example.test', 'password123'));
    const payload = { givenName: 'Csrf', familyName: 'Check' };
    const bare = await t.request({ method: 'POST', url: '/api/v1/patients', payload, headers: { cookie } });
    expect(bare.statusCode).toBe(403);
    const crossSite = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      payload,
      headers: { cookie, origin: 'https://evil.example', 'x-requested-with': 'fetch' },
    });
    expect(crossSite.statusCode).toBe(403);
    const ok = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      payload,
      headers: { cookie, 'x-requested-with': 'fetch' },
    });
    expect(ok.statusCode, ok.body).toBe(201);
    const list = await t.request({ method: 'GET', url: '/api/v1/patients', token: ws.admin.token });
    expect(list.json().items.filter((p: { givenName: string }) => p.givenName === 'Csrf')).toHaveLength(1);
  });

  it('switches workspace and signs out (the session dies)', async () => {
    const cookie = cookieFrom(await signIn('boss@example.test', 'password123'));
    const headers = { cookie, 'x-requested-with': 'fetch' };
    const switched = await t.request({
      method: 'POST',
      url: '/api/v1/auth/switch-workspace',
      payload: { workspaceId: other.id },
      headers,
    });
    expect(switched.statusCode, switched.body).toBe(200);
    expect(switched.json()).toMatchObject({ workspace: { id: other.id }, role: 'member' });
    const me = await t.request({ method: 'GET', url: '/api/v1/me', headers });
    expect(me.json()).toMatchObject({ workspace: { id: other.id, tier: 'advanced' }, role: 'member' });
    const foreign = await createWorkspace(t);
    const refused = await t.request({
      method: 'POST',
      url: '/api/v1/auth/switch-workspace',
      payload: { workspaceId: foreign.id },
      headers,
    });
    expect(refused.statusCode).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/v1/auth/sign-out', headers })).statusCode).toBe(204);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers })).statusCode).toBe(401);
  });

  it('picks the requested workspace at sign-in', async () => {
    const res = await signIn('boss@example.test', 'password123', { workspaceId: other.id });
    expect(res.json().workspace.id).toBe(other.id);
  });
});

describe('API tokens', () => {
  it('creates (shown once), lists without secrets, authenticates, and revokes', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/auth/tokens',
      token: ws.admin.token,
      payload: { name: 'ci' },
    });
    expect(created.statusCode).toBe(201);
    const { id, token } = created.json();
    expect(token).toMatch(/^atr_/);
    const list = await t.request({ method: 'GET', url: '/api/v1/auth/tokens', token });
    expect(list.json().items.find((x: { id: string }) => x.id === id)).toMatchObject({ name: 'ci' });
    expect(list.body).not.toContain(token);
    expect(
      (await t.request({ method: 'DELETE', url: `/api/v1/auth/tokens/${id}`, token: ws.admin.token })).statusCode,
    ).toBe(204);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', token })).statusCode).toBe(401);
  });

  it('stores only a hash of the token', async () => {
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/auth/tokens',
      token: ws.admin.token,
      payload: { name: 'hash' },
    });
    const { token } = created.json();
    const { sql } = await import('drizzle-orm');
    const { queryRows, withSystem } = await import('../../platform/db/tenant.js');
    const rows = await withSystem(t.database.db, (tx) =>
      queryRows<{ token_hash: string }>(tx, sql`SELECT token_hash FROM api_tokens`),
    );
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  it('rejects a missing or invalid credential with 401 problem+json', async () => {
    const none = await t.request({ method: 'GET', url: '/api/v1/me' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', token: 'atr_nope' })).statusCode).toBe(401);
  });
});

describe('operator API', () => {
  it('accepts only the operator token, and the operator token works nowhere else', async () => {
    const payload = { name: 'X', tier: 'free', admin: { email: 'x@example.test', name: 'X' } };
    expect(
      (await t.request({ method: 'POST', url: '/api/v1/operator/workspaces', payload, token: ws.admin.token }))
        .statusCode,
    ).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', token: t.config.operatorToken })).statusCode).toBe(401);
  });

  it('creates organizations and workspaces, patches tiers, and adds members to existing users', async () => {
    const org = await createOrganization(t, 'HQ');
    const created = await createWorkspace(t, { tier: 'free', organizationId: org.id });
    expect(created.organizationId).toBe(org.id);
    const patched = await t.request({
      method: 'PATCH',
      url: `/api/v1/operator/workspaces/${created.id}`,
      token: t.config.operatorToken,
      payload: { tier: 'enterprise', name: 'Renamed' },
    });
    expect(patched.json()).toMatchObject({ id: created.id, tier: 'enterprise', name: 'Renamed' });
    const missing = await t.request({
      method: 'PATCH',
      url: '/api/v1/operator/workspaces/ws_missing',
      token: t.config.operatorToken,
      payload: { tier: 'free' },
    });
    expect(missing.statusCode).toBe(404);
    const bad = await t.request({
      method: 'POST',
      url: '/api/v1/operator/workspaces',
      token: t.config.operatorToken,
      payload: { name: 'Bad', tier: 'platinum', admin: { email: 'not-an-email', name: '' } },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.length).toBeGreaterThanOrEqual(2);
    const again = await addMember(t, created, { email: 'boss@example.test', role: 'admin' });
    expect(again.userId).toBe(ws.admin.userId);
  });

  it('lists workspace members', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/members', token: ws.admin.token });
    expect(res.json().items.some((m: { email: string }) => m.email === 'boss@example.test')).toBe(true);
  });
});

describe('credential cache', () => {
  it('a tier change by the operator applies to the next request', async () => {
    const local = await createWorkspace(t, { tier: 'free' });
    const me = () => t.request({ method: 'GET', url: '/api/v1/me', token: local.admin.token });
    expect((await me()).json().workspace.tier).toBe('free');
    await t.request({
      method: 'PATCH',
      url: `/api/v1/operator/workspaces/${local.id}`,
      token: t.config.operatorToken,
      payload: { tier: 'advanced' },
    });
    expect((await me()).json().workspace.tier).toBe('advanced');
  });

  it.skipIf(!process.env.ATRIUM_TEST_DATABASE_URL)(
    'revoking a token on one instance revokes it on the others',
    async () => {
      const second = await t.startInstance();
      const created = await t.request({
        method: 'POST',
        url: '/api/v1/auth/tokens',
        token: ws.admin.token,
        payload: { name: 'multi' },
      });
      const { id, token } = created.json();
      const onSecond = () =>
        fetch(`${second.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
      expect(await onSecond()).toBe(200); // now cached on the second instance
      expect(
        (await t.request({ method: 'DELETE', url: `/api/v1/auth/tokens/${id}`, token: ws.admin.token })).statusCode,
      ).toBe(204);
      let status = 200;
      for (let i = 0; i < 50 && status === 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = await onSecond();
      }
      expect(status).toBe(401);
    },
  );
});
