import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  addMember,
  createOrganization,
  createWorkspace,
  setTier,
  TEST_PASSWORD,
  type TestWorkspace,
} from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp({
    signIn: { accountLimit: 3, accountCeiling: 1000, addressLimit: 50, windowMs: 60_000, backoffMs: 5_000 },
  });
  ws = await createWorkspace(t, {
    tier: 'standard',
    name: 'Main',
    adminEmail: 'boss@example.test',
    password: TEST_PASSWORD,
  });
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

const signIn = (email: string, password: string, extra: object = {}, remoteAddress = '10.1.1.1') =>
  t.request({
    method: 'POST',
    url: '/api/v1/auth/sign-in',
    payload: { email, password, ...extra },
    remoteAddress,
  } as never);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('password sign-in and sessions', () => {
  it('signs in, sets an HttpOnly SameSite session cookie, and /me answers', async () => {
    const res = await signIn('boss@example.test', TEST_PASSWORD);
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
    const unknown = await signIn('nobody@example.test', TEST_PASSWORD);
    const wrong = await signIn('boss@example.test', 'wrong-password');
    expect(unknown.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.json().code).toBe('unauthenticated');
    expect(unknown.json().detail).toBe(wrong.json().detail);
  });

  it('throttles failures per account and address; the owner elsewhere is not locked out', async () => {
    await addMember(t, ws, { email: 'target@example.test', password: TEST_PASSWORD });
    for (let i = 0; i < 3; i++) {
      expect((await signIn('target@example.test', 'bad-password', {}, '10.66.0.1')).statusCode).toBe(401);
    }
    // The guessing address now waits, even with the right password.
    const limited = await signIn('target@example.test', TEST_PASSWORD, {}, '10.66.0.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(5);
    // The owner, from an address without failures, signs in.
    const owner = await signIn('target@example.test', TEST_PASSWORD, {}, '10.66.0.2');
    expect(owner.statusCode, owner.body).toBe(200);
  });

  it('parallel guesses cannot slip past the limit', async () => {
    await addMember(t, ws, { email: 'parallel@example.test', password: TEST_PASSWORD });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => signIn('parallel@example.test', 'bad-password')),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 401)).toHaveLength(3);
    expect(codes.filter((c) => c === 429)).toHaveLength(7);
  });

  describe('with small limits', () => {
    let local: TestApp;
    beforeAll(async () => {
      local = await createTestApp({
        signIn: { accountLimit: 2, accountCeiling: 5, addressLimit: 4, windowMs: 60_000, backoffMs: 600 },
      });
      await createWorkspace(local, { adminEmail: 'office@example.test', password: TEST_PASSWORD });
    });
    afterAll(async () => local?.close());
    const attempt = (email: string, password: string, remoteAddress: string) =>
      local.request({
        method: 'POST',
        url: '/api/v1/auth/sign-in',
        payload: { email, password },
        remoteAddress,
      } as never);

    it('successful sign-ins do not use up the address allowance', async () => {
      for (let i = 0; i < 5; i++) {
        expect((await attempt('office@example.test', TEST_PASSWORD, '10.7.7.7')).statusCode).toBe(200);
      }
    });

    it('rate limits sign-in per address', async () => {
      expect((await attempt('a@example.test', 'nope-nope', '10.9.9.9')).statusCode).toBe(401);
      expect((await attempt('b@example.test', 'nope-nope', '10.9.9.9')).statusCode).toBe(401);
      expect((await attempt('c@example.test', 'nope-nope', '10.9.9.9')).statusCode).toBe(401);
      expect((await attempt('d@example.test', 'nope-nope', '10.9.9.9')).statusCode).toBe(401);
      const limited = await attempt('e@example.test', 'nope-nope', '10.9.9.9');
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('counts an IPv6 client by its /64: a new address of the same network is no fresh allowance', async () => {
      for (let i = 1; i <= 4; i++)
        expect((await attempt(`v6-${i}@example.test`, 'nope-nope', `2001:db8:9:9::${i}`)).statusCode).toBe(401);
      expect((await attempt('v6-5@example.test', 'nope-nope', '2001:db8:9:9:ffff::5')).statusCode).toBe(429);
      // Another /64 is another client.
      expect((await attempt('v6-6@example.test', 'nope-nope', '2001:db8:9:a::1')).statusCode).toBe(401);
    });

    it('limits password-reset requests per client network too (30 an hour; an IPv6 client by its /64)', async () => {
      const reset = (n: number, remoteAddress: string) =>
        local.request({
          method: 'POST',
          url: '/api/v1/auth/password-reset',
          payload: { email: `nobody-${n}@example.test` },
          remoteAddress,
        } as never);
      for (let i = 1; i <= 30; i++) expect((await reset(i, `2001:db8:7:7::${i.toString(16)}`)).statusCode).toBe(202);
      const limited = await reset(31, '2001:db8:7:7:abcd::1');
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect((await reset(32, '2001:db8:7:8::1')).statusCode).toBe(202);
    });

    it('backs off exponentially per account and address', async () => {
      const guess = () => attempt('office@example.test', 'wrong-guess', '10.5.5.5');
      expect((await guess()).statusCode).toBe(401);
      expect((await guess()).statusCode).toBe(401);
      expect((await guess()).statusCode).toBe(429); // waits 0.6 s
      await sleep(660);
      expect((await guess()).statusCode).toBe(401); // counted; now waits 1.2 s
      await sleep(660);
      expect((await guess()).statusCode).toBe(429);
      await sleep(600);
      expect((await attempt('office@example.test', TEST_PASSWORD, '10.5.5.5')).statusCode).toBe(200);
      // Success starts the address over.
      expect((await guess()).statusCode).toBe(401);
    });

    it('caps failures per account across all addresses', async () => {
      for (let i = 1; i <= 5; i++) {
        expect((await attempt('ceiling@example.test', 'wrong-guess', `10.44.0.${i}`)).statusCode).toBe(401);
      }
      const limited = await attempt('ceiling@example.test', 'wrong-guess', '10.44.0.99');
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('a guess from many addresses does not lock the owner out: a familiar address still signs in, a reset link clears it', async () => {
      const { waitForMail } = await import('../../../test/helpers/factories.js');
      await local.startBackground(); // the reset link is mailed by a job
      await createWorkspace(local, { adminEmail: 'owner@example.test', password: TEST_PASSWORD });
      expect((await attempt('owner@example.test', TEST_PASSWORD, '10.45.0.1')).statusCode).toBe(200);
      for (let i = 1; i <= 5; i++) {
        expect((await attempt('owner@example.test', 'wrong-guess', `10.45.1.${i}`)).statusCode).toBe(401);
      }
      const stranger = await attempt('owner@example.test', TEST_PASSWORD, '10.45.2.1');
      expect(stranger.statusCode).toBe(429);
      expect(stranger.json().detail).toContain('Forgot password');
      // The owner's usual address is not held back by the others' failures.
      expect((await attempt('owner@example.test', TEST_PASSWORD, '10.45.0.1')).statusCode).toBe(200);
      // Elsewhere, a reset link proves the mailbox and clears the account's count.
      const reset = await local.request({
        method: 'POST',
        url: '/api/v1/auth/password-reset',
        payload: { email: 'owner@example.test' },
      });
      expect(reset.statusCode).toBe(202);
      const [mail] = await waitForMail(local, 'owner@example.test');
      const token = decodeURIComponent(/reset-password\?token=([^\s]+)/.exec(mail.text)?.[1] ?? '');
      const confirmed = await local.request({
        method: 'POST',
        url: '/api/v1/auth/password-reset/confirm',
        payload: { token, password: 'lantern-harbor-meadow-58' },
      });
      expect(confirmed.statusCode, confirmed.body).toBe(204);
      expect((await attempt('owner@example.test', 'lantern-harbor-meadow-58', '10.45.2.1')).statusCode).toBe(200);
    });
  });

  it('requires a CSRF signal for cookie-authenticated unsafe requests', async () => {
    const cookie = cookieFrom(await signIn('boss@example.test', TEST_PASSWORD));
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
    const cookie = cookieFrom(await signIn('boss@example.test', TEST_PASSWORD));
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
    const res = await signIn('boss@example.test', TEST_PASSWORD, { workspaceId: other.id });
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

  it('refuses short or guessable passwords with 422 weak_password and creates nothing', async () => {
    for (const password of ['short-pw', 'password1234', 'qwertyuiop123']) {
      const email = `weak-${password.length}-${Math.random().toString(36).slice(2)}@example.test`;
      const created = await t.request({
        method: 'POST',
        url: '/api/v1/operator/workspaces',
        token: t.config.operatorToken,
        payload: { name: 'Weak', tier: 'free', admin: { email, name: 'Weak Admin', password } },
      });
      expect(created.statusCode, password).toBe(422);
      expect(created.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(created.json()).toMatchObject({ code: 'weak_password', status: 422 });
      expect(created.json().detail.length).toBeGreaterThan(10);
      const added = await t.request({
        method: 'POST',
        url: `/api/v1/operator/workspaces/${ws.id}/members`,
        token: t.config.operatorToken,
        payload: { email, name: 'Weak Member', role: 'member', password },
      });
      expect(added.statusCode, password).toBe(422);
      expect(added.json().code).toBe('weak_password');
      expect((await signIn(email, password, {}, '10.88.0.1')).statusCode).toBe(401);
    }
    const members = await t.request({ method: 'GET', url: '/api/v1/members', token: ws.admin.token });
    expect(members.body).not.toContain('Weak Member');
  });

  it('lists workspace members', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/members', token: ws.admin.token });
    expect(res.json().items.some((m: { email: string }) => m.email === 'boss@example.test')).toBe(true);
  });

  it('adding one new e-mail many times at once creates one user, as adding it one after another does', async () => {
    const add = (workspaceId: string, email: string) =>
      t.request({
        method: 'POST',
        url: `/api/v1/operator/workspaces/${workspaceId}/members`,
        token: t.config.operatorToken,
        payload: { email, name: 'Racing Member', role: 'member', password: TEST_PASSWORD },
      });
    const target = await createWorkspace(t, { tier: 'free' });
    const second = await createWorkspace(t, { tier: 'free' });
    const email = `racer-${Math.random().toString(36).slice(2)}@example.test`;
    // The same workspace 8 times: a second call one after another answers 201 with the same user, so all do.
    const same = await Promise.all(Array.from({ length: 8 }, () => add(target.id, email)));
    expect(same.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(new Set(same.map((r) => r.json().userId)).size).toBe(1);
    const userId = same[0].json().userId;
    // Two workspaces at once, with another new address.
    const otherEmail = `racer2-${Math.random().toString(36).slice(2)}@example.test`;
    const both = await Promise.all(
      [target.id, second.id, target.id, second.id, target.id, second.id].map((id) => add(id, otherEmail)),
    );
    expect(both.map((r) => r.statusCode)).toEqual(Array(6).fill(201));
    expect(new Set(both.map((r) => r.json().userId)).size).toBe(1);
    const list = (await t.request({ method: 'GET', url: '/api/v1/members', token: target.admin.token })).json();
    expect(list.items.filter((m: { email: string }) => m.email === email)).toHaveLength(1);
    expect(list.items.filter((m: { email: string }) => m.email === otherEmail)).toHaveLength(1);
    const me = await t.request({ method: 'GET', url: '/api/v1/me', token: both[0].json().token });
    expect(
      me
        .json()
        .workspaces.map((w: { id: string }) => w.id)
        .sort(),
    ).toEqual([target.id, second.id].sort());
    // Every answer's token works, and the password set at creation signs in.
    for (const r of same) {
      const asThem = await t.request({ method: 'GET', url: '/api/v1/me', token: r.json().token });
      expect(asThem.json().user.id).toBe(userId);
    }
    expect((await signIn(email, TEST_PASSWORD, {}, '10.88.0.2')).statusCode).toBe(200);
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
    'a tier change through one instance applies on the others at once',
    async () => {
      const second = await t.startInstance();
      const local = await createWorkspace(t, { tier: 'free' });
      const colleague = await addMember(t, local);
      // Sending direct messages needs Standard: the answer shows the tier the instance holds for the caller.
      const sendOnSecond = () =>
        fetch(`${second.baseUrl}/api/v1/direct-messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${local.admin.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ recipients: [colleague.userId], body: 'hello' }),
        }).then((r) => r.status);
      // The operator's PATCH answers once its NOTIFY came back to its own instance; the others get
      // it at the same moment, give or take their scheduling: allow that, never a cache lifetime.
      const eventually = async (status: number) => {
        const deadline = Date.now() + 1_000;
        let last = await sendOnSecond();
        while (last !== status && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 10));
          last = await sendOnSecond();
        }
        return last;
      };
      for (let round = 0; round < 10; round++) {
        expect(await eventually(403)).toBe(403); // free, and now cached on the second instance
        await setTier(t, local.id, 'standard');
        expect(await eventually(201)).toBe(201);
        await setTier(t, local.id, 'free');
      }
    },
  );

  it.skipIf(!process.env.ATRIUM_TEST_DATABASE_URL)(
    'an instance whose listening connection was lost drops its cached credentials when it is back',
    async () => {
      const second = await t.startInstance();
      const local = await createWorkspace(t, { tier: 'free' });
      const colleague = await addMember(t, local);
      const sendOnSecond = () =>
        fetch(`${second.baseUrl}/api/v1/direct-messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${local.admin.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ recipients: [colleague.userId], body: 'hello' }),
        }).then((r) => r.status);
      expect(await sendOnSecond()).toBe(403); // free, cached on the second instance
      const admin = new pg.Client({ connectionString: t.testDb.url });
      await admin.connect();
      try {
        // A network blip or failover: every instance's LISTEN connection is cut …
        const cut = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
        );
        expect(cut.rowCount).toBeGreaterThan(0);
        // … and the tier changes meanwhile (its NOTIFY reaches no one).
        await admin.query(`UPDATE workspaces SET tier = 'standard' WHERE id = $1`, [local.id]);
      } finally {
        await admin.end();
      }
      let status = await sendOnSecond();
      for (let i = 0; i < 60 && status !== 201; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = await sendOnSecond();
      }
      expect(status).toBe(201); // well before the 30 s a cached credential would otherwise live
    },
  );

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
