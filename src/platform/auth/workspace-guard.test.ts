// A request made for one workspace never acts on another: a browser session has one current workspace, which a
// switch in any tab changes, so the web app names the workspace it shows (X-Atrium-Workspace) and a request for
// another one than the session is in now is 409 `workspace_changed`, nothing done. API tokens are bound to one
// workspace: the same check. Requests naming no workspace behave as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, TEST_PASSWORD, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let riverside: TestWorkspace;
let harbor: TestWorkspace;
let foreign: TestWorkspace;
let pat: { userId: string };

beforeAll(async () => {
  t = await createTestApp();
  riverside = await createWorkspace(t, {
    tier: 'enterprise',
    name: 'Riverside Clinic',
    adminEmail: 'avery@guard.test',
    password: TEST_PASSWORD,
  });
  harbor = await createWorkspace(t, { tier: 'enterprise', name: 'Harbor Therapy' });
  foreign = await createWorkspace(t, { tier: 'enterprise', name: 'Lakeside Secret Practice' });
  // Avery administers both; Pat is a member of both.
  await addMember(t, harbor, { email: 'avery@guard.test', role: 'admin' });
  pat = await addMember(t, riverside, { email: 'pat@guard.test', name: 'Pat Doe' });
  await addMember(t, harbor, { email: 'pat@guard.test', name: 'Pat Doe' });
});
afterAll(async () => t?.close());

const WORKSPACE = 'x-atrium-workspace';

async function signInToRiverside(): Promise<string> {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/auth/sign-in',
    payload: { email: 'avery@guard.test', password: TEST_PASSWORD, workspaceId: riverside.id },
  });
  expect(res.statusCode, res.body).toBe(200);
  const match = /atrium_session=([^;]+)/.exec([res.headers['set-cookie']].flat().join(';'));
  return `atrium_session=${match![1]}`;
}

const memberIds = async (workspace: TestWorkspace) => {
  const res = await t.request({ method: 'GET', url: '/api/v1/members', token: workspace.admin.token });
  return res.json().items.map((m: { userId: string }) => m.userId) as string[];
};
const patientNames = async (workspace: TestWorkspace) => {
  const res = await t.request({ method: 'GET', url: '/api/v1/patients', token: workspace.admin.token });
  return res.json().items.map((p: { familyName: string }) => p.familyName) as string[];
};

