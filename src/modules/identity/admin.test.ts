import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, TEST_PASSWORD, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard', name: 'Admin tests' });
});
afterAll(async () => t?.close());

const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token, payload } as never);

function cookieFrom(res: { headers: Record<string, unknown> }): string {
  const raw = [res.headers['set-cookie']].flat().join(';');
  const match = /atrium_session=([^;]+)/.exec(raw);
  if (!match) throw new Error(`no session cookie in ${raw}`);
  return `atrium_session=${match[1]}`;
}

describe('GET /members', () => {
  it('lists members with status and lastSignInAt; e-mails only for admins', async () => {
    const member = await addMember(t, ws, { name: 'Mia Member', isProvider: true });
    const asAdmin = await as(ws.admin.token, 'GET', '/members');
    expect(asAdmin.statusCode, asAdmin.body).toBe(200);
    const mine = asAdmin.json().items.find((m: { userId: string }) => m.userId === member.userId);
    expect(mine).toEqual({
      userId: member.userId,
      name: 'Mia Member',
      email: member.email,
      role: 'member',
      isProvider: true,
      status: 'active',
      lastSignInAt: null,
    });
    const asMember = await as(member.token, 'GET', '/members');
    expect(asMember.statusCode).toBe(200);
    const items = asMember.json().items as { email: string | null }[];
    expect(items.length).toBeGreaterThanOrEqual(2);
    expect(items.every((m) => m.email === null)).toBe(true);
    expect(asMember.body).not.toContain(ws.admin.email);
  });

  it('shows when a member last signed in to the workspace', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    const signIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: { email: member.email, password: TEST_PASSWORD },
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    const list = await as(ws.admin.token, 'GET', '/members');
    const row = list.json().items.find((m: { userId: string }) => m.userId === member.userId);
    expect(Date.now() - Date.parse(row.lastSignInAt)).toBeLessThan(60_000);
  });
});

describe('PATCH /members/:userId', () => {
  it('changes role and provider flag, takes effect at once, and audits', async () => {
    const member = await addMember(t, ws);
    // Warm the credential cache with the old role.
    expect((await as(member.token, 'GET', '/admin/tokens')).statusCode).toBe(403);
    const res = await as(ws.admin.token, 'PATCH', `/members/${member.userId}`, { role: 'admin', isProvider: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ userId: member.userId, role: 'admin', isProvider: true, status: 'active' });
    expect((await as(member.token, 'GET', '/admin/tokens')).statusCode).toBe(200);
    const audit = await as(ws.admin.token, 'GET', '/audit?kind=admin_action');
    expect(audit.json().items).toContainEqual(
      expect.objectContaining({ action: 'members.update', target: member.userId, actorUserId: ws.admin.userId }),
    );
  });

  it('refuses members (403), unknown users (404) and empty bodies (400)', async () => {
    const member = await addMember(t, ws);
    expect((await as(member.token, 'PATCH', `/members/${member.userId}`, { role: 'admin' })).statusCode).toBe(403);
    expect((await as(ws.admin.token, 'PATCH', '/members/usr_nope', { role: 'admin' })).statusCode).toBe(404);
    expect((await as(ws.admin.token, 'PATCH', `/members/${member.userId}`, {})).statusCode).toBe(400);
  });

  it('refuses to demote or remove the last admin (409 last_admin)', async () => {
    const solo = await createWorkspace(t);
    const demote = await as(solo.admin.token, 'PATCH', `/members/${solo.admin.userId}`, { role: 'member' });
    expect(demote.statusCode).toBe(409);
    expect(demote.json().code).toBe('last_admin');
    const remove = await as(solo.admin.token, 'DELETE', `/members/${solo.admin.userId}`);
    expect(remove.statusCode).toBe(409);
    expect(remove.json().code).toBe('last_admin');
    // The flag alone may change.
    const flag = await as(solo.admin.token, 'PATCH', `/members/${solo.admin.userId}`, { isProvider: true });
    expect(flag.statusCode).toBe(200);
  });

  it('keeps one admin when two admins demote each other at the same time', async () => {
    const pair = await createWorkspace(t);
    const second = await addMember(t, pair, { role: 'admin' });
    const results = await Promise.all([
      as(pair.admin.token, 'PATCH', `/members/${second.userId}`, { role: 'member' }),
      as(second.token, 'PATCH', `/members/${pair.admin.userId}`, { role: 'member' }),
    ]);
    const codes = results.map((r) => r.statusCode).sort();
    // Either one wins and the other is refused (409 last_admin, or 403 when already demoted).
    expect(codes[0]).toBe(200);
    expect([403, 409]).toContain(codes[1]);
    const list = await as(results[0].statusCode === 200 ? pair.admin.token : second.token, 'GET', '/members');
    const admins = list.json().items.filter((m: { role: string }) => m.role === 'admin');
    expect(admins).toHaveLength(1);
  });
});

