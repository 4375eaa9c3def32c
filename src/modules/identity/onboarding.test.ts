// Onboarding: the e-mails an operator call sends (welcome / "you were added"), choosing a first password, and
// resending an invitation (docs/identity.md).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, TEST_PASSWORD, waitForMail } from '../../../test/helpers/factories.js';

let t: TestApp;
const NEW_PASSWORD = 'lantern-harbor-quill-57';

beforeAll(async () => {
  t = await createTestApp();
  await t.startBackground();
});
afterAll(async () => t?.close());

const unique = () => Math.random().toString(36).slice(2, 10);
const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token, payload } as never);
const post = (url: string, payload: object) => t.request({ method: 'POST', url: `/api/v1${url}`, payload });
const operator = (url: string, payload: object) =>
  t.request({ method: 'POST', url: `/api/v1/operator${url}`, token: t.config.operatorToken, payload });

type Mail = Awaited<ReturnType<typeof waitForMail>>[number];

/** The mail to `to` whose subject matches (the mailbox lists in no set order), waiting for it. */
async function mailTo(to: string, subject: RegExp): Promise<Mail> {
  for (let i = 0; i < 100; i++) {
    const found = (await waitForMail(t, to, 1, 200)).find((m) => subject.test(m.subject));
    if (found) return found;
  }
  throw new Error(`no mail to ${to} matching ${subject}`);
}

