import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  addMember,
  createWorkspace,
  TEST_PASSWORD,
  type TestWorkspace,
  waitForMail,
} from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';

let t: TestApp;
let ws: TestWorkspace;
const NEW_PASSWORD = 'lantern-harbor-quill-57';

beforeAll(async () => {
  t = await createTestApp();
  await t.startBackground();
  ws = await createWorkspace(t, { tier: 'standard', name: 'Invite Clinic' });
});
afterAll(async () => t?.close());

const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token, payload } as never);
const post = (url: string, payload: object) => t.request({ method: 'POST', url: `/api/v1${url}`, payload });

function cookieFrom(res: { headers: Record<string, unknown> }): string {
  const raw = [res.headers['set-cookie']].flat().join(';');
  const match = /atrium_session=([^;]+)/.exec(raw);
  if (!match) throw new Error(`no session cookie in ${raw}`);
  return `atrium_session=${match[1]}`;
}

const runSql = (query: ReturnType<typeof sql>) => withSystem(t.database.db, (tx) => tx.execute(query));

/**
 * The token of the `count`-th mail to `to` holding a `path` link. Other mails may come first (an account an operator
 * call added is told so: docs/identity.md), so mails without that link are skipped.
 */
async function linkToken(to: string, path: string, count = 1): Promise<string> {
  const link = new RegExp(`${t.baseUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${path}\\?token=([^\\s]+)`);
  for (let i = 0; i < 50; i++) {
    const tokens = (await waitForMail(t, to, count, 200)).map((m) => link.exec(m.text)?.[1]).filter((x) => !!x);
    if (tokens.length >= count) return decodeURIComponent(tokens[count - 1] as string);
  }
  throw new Error(`no ${path} link mailed to ${to}`);
}

