// PATCH /workspace: admins rename their workspace; members cannot; the tier is not theirs to change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, TEST_PASSWORD, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard', name: 'Old Name Clinic' });
});
afterAll(async () => t?.close());

const rename = (token: string, payload: unknown) =>
  t.request({ method: 'PATCH', url: '/api/v1/workspace', token, payload: payload as object });
const me = async (token: string) => (await t.request({ method: 'GET', url: '/api/v1/me', token })).json();

describe('PATCH /workspace', () => {
  it('renames the workspace for an admin, at once for every session, and audits it', async () => {
    const res = await rename(ws.admin.token, { name: '  Riverbend Family Clinic ' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: ws.id, name: 'Riverbend Family Clinic', tier: 'standard' });
    expect((await me(ws.admin.token)).workspace.name).toBe('Riverbend Family Clinic');
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: ws.admin.token });
    expect(audit.json().items[0]).toMatchObject({
      action: 'workspace.update',
      by: 'admin',
      name: 'Riverbend Family Clinic',
    });
  });

  it('refuses members, empty names and a tier, changing nothing', async () => {
    const member = await addMember(t, ws, { role: 'member' });
    expect((await rename(member.token, { name: 'Hijacked' })).statusCode).toBe(403);
    expect((await rename(ws.admin.token, { name: '   ' })).statusCode).toBe(400);
    expect((await rename(ws.admin.token, { name: 'Cheap Upgrade', tier: 'enterprise' })).statusCode).toBe(400);
    const after = await me(ws.admin.token);
    expect(after.workspace).toMatchObject({ name: 'Riverbend Family Clinic', tier: 'standard' });
  });

  it('renames only the workspace the name was typed for (a session switched in another tab is refused)', async () => {
    const other = await createWorkspace(t, { tier: 'standard', name: 'Harbor Therapy' });
    // The page sent the id of the workspace it showed; the credential is now another workspace's.
    const res = await rename(ws.admin.token, { name: 'Riverside Clinic (PT)', workspaceId: other.id });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe('workspace_changed');
    expect((await me(ws.admin.token)).workspace.name).toBe('Riverbend Family Clinic');
    expect((await me(other.admin.token)).workspace.name).toBe('Harbor Therapy');
    const same = await rename(ws.admin.token, { name: 'Riverbend Clinic', workspaceId: ws.id });
    expect(same.statusCode, same.body).toBe(200);
    expect((await me(ws.admin.token)).workspace.name).toBe('Riverbend Clinic');
  });

  it("sets the clinic's time zone: canonical IANA names only, shown in /me and at sign-in, cleared with null", async () => {
    // Any case, and an older name, are stored as IANA spells the zone today.
    for (const [typed, stored] of [
      ['asia/calcutta', 'Asia/Kolkata'],
      ['EUROPE/KYIV', 'Europe/Kyiv'],
      ['utc', 'UTC'],
    ]) {
      const set = await rename(ws.admin.token, { timeZone: typed });
      expect([set.statusCode, set.json().timeZone], typed).toEqual([200, stored]);
    }
    const res = await rename(ws.admin.token, { timeZone: 'america/new_york' });
    expect(res.statusCode, res.body).toBe(200);
    // Stored as Intl spells it; the name is left as it was.
    expect(res.json()).toMatchObject({ id: ws.id, name: 'Riverbend Clinic', timeZone: 'America/New_York' });
    expect((await me(ws.admin.token)).workspace.timeZone).toBe('America/New_York');
    // The sign-in and switch answers name it too.
    const other = await createWorkspace(t, { password: TEST_PASSWORD });
    expect((await rename(other.admin.token, { timeZone: 'Asia/Tokyo' })).statusCode).toBe(200);
    await t.request({
      method: 'POST',
      url: `/api/v1/operator/workspaces/${ws.id}/members`,
      token: t.config.operatorToken,
      payload: { email: other.admin.email, name: 'Test Admin', role: 'member' },
    });
    const signedIn = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: { email: other.admin.email, password: TEST_PASSWORD, workspaceId: other.id },
    });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.json().workspace.timeZone).toBe('Asia/Tokyo');
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0];
    const switched = await t.request({
      method: 'POST',
      url: '/api/v1/auth/switch-workspace',
      headers: { cookie, 'x-requested-with': 'fetch' },
      payload: { workspaceId: ws.id },
    });
    expect(switched.statusCode, switched.body).toBe(200);
    expect(switched.json().workspace.timeZone).toBe('America/New_York');
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: ws.admin.token });
    expect(audit.json().items.find((i: { action: string }) => i.action === 'workspace.update')).toMatchObject({
      timeZone: 'America/New_York',
    });

    for (const bad of [
      'EST',
      'US/Eastern',
      'EST5EDT',
      'Etc/GMT+5',
      'Mars/Olympus_Mons',
      'America/New_York\u0000',
      '../../etc/passwd',
      'x'.repeat(65),
      '',
      42,
      {},
    ]) {
      const refused = await rename(ws.admin.token, { timeZone: bad });
      expect(refused.statusCode, JSON.stringify(bad)).toBe(400);
      expect(refused.json().code).toBe('validation_failed');
    }
    // Neither a name nor a zone: nothing to change.
    expect((await rename(ws.admin.token, {})).statusCode).toBe(400);
    expect((await rename(ws.admin.token, { workspaceId: ws.id })).statusCode).toBe(400);
    const member = await addMember(t, ws, { role: 'member' });
    expect((await rename(member.token, { timeZone: 'Asia/Tokyo' })).statusCode).toBe(403);
    expect((await me(member.token)).workspace.timeZone).toBe('America/New_York');

    const cleared = await rename(ws.admin.token, { timeZone: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().timeZone).toBeNull();
    expect((await me(ws.admin.token)).workspace.timeZone).toBeNull();
  });

  it('takes the time zone when the operator creates a workspace (and refuses an unknown one)', async () => {
    const op = t.config.operatorToken;
    const create = (timeZone: unknown) =>
      t.request({
        method: 'POST',
        url: '/api/v1/operator/workspaces',
        token: op,
        payload: {
          name: 'Lakeside PT',
          tier: 'free',
          timeZone,
          admin: { email: `tz-${Date.now()}@example.test`, name: 'Lee' },
        },
      });
    const bad = await create('Europe/Atlantis');
    expect(bad.statusCode, bad.body).toBe(400);
    const made = await create('Asia/Kolkata');
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().workspace.timeZone).toBe('Asia/Kolkata');
    expect((await me(made.json().admin.token)).workspace.timeZone).toBe('Asia/Kolkata');
    const signIn = await t.request({
      method: 'PATCH',
      url: `/api/v1/operator/workspaces/${made.json().workspace.id}`,
      token: op,
      payload: { timeZone: 'Europe/Berlin' },
    });
    expect(signIn.statusCode, signIn.body).toBe(200);
    expect(signIn.json().timeZone).toBe('Europe/Berlin');
  });
});