const tokenIn = (mail: Mail, path: string) => {
  const match = new RegExp(`/${path}\\?token=(\\S+)`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in ${mail.text}`);
  return decodeURIComponent(match[1]);
};

const lookupInvitation = (token: string) =>
  t.request({ method: 'GET', url: `/api/v1/auth/invitation?token=${encodeURIComponent(token)}` });

describe('operator calls e-mail the person they add', () => {
  it('a new workspace whose admin has no password: a welcome e-mail lets them choose it and signs them in', async () => {
    const email = `first-admin-${unique()}@example.test`;
    const name = `Maple Clinic ${unique()}`;
    const res = await operator('/workspaces', { name, tier: 'free', admin: { email, name: 'Mona Maple' } });
    expect(res.statusCode, res.body).toBe(201);
    const { workspace, admin } = res.json();

    const mail = await mailTo(email, /Welcome/);
    // Names the workspace and who set it up, in plain words; no "reset", no colleague who does not exist.
    expect(mail.subject).toBe(`Welcome to ${name} on Atrium`);
    expect(mail.text).toContain('Hello Mona Maple');
    expect(mail.text).toContain(`The Atrium team set up the workspace ${name} for you, with you as its admin.`);
    expect(mail.text).toContain('choose your password');
    expect(mail.text).toContain(email);
    expect(mail.text).not.toMatch(/reset/i);
    const token = tokenIn(mail, 'accept-invitation');
    expect((await lookupInvitation(token)).json()).toEqual({ workspace: { name }, email, existingAccount: false });

    // The admin is listed once, as active (the welcome invitation is no second row).
    const members = (await as(admin.token, 'GET', '/members')).json().items;
    expect(members).toHaveLength(1);
    expect(members[0]).toMatchObject({ userId: admin.userId, role: 'admin', status: 'active' });

    const accepted = await post('/auth/accept-invitation', { token, password: NEW_PASSWORD });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ user: { id: admin.userId, email }, workspace: { id: workspace.id } });
    expect(accepted.json().role).toBe('admin');
    expect(accepted.headers['set-cookie']).toBeDefined();
    // Choosing the first password is no password change: the operator's token keeps working.
    expect((await as(admin.token, 'GET', '/me')).statusCode).toBe(200);
    expect((await post('/auth/sign-in', { email, password: NEW_PASSWORD })).statusCode).toBe(200);
    expect((await waitForMail(t, email)).length).toBe(1);
  });

  it('adding a member without a password mails a welcome link; accepting keeps the role an admin changed since', async () => {
    const ws = await createWorkspace(t, { name: `Birch Clinic ${unique()}` });
    const email = `new-member-${unique()}@example.test`;
    const res = await operator(`/workspaces/${ws.id}/members`, {
      email,
      name: 'Nia Nurse',
      role: 'admin',
      isProvider: true,
    });
    expect(res.statusCode, res.body).toBe(201);
    const { userId } = res.json();
    const mail = await mailTo(email, /Welcome/);
    expect(mail.subject).toBe(`Welcome to ${ws.name} on Atrium`);
    expect(mail.text).toContain(`The Atrium team added you to ${ws.name} on Atrium as an admin (provider).`);
    const token = tokenIn(mail, 'accept-invitation');

    expect((await as(ws.admin.token, 'PATCH', `/members/${userId}`, { role: 'member' })).statusCode).toBe(200);
    const accepted = await post('/auth/accept-invitation', { token, password: NEW_PASSWORD });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().role).toBe('member');
  });

  it('removing a member ends their welcome link', async () => {
    const ws = await createWorkspace(t);
    const email = `removed-${unique()}@example.test`;
    const { userId } = (await operator(`/workspaces/${ws.id}/members`, { email, name: 'Rae', role: 'member' })).json();
    const token = tokenIn(await mailTo(email, /Welcome/), 'accept-invitation');
    expect((await as(ws.admin.token, 'DELETE', `/members/${userId}`)).statusCode).toBe(204);
    expect((await lookupInvitation(token)).statusCode).toBe(404);
    expect((await post('/auth/accept-invitation', { token, password: NEW_PASSWORD })).statusCode).toBe(404);
    expect((await as(ws.admin.token, 'GET', '/members')).body).not.toContain(userId);
  });

  it('an account with a password joining another workspace is told "you were added"; a role change mails no one', async () => {
    const home = await createWorkspace(t);
    const existing = await addMember(t, home, { password: TEST_PASSWORD, name: 'Ezra Existing' });
    const other = await createWorkspace(t, { name: `Cedar Clinic ${unique()}` });
    await addMember(t, other, { email: existing.email, isProvider: true });
    const mail = await mailTo(existing.email, /added/);
    expect(mail.subject).toBe(`You were added to ${other.name} on Atrium`);
    expect(mail.text).toContain(`The Atrium team added you to ${other.name} as a member (provider).`);
    expect(mail.text).not.toContain('token=');
    await addMember(t, other, { email: existing.email, role: 'admin' });
    await new Promise((r) => setTimeout(r, 500));
    // One mail only: the account given a password at creation got none, the role change none.
    expect(await waitForMail(t, existing.email, 2, 500)).toHaveLength(1);
  });
});

describe('"Forgot password?" for an account that never had a password', () => {
  it('mails a choose-your-password link, not a reset; choosing it revokes the tokens as any reset link does', async () => {
    const ws = await createWorkspace(t);
    const email = `no-password-${unique()}@example.test`;
    const member = await addMember(t, ws, { email, name: 'Nova' });
    await mailTo(email, /Welcome/);
    expect((await post('/auth/password-reset', { email })).statusCode).toBe(202);
    const mail = await mailTo(email, /password/);
    expect(mail.subject).toBe('Choose your Atrium password');
    expect(mail.text).toContain('has no password yet');
    // The link's page is /reset-password; the words never say reset.
    expect(mail.text.replace(/https?:\/\/\S+/g, '')).not.toMatch(/reset/i);
    const token = tokenIn(mail, 'reset-password');

    const lookup = await t.request({
      method: 'GET',
      url: `/api/v1/auth/password-reset?token=${encodeURIComponent(token)}`,
    });
    expect(lookup.statusCode, lookup.body).toBe(200);
    expect(lookup.json()).toEqual({ email, firstPassword: true });
    expect(lookup.headers['cache-control']).toBe('no-store');

    expect((await post('/auth/password-reset/confirm', { token, password: NEW_PASSWORD })).statusCode).toBe(204);
    // Contract §2a: a reset link's password revokes every session and token of the user, a first password's too
    // (the welcome invitation is the way that revokes nothing); the password signs in.
    expect((await as(member.token, 'GET', '/me')).statusCode).toBe(401);
    expect((await post('/auth/sign-in', { email, password: NEW_PASSWORD })).statusCode).toBe(200);
    const used = await t.request({
      method: 'GET',
      url: `/api/v1/auth/password-reset?token=${encodeURIComponent(token)}`,
    });
    expect([used.statusCode, used.json().code]).toEqual([409, 'reset_used']);

    // Now it has a password: the next link is a reset, and using it revokes the session it signed in with.
    const signedIn = await post('/auth/sign-in', { email, password: NEW_PASSWORD });
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0];
    expect((await post('/auth/password-reset', { email })).statusCode).toBe(202);
    const reset = await mailTo(email, /Reset/);
    const again = tokenIn(reset, 'reset-password');
    expect(
      (
        await t.request({ method: 'GET', url: `/api/v1/auth/password-reset?token=${encodeURIComponent(again)}` })
      ).json(),
    ).toEqual({ email, firstPassword: false });
    expect(
      (await post('/auth/password-reset/confirm', { token: again, password: `${NEW_PASSWORD}-x` })).statusCode,
    ).toBe(204);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: { cookie } })).statusCode).toBe(401);
  });
});

describe('POST /members/:userId/resend-invitation', () => {
  it('mails a new link, the earlier one stops working; audited; limited; admins of this workspace only', async () => {
    const ws = await createWorkspace(t, { name: `Resend Clinic ${unique()}` });
    const email = `resend-${unique()}@example.test`;
    const invited = await as(ws.admin.token, 'POST', '/members/invitations', {
      email,
      name: 'Rosa Parks',
      role: 'member',
      isProvider: true,
    });
    expect(invited.statusCode, invited.body).toBe(201);
    const { userId } = invited.json();
    const first = tokenIn((await waitForMail(t, email, 1))[0], 'accept-invitation');

    const resent = await as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`);
    expect(resent.statusCode, resent.body).toBe(201);
    expect(resent.json()).toEqual({ userId, status: 'invited', replacedEarlier: true });
    const mails = await waitForMail(t, email, 2);
    expect(mails).toHaveLength(2);
    const second = mails.map((m) => tokenIn(m, 'accept-invitation')).find((token) => token !== first) as string;
    // Same words as the invitation: who, where, as what.
    expect(mails.every((m) => m.subject === `Test Admin invited you to ${ws.name} on Atrium`)).toBe(true);
    expect((await lookupInvitation(first)).statusCode).toBe(404);
    expect((await lookupInvitation(second)).json()).toMatchObject({ email, existingAccount: false });

    const audit = await as(ws.admin.token, 'GET', '/audit?kind=admin_action');
    expect(audit.json().items).toContainEqual(
      expect.objectContaining({ action: 'members.invite', target: userId, resent: true, isProvider: true }),
    );
    // Still listed once, as invited, with its role.
    const rows = (await as(ws.admin.token, 'GET', '/members'))
      .json()
      .items.filter((m: { userId: string }) => m.userId === userId);
    expect(rows).toEqual([expect.objectContaining({ status: 'invited', role: 'member', isProvider: true })]);

    // Another workspace's admin, a member, and an active member's id.
    const other = await createWorkspace(t);
    expect((await as(other.admin.token, 'POST', `/members/${userId}/resend-invitation`)).statusCode).toBe(404);
    const member = await addMember(t, ws);
    expect((await as(member.token, 'POST', `/members/${userId}/resend-invitation`)).statusCode).toBe(403);
    // A member (whose operator welcome link is pending) is no invitee: 409; one with nothing pending: 404.
    const welcomed = await as(ws.admin.token, 'POST', `/members/${member.userId}/resend-invitation`);
    expect([welcomed.statusCode, welcomed.json().code]).toEqual([409, 'already_member']);
    const withPassword = await addMember(t, ws, { password: TEST_PASSWORD });
    expect((await as(ws.admin.token, 'POST', `/members/${withPassword.userId}/resend-invitation`)).statusCode).toBe(
      404,
    );
    expect((await as(ws.admin.token, 'POST', '/members/usr_nobody/resend-invitation')).statusCode).toBe(404);

    // Three resends an hour per invitee.
    expect((await as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`)).statusCode).toBe(201);
    expect((await as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`)).statusCode).toBe(201);
    const limited = await as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

    // The latest link works and signs in.
    const latest = (await waitForMail(t, email, 4)).map((m) => tokenIn(m, 'accept-invitation'));
    const working = [];
    for (const token of latest) if ((await lookupInvitation(token)).statusCode === 200) working.push(token);
    expect(working).toHaveLength(1);
    expect((await post('/auth/accept-invitation', { token: working[0], password: NEW_PASSWORD })).statusCode).toBe(200);
    // Accepted: nothing left to resend.
    expect((await as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`)).statusCode).toBe(404);
  });

  it('resends an expired invitation with a fresh 7 days', async () => {
    const ws = await createWorkspace(t);
    const email = `expired-${unique()}@example.test`;
    const { userId } = (
      await as(ws.admin.token, 'POST', '/members/invitations', { email, name: 'Late', role: 'member' })
    ).json();
    const first = tokenIn((await waitForMail(t, email, 1))[0], 'accept-invitation');
    const { withSystem } = await import('../../platform/db/tenant.js');
    const { sql } = await import('drizzle-orm');
    await withSystem(t.database.db, (tx) =>
      tx.execute(sql`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE user_id = ${userId}`),
    );
    expect((await lookupInvitation(first)).statusCode).toBe(410);
    const resent = await as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`);
    expect(resent.json()).toMatchObject({ replacedEarlier: false });
    const second = (await waitForMail(t, email, 2))
      .map((m) => tokenIn(m, 'accept-invitation'))
      .find((x) => x !== first);
    expect((await lookupInvitation(second as string)).statusCode).toBe(200);
  });
});