describe('X-Atrium-Workspace on a browser session', () => {
  it('refuses a request made for the workspace the session has left (switched in another tab); nothing is done', async () => {
    const cookie = await signInToRiverside();
    const session = { cookie, 'x-requested-with': 'fetch' };
    const forRiverside = { ...session, [WORKSPACE]: riverside.id };

    // Showing Riverside, in Riverside: as always.
    const before = await t.request({ method: 'GET', url: '/api/v1/me', headers: forRiverside });
    expect(before.statusCode, before.body).toBe(200);
    expect(before.json().workspace.id).toBe(riverside.id);

    // Another tab switches the session to Harbor (its own header is the workspace it showed: no matter).
    const switched = await t.request({
      method: 'POST',
      url: '/api/v1/auth/switch-workspace',
      payload: { workspaceId: harbor.id },
      headers: forRiverside,
    });
    expect(switched.statusCode, switched.body).toBe(200);

    // The tab still showing Riverside removes "Pat": refused, and Pat stays a member of Harbor (and Riverside).
    const removed = await t.request({
      method: 'DELETE',
      url: `/api/v1/members/${pat.userId}`,
      headers: forRiverside,
    });
    expect(removed.statusCode, removed.body).toBe(409);
    expect(removed.headers['content-type']).toMatch(/application\/problem\+json/);
    const problem = removed.json();
    expect(problem).toMatchObject({
      code: 'workspace_changed',
      status: 409,
      workspace: { id: harbor.id, name: 'Harbor Therapy' },
    });
    expect(problem.detail).toContain('Harbor Therapy');
    expect(await memberIds(harbor)).toContain(pat.userId);
    expect(await memberIds(riverside)).toContain(pat.userId);

    // A patient created from that tab would land in Harbor: refused, none created anywhere.
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      payload: { givenName: 'Wren', familyName: 'Stale-Tab' },
      headers: forRiverside,
    });
    expect(created.statusCode, created.body).toBe(409);
    expect(created.json().code).toBe('workspace_changed');
    expect(await patientNames(harbor)).not.toContain('Stale-Tab');
    expect(await patientNames(riverside)).not.toContain('Stale-Tab');

    // Reads too: the tab would show Harbor's rows under Riverside's name.
    const read = await t.request({ method: 'GET', url: '/api/v1/members', headers: forRiverside });
    expect(read.statusCode).toBe(409);
    const me = await t.request({ method: 'GET', url: '/api/v1/me', headers: forRiverside });
    expect(me.statusCode).toBe(409);

    // Made for Harbor (the tab reloaded): as always.
    const forHarbor = { ...session, [WORKSPACE]: harbor.id };
    const now = await t.request({ method: 'GET', url: '/api/v1/me', headers: forHarbor });
    expect(now.statusCode, now.body).toBe(200);
    expect(now.json().workspace.id).toBe(harbor.id);

    // Without the header (API clients, the contract's examples): the session's current workspace, as today.
    const plain = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      payload: { givenName: 'Wren', familyName: 'No-Header' },
      headers: session,
    });
    expect(plain.statusCode, plain.body).toBe(201);
    expect(await patientNames(harbor)).toContain('No-Header');

    // Signing out needs no workspace: a stale tab may.
    const out = await t.request({ method: 'POST', url: '/api/v1/auth/sign-out', headers: forRiverside });
    expect(out.statusCode, out.body).toBe(204);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', headers: session })).statusCode).toBe(401);
  });

  it('says nothing of a workspace the user does not belong to', async () => {
    const cookie = await signInToRiverside();
    const res = await t.request({
      method: 'GET',
      url: '/api/v1/patients',
      headers: { cookie, [WORKSPACE]: foreign.id },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().workspace).toEqual({ id: riverside.id, name: 'Riverside Clinic' });
    expect(res.body).not.toContain(foreign.id);
    expect(res.body).not.toContain('Lakeside');
    // Nor of one that does not exist: the same answer.
    const unknown = await t.request({
      method: 'GET',
      url: '/api/v1/patients',
      headers: { cookie, [WORKSPACE]: 'ws_nothing' },
    });
    expect(unknown.statusCode).toBe(409);
    expect(unknown.json().workspace).toEqual(res.json().workspace);
  });

  it('is checked after authentication and the CSRF check', async () => {
    const anonymous = await t.request({ method: 'GET', url: '/api/v1/me', headers: { [WORKSPACE]: harbor.id } });
    expect(anonymous.statusCode).toBe(401);
    const cookie = await signInToRiverside();
    const noCsrf = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      payload: { givenName: 'A', familyName: 'B' },
      headers: { cookie, [WORKSPACE]: harbor.id },
    });
    expect(noCsrf.statusCode).toBe(403);
    // The header is no CSRF signal of its own.
    const onlyHeader = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      payload: { givenName: 'A', familyName: 'B' },
      headers: { cookie, [WORKSPACE]: riverside.id },
    });
    expect(onlyHeader.statusCode).toBe(403);
  });

  it('an event stream names its workspace in the query (EventSource sends no headers): a reconnect after a switch is refused', async () => {
    const cookie = await signInToRiverside();
    await t.request({
      method: 'POST',
      url: '/api/v1/auth/switch-workspace',
      payload: { workspaceId: harbor.id },
      headers: { cookie, 'x-requested-with': 'fetch' },
    });
    const stream = await t.request({
      method: 'GET',
      url: `/api/v1/channels/events?workspace=${riverside.id}`,
      headers: { cookie, accept: 'text/event-stream' },
    });
    expect(stream.statusCode, stream.body).toBe(409);
    expect(stream.json()).toMatchObject({ code: 'workspace_changed', workspace: { id: harbor.id } });
    // Only event streams read it from the query: elsewhere `workspace` is no parameter of ours.
    const me = await t.request({ method: 'GET', url: `/api/v1/me?workspace=${riverside.id}`, headers: { cookie } });
    expect(me.statusCode).toBe(200);
  });
});

describe('X-Atrium-Workspace with an API token', () => {
  it("is refused when it names another workspace than the token's; nothing is done", async () => {
    const wrong = await t.request({
      method: 'DELETE',
      url: `/api/v1/members/${pat.userId}`,
      token: riverside.admin.token,
      headers: { [WORKSPACE]: harbor.id },
    });
    expect(wrong.statusCode, wrong.body).toBe(409);
    expect(wrong.json()).toMatchObject({
      code: 'workspace_changed',
      workspace: { id: riverside.id, name: 'Riverside Clinic' },
    });
    expect(wrong.json().detail).toMatch(/API token works in Riverside Clinic only/);
    expect(await memberIds(riverside)).toContain(pat.userId);

    const right = await t.request({
      method: 'GET',
      url: '/api/v1/members',
      token: riverside.admin.token,
      headers: { [WORKSPACE]: riverside.id },
    });
    expect(right.statusCode, right.body).toBe(200);
  });
});