describe('DELETE /members/:userId', () => {
  it("ends the membership and the user's tokens and sessions in this workspace at once", async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    const other = await createWorkspace(t);
    const elsewhere = await addMember(t, other, { email: member.email });
    const signIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: { email: member.email, password: TEST_PASSWORD, workspaceId: ws.id },
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    const cookie = cookieFrom(signIn);
    // Both credentials are cached now.
    expect((await as(member.token, 'GET', '/me')).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(200);

    const res = await as(ws.admin.token, 'DELETE', `/members/${member.userId}`);
    expect(res.statusCode, res.body).toBe(204);
    expect((await as(member.token, 'GET', '/me')).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(401);
    const list = await as(ws.admin.token, 'GET', '/members');
    expect(list.body).not.toContain(member.userId);
    // The other workspace's membership and token are untouched.
    expect((await as(elsewhere.token, 'GET', '/me')).statusCode).toBe(200);
    const audit = await as(ws.admin.token, 'GET', '/audit?kind=admin_action');
    expect(audit.json().items).toContainEqual(
      expect.objectContaining({ action: 'members.remove', target: member.userId }),
    );
    expect((await as(ws.admin.token, 'DELETE', `/members/${member.userId}`)).statusCode).toBe(404);
  });

  it('an admin leaving from a browser session moves on to another workspace of theirs, or is signed out', async () => {
    const signIn = async (email: string, workspaceId: string) => {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/auth/sign-in',
        payload: { email, password: TEST_PASSWORD, workspaceId },
      });
      expect(res.statusCode, res.body).toBe(200);
      return cookieFrom(res);
    };
    const withCookie = (cookie: string, method: 'GET' | 'DELETE', url: string) =>
      t.request({ method, url: `/api/v1${url}`, headers: { cookie, 'x-requested-with': 'fetch' } });

    // Two admins here; the leaving one is also a member of two other workspaces, the later used one `recent`.
    const leaver = await addMember(t, ws, { role: 'admin', password: TEST_PASSWORD, name: 'Avery Leaver' });
    const older = await createWorkspace(t);
    const recent = await createWorkspace(t);
    await addMember(t, older, { email: leaver.email });
    await addMember(t, recent, { email: leaver.email });
    await signIn(leaver.email, older.id);
    await signIn(leaver.email, recent.id);
    const cookie = await signIn(leaver.email, ws.id);
    const otherSessionHere = await signIn(leaver.email, ws.id);

    const res = await withCookie(cookie, 'DELETE', `/members/${leaver.userId}`);
    expect(res.statusCode, res.body).toBe(204);
    const me = await withCookie(cookie, 'GET', '/me');
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().workspace.id).toBe(recent.id);
    expect(me.json().workspaces.map((w: { id: string }) => w.id)).not.toContain(ws.id);
    // Their other session here and their token here end, as for any removal.
    expect((await withCookie(otherSessionHere, 'GET', '/me')).statusCode).toBe(401);
    expect((await as(leaver.token, 'GET', '/me')).statusCode).toBe(401);
    expect((await as(ws.admin.token, 'GET', '/members')).body).not.toContain(leaver.userId);

    // Someone with no other workspace left is signed out.
    const only = await addMember(t, ws, { role: 'admin', password: TEST_PASSWORD });
    const onlyCookie = await signIn(only.email, ws.id);
    expect((await withCookie(onlyCookie, 'DELETE', `/members/${only.userId}`)).statusCode).toBe(204);
    expect((await withCookie(onlyCookie, 'GET', '/me')).statusCode).toBe(401);
  });

  it("ends the removed member's open event streams within moments", async () => {
    const member = await addMember(t, ws, { name: 'Streamer' });
    const dm = await as(ws.admin.token, 'POST', '/direct-messages', { recipients: [member.userId], body: 'hello' });
    expect(dm.statusCode, dm.body).toBe(201);
    const controller = new AbortController();
    const res = await fetch(`${t.baseUrl}/api/v1/direct-messages/${dm.json().threadId}/events`, {
      headers: { authorization: `Bearer ${member.token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = '';
    const ended = (async () => {
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (chunk.done) return Date.now();
        received += chunk.value;
      }
    })();
    const deadline = Date.now() + 5_000;
    while (!received.includes(': connected') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(received).toContain(': connected');
    const removedAt = Date.now();
    expect((await as(ws.admin.token, 'DELETE', `/members/${member.userId}`)).statusCode).toBe(204);
    const endedAt = await Promise.race([ended, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5_000))]);
    controller.abort();
    expect(endedAt, 'the stream is still open 5 s after the removal').not.toBe('timeout');
    expect((endedAt as number) - removedAt).toBeLessThan(5_000);
  });

  it.skipIf(!process.env.ATRIUM_TEST_DATABASE_URL)(
    'a removal answered on one instance applies on another at once',
    async () => {
      const second = await t.startInstance();
      const member = await addMember(t, ws);
      const me = () => fetch(`${second.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${member.token}` } });
      expect((await me()).status).toBe(200); // cached on the second instance
      expect((await as(ws.admin.token, 'DELETE', `/members/${member.userId}`)).statusCode).toBe(204);
      // The answering instance applies it before it answers; another instance as soon as PostgreSQL's
      // NOTIFY reaches it (milliseconds; on a saturated machine it can take longer, so poll briefly).
      await vi.waitFor(async () => expect((await me()).status).toBe(401), { timeout: 3000, interval: 25 });
    },
  );

  it('is for admins only', async () => {
    const member = await addMember(t, ws);
    expect((await as(member.token, 'DELETE', `/members/${ws.admin.userId}`)).statusCode).toBe(403);
  });
});

describe('admin API tokens', () => {
  it('lists every token of the workspace with its owner, never the secret', async () => {
    const member = await addMember(t, ws, { name: 'Token Owner' });
    const created = await as(member.token, 'POST', '/auth/tokens', { name: 'ci' });
    expect(created.statusCode).toBe(201);
    const res = await as(ws.admin.token, 'GET', '/admin/tokens');
    expect(res.statusCode, res.body).toBe(200);
    const row = res.json().items.find((r: { id: string }) => r.id === created.json().id);
    expect(row).toMatchObject({ name: 'ci', userId: member.userId, userName: 'Token Owner' });
    expect(res.body).not.toContain(created.json().token);
    expect(res.body).not.toContain(member.token);
    expect(res.body).not.toMatch(/hash/i);
    expect((await as(member.token, 'GET', '/admin/tokens')).statusCode).toBe(403);
  });

  it('revokes any token of the workspace at once', async () => {
    const member = await addMember(t, ws);
    const created = await as(member.token, 'POST', '/auth/tokens', { name: 'laptop' });
    const secret = created.json().token as string;
    expect((await as(secret, 'GET', '/me')).statusCode).toBe(200);
    expect((await as(member.token, 'DELETE', `/admin/tokens/${created.json().id}`)).statusCode).toBe(403);
    const res = await as(ws.admin.token, 'DELETE', `/admin/tokens/${created.json().id}`);
    expect(res.statusCode, res.body).toBe(204);
    expect((await as(secret, 'GET', '/me')).statusCode).toBe(401);
    expect((await as(member.token, 'GET', '/me')).statusCode).toBe(200);
    expect((await as(ws.admin.token, 'DELETE', `/admin/tokens/${created.json().id}`)).statusCode).toBe(404);
  });
});