describe('invitations', () => {
  it('invites by e-mail, lists the invitee as invited, and accepting signs in', async () => {
    const email = 'new.hire@example.test';
    const res = await as(ws.admin.token, 'POST', '/members/invitations', {
      email,
      name: 'New Hire',
      role: 'member',
      isProvider: true,
    });
    expect(res.statusCode, res.body).toBe(201);
    const { userId } = res.json();
    expect(res.json()).toEqual({ userId, status: 'invited', replacedEarlier: false });

    const listed = await as(ws.admin.token, 'GET', '/members');
    expect(listed.json().items).toContainEqual({
      userId,
      name: 'New Hire',
      email,
      role: 'member',
      isProvider: true,
      status: 'invited',
      lastSignInAt: null,
    });

    const [mail] = await waitForMail(t, email);
    // Who invited them, to what and as what.
    expect(mail.subject).toBe(`Test Admin invited you to ${ws.name} on Atrium`);
    expect(mail.text).toContain(`Test Admin invited you to join ${ws.name} on Atrium as a member (provider).`);
    const token = await linkToken(email, 'accept-invitation');
    // Only a hash is stored.
    const stored = await runSql(sql`SELECT token_hash FROM invitations WHERE user_id = ${userId}`);
    expect(JSON.stringify(stored)).not.toContain(token);

    const weak = await post('/auth/accept-invitation', { token, password: 'password123' });
    expect(weak.statusCode).toBe(422);
    expect(weak.json().code).toBe('weak_password');

    const accepted = await post('/auth/accept-invitation', { token, password: NEW_PASSWORD });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ user: { id: userId, email }, workspace: { id: ws.id }, role: 'member' });
    const me = await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie: cookieFrom(accepted) } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ workspace: { id: ws.id }, isProvider: true });

    const after = await as(ws.admin.token, 'GET', '/members');
    const row = after.json().items.find((m: { userId: string }) => m.userId === userId);
    expect(row).toMatchObject({ status: 'active' });
    expect(row.lastSignInAt).not.toBeNull();

    const again = await post('/auth/accept-invitation', { token, password: NEW_PASSWORD });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('invitation_used');
    // The password works for sign-in.
    expect((await post('/auth/sign-in', { email, password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('refuses expired (410) and unknown (404) invitations', async () => {
    const email = 'late@example.test';
    const res = await as(ws.admin.token, 'POST', '/members/invitations', { email, name: 'Late', role: 'member' });
    expect(res.statusCode).toBe(201);
    const token = await linkToken(email, 'accept-invitation');
    await runSql(
      sql`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE user_id = ${res.json().userId}`,
    );
    const expired = await post('/auth/accept-invitation', { token, password: NEW_PASSWORD });
    expect(expired.statusCode).toBe(410);
    expect(expired.json().code).toBe('invitation_expired');
    expect((await post('/auth/accept-invitation', { token: 'inv_nope', password: NEW_PASSWORD })).statusCode).toBe(404);
  });

  it('is for admins only; an existing member cannot be invited again; cancelling removes the invitee', async () => {
    const member = await addMember(t, ws);
    expect(
      (await as(member.token, 'POST', '/members/invitations', { email: 'x@example.test', name: 'X', role: 'admin' }))
        .statusCode,
    ).toBe(403);
    const dup = await as(ws.admin.token, 'POST', '/members/invitations', {
      email: member.email,
      name: 'Dup',
      role: 'member',
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().code).toBe('already_member');

    const email = 'cancel.me@example.test';
    const res = await as(ws.admin.token, 'POST', '/members/invitations', { email, name: 'Cancel', role: 'member' });
    const token = await linkToken(email, 'accept-invitation');
    const patched = await as(ws.admin.token, 'PATCH', `/members/${res.json().userId}`, { role: 'admin' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ role: 'admin', status: 'invited' });
    expect((await as(ws.admin.token, 'DELETE', `/members/${res.json().userId}`)).statusCode).toBe(204);
    expect((await as(ws.admin.token, 'GET', '/members')).body).not.toContain(res.json().userId);
    expect((await post('/auth/accept-invitation', { token, password: NEW_PASSWORD })).statusCode).toBe(404);
  });

  it('two invitations of one address sent at once leave one that works, as one sent after another does', async () => {
    const email = `twice-${ws.id}@example.test`;
    const sent = await Promise.all(
      Array.from({ length: 6 }, () =>
        as(ws.admin.token, 'POST', '/members/invitations', { email, name: 'Twice', role: 'member' }),
      ),
    );
    expect(sent.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201, 201]);
    const pending = await withSystem(t.database.db, (tx) =>
      queryRows<{ n: number }>(
        tx,
        sql`SELECT count(*)::int AS n FROM invitations
             WHERE workspace_id = ${ws.id} AND email = ${email} AND accepted_at IS NULL`,
      ),
    );
    expect(pending).toEqual([{ n: 1 }]);
  });

  it('says when inviting again replaced a link still valid, which then answers 404 (an expired one is no news)', async () => {
    const email = `again-${ws.id}@example.test`;
    const invite = () => as(ws.admin.token, 'POST', '/members/invitations', { email, name: 'Again', role: 'member' });
    const first = await invite();
    expect(first.json()).toMatchObject({ replacedEarlier: false });
    const firstToken = await linkToken(email, 'accept-invitation', 1);
    const second = await invite();
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json()).toMatchObject({ userId: first.json().userId, replacedEarlier: true });
    const lookup = (token: string) =>
      t.request({ method: 'GET', url: `/api/v1/auth/invitation?token=${encodeURIComponent(token)}` });
    expect((await lookup(firstToken)).statusCode).toBe(404);
    // The mailbox lists in no set order: the new link is the one that is not the first.
    const links = (await waitForMail(t, email, 2)).map((m) => /accept-invitation\?token=(\S+)/.exec(m.text)?.[1]);
    const secondToken = decodeURIComponent(
      links.find((token) => token && decodeURIComponent(token) !== firstToken) ?? '',
    );
    expect((await lookup(secondToken)).statusCode).toBe(200);
    await runSql(
      sql`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE user_id = ${first.json().userId}`,
    );
    expect((await invite()).json()).toMatchObject({ replacedEarlier: false });
  });

  it('an existing account accepts with its own password and keeps it', async () => {
    const other = await createWorkspace(t);
    const existing = await addMember(t, other, { password: TEST_PASSWORD });
    const res = await as(ws.admin.token, 'POST', '/members/invitations', {
      email: existing.email,
      name: 'Whatever',
      role: 'member',
    });
    expect(res.json().userId).toBe(existing.userId);
    const token = await linkToken(existing.email, 'accept-invitation');
    const wrong = await post('/auth/accept-invitation', { token, password: NEW_PASSWORD });
    expect(wrong.statusCode).toBe(401);
    const ok = await post('/auth/accept-invitation', { token, password: TEST_PASSWORD });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().workspace.id).toBe(ws.id);
  });
});