// Two requests at once on the PostgreSQL server (the embedded database runs one transaction at a time): a third
// connection holds the invitation's row so that the first request is mid-way when the resend starts.
describe.skipIf(!process.env.ATRIUM_TEST_DATABASE_URL)('a resend racing a cancel or an acceptance', () => {
  async function racing(first: () => Promise<{ statusCode: number }>, userId: string, workspaceId: string) {
    const holder = new pg.Client({ connectionString: t.testDb.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM invitations WHERE workspace_id = $1 AND user_id = $2 FOR UPDATE', [
        workspaceId,
        userId,
      ]);
      const firstDone = first();
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { firstDone, holder };
    } catch (error) {
      await holder.end();
      throw error;
    }
  }
  const invite = async (ws: Awaited<ReturnType<typeof createWorkspace>>) => {
    const email = `race-${unique()}@example.test`;
    const invited = await as(ws.admin.token, 'POST', '/members/invitations', {
      email,
      name: 'Race Case',
      role: 'member',
    });
    expect(invited.statusCode, invited.body).toBe(201);
    return { email, userId: invited.json().userId as string };
  };

  it('a cancelled invitation does not come back', async () => {
    const ws = await createWorkspace(t);
    const { userId } = await invite(ws);
    const { firstDone, holder } = await racing(() => as(ws.admin.token, 'DELETE', `/members/${userId}`), userId, ws.id);
    const resend = as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await holder.query('COMMIT');
    await holder.end();
    expect((await firstDone).statusCode).toBe(204);
    expect((await resend).statusCode).toBe(404);
    const rows = (await as(ws.admin.token, 'GET', '/members'))
      .json()
      .items.filter((m: { userId: string }) => m.userId === userId);
    expect(rows).toEqual([]);
  });

  it('a person who just joined gets no fresh invitation', async () => {
    const ws = await createWorkspace(t);
    const { email, userId } = await invite(ws);
    const token = tokenIn((await waitForMail(t, email, 1))[0], 'accept-invitation');
    const { firstDone, holder } = await racing(
      () => post('/auth/accept-invitation', { token, password: NEW_PASSWORD }),
      userId,
      ws.id,
    );
    const resend = as(ws.admin.token, 'POST', `/members/${userId}/resend-invitation`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await holder.query('COMMIT');
    await holder.end();
    expect((await firstDone).statusCode).toBe(200);
    expect((await resend).statusCode).toBe(409);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await waitForMail(t, email, 1, 200)).toHaveLength(1);
  });
});