describe('GET /auth/invitation (the invitation page asks before accepting)', () => {
  const lookup = (token: string) =>
    t.request({ method: 'GET', url: `/api/v1/auth/invitation?token=${encodeURIComponent(token)}` });

  it('says whether the invited account already has a password: a new one, then a member removed and re-invited', async () => {
    const email = 'returning@example.test';
    const invited = await as(ws.admin.token, 'POST', '/members/invitations', {
      email,
      name: 'Ren Turner',
      role: 'member',
    });
    const token = await linkToken(email, 'accept-invitation');
    const fresh = await lookup(token);
    expect(fresh.statusCode, fresh.body).toBe(200);
    // Only what the address's owner needs: no ids, no names of others, nothing about the account but that.
    expect(fresh.json()).toEqual({ workspace: { name: 'Invite Clinic' }, email, existingAccount: false });
    expect(fresh.headers['cache-control']).toBe('no-store');
    expect((await post('/auth/accept-invitation', { token, password: NEW_PASSWORD })).statusCode).toBe(200);
    // Used: the same 409 as accepting.
    expect([(await lookup(token)).statusCode, (await lookup(token)).json().code]).toEqual([409, 'invitation_used']);

    // Removed, then invited again: the account has its password, which accepting asks for.
    expect((await as(ws.admin.token, 'DELETE', `/members/${invited.json().userId}`)).statusCode).toBe(204);
    await as(ws.admin.token, 'POST', '/members/invitations', { email, name: 'Ren Turner', role: 'member' });
    await waitForMail(t, email, 2);
    const again = [await linkToken(email, 'accept-invitation', 1), await linkToken(email, 'accept-invitation', 2)].find(
      (link) => link !== token,
    ) as string;
    expect((await lookup(again)).json()).toEqual({
      workspace: { name: 'Invite Clinic' },
      email,
      existingAccount: true,
    });
    expect((await post('/auth/accept-invitation', { token: again, password: NEW_PASSWORD })).statusCode).toBe(200);
  });

  it('answers 410 for an expired invitation, 404 for an unknown token and 400 without one', async () => {
    const email = 'late-lookup@example.test';
    const res = await as(ws.admin.token, 'POST', '/members/invitations', { email, name: 'Late', role: 'member' });
    const token = await linkToken(email, 'accept-invitation');
    await runSql(
      sql`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE user_id = ${res.json().userId}`,
    );
    const expired = await lookup(token);
    expect([expired.statusCode, expired.json().code]).toEqual([410, 'invitation_expired']);
    expect((await lookup('inv_nope')).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/auth/invitation' })).statusCode).toBe(400);
  });
});

describe('password reset and change', () => {
  it('answers 202 with the same body for known and unknown addresses; mails only real accounts', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    const known = await post('/auth/password-reset', { email: member.email });
    const unknown = await post('/auth/password-reset', { email: 'nobody-here@example.test' });
    expect(known.statusCode).toBe(202);
    expect(unknown.statusCode).toBe(202);
    expect(unknown.body).toBe(known.body);
    await linkToken(member.email, 'reset-password');
    expect(await waitForMail(t, 'nobody-here@example.test', 1, 1_000)).toHaveLength(0);
  });

  it('a reset link sets a new password once and revokes every session and token of the user', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    const other = await createWorkspace(t);
    const elsewhere = await addMember(t, other, { email: member.email });
    const signIn = await post('/auth/sign-in', { email: member.email, password: TEST_PASSWORD });
    const cookie = cookieFrom(signIn);
    expect((await as(member.token, 'GET', '/me')).statusCode).toBe(200);
    expect((await as(elsewhere.token, 'GET', '/me')).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(200);

    expect((await post('/auth/password-reset', { email: member.email })).statusCode).toBe(202);
    const token = await linkToken(member.email, 'reset-password');
    const weak = await post('/auth/password-reset/confirm', { token, password: 'short' });
    expect(weak.statusCode).toBe(422);
    expect(weak.json().code).toBe('weak_password');
    const res = await post('/auth/password-reset/confirm', { token, password: NEW_PASSWORD });
    expect(res.statusCode, res.body).toBe(204);

    expect((await as(member.token, 'GET', '/me')).statusCode).toBe(401);
    expect((await as(elsewhere.token, 'GET', '/me')).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(401);
    expect((await post('/auth/sign-in', { email: member.email, password: TEST_PASSWORD })).statusCode).toBe(401);
    expect((await post('/auth/sign-in', { email: member.email, password: NEW_PASSWORD })).statusCode).toBe(200);

    const reused = await post('/auth/password-reset/confirm', { token, password: 'another-lantern-harbor-58' });
    expect(reused.statusCode).toBe(409);
    expect(reused.json().code).toBe('reset_used');
  });

  it('refuses an expired reset link (410)', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    await post('/auth/password-reset', { email: member.email });
    const token = await linkToken(member.email, 'reset-password');
    await runSql(
      sql`UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE user_id = ${member.userId}`,
    );
    const res = await post('/auth/password-reset/confirm', { token, password: NEW_PASSWORD });
    expect(res.statusCode).toBe(410);
    expect(res.json().code).toBe('reset_expired');
  });

  it('rate-limits reset requests per e-mail address (429)', async () => {
    const email = 'flood@example.test';
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) codes.push((await post('/auth/password-reset', { email })).statusCode);
    expect(codes).toEqual([202, 202, 202, 202, 202, 429]);
  });

  it('changes the password with the current one; a wrong current password is 422 wrong_password', async () => {
    const member = await addMember(t, ws, { password: TEST_PASSWORD });
    const wrong = await as(member.token, 'POST', '/auth/password', {
      currentPassword: 'not-my-password',
      newPassword: NEW_PASSWORD,
    });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().code).toBe('wrong_password');
    const weak = await as(member.token, 'POST', '/auth/password', {
      currentPassword: TEST_PASSWORD,
      newPassword: 'password1234',
    });
    expect(weak.statusCode).toBe(422);
    expect(weak.json().code).toBe('weak_password');
    const ok = await as(member.token, 'POST', '/auth/password', {
      currentPassword: TEST_PASSWORD,
      newPassword: NEW_PASSWORD,
    });
    expect(ok.statusCode, ok.body).toBe(204);
    expect((await post('/auth/sign-in', { email: member.email, password: NEW_PASSWORD })).statusCode).toBe(200);
    expect((await post('/auth/sign-in', { email: member.email, password: TEST_PASSWORD })).statusCode).toBe(401);
  });
});
