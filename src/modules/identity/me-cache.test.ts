import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { PrincipalCache } from '../../platform/auth/principal-cache.js';
import { MeCache, type MeMembership } from './me-cache.js';

const row = (id: string): MeMembership => ({
  userId: 'usr_1',
  email: 'a@x.test',
  userName: 'A',
  id,
  name: id,
  tier: 'free',
  organizationId: null,
  timeZone: null,
  role: 'admin',
});

describe('MeCache', () => {
  it('serves a hit without loading, and loads again after any credential invalidation', async () => {
    const principals = new PrincipalCache();
    const cache = new MeCache(principals);
    let loads = 0;
    const load = async () => {
      loads++;
      return [row('ws_a')];
    };
    await cache.read('usr_1', load);
    await cache.read('usr_1', load);
    expect(loads).toBe(1);
    principals.invalidate('some-credential-hash');
    await cache.read('usr_1', load);
    expect(loads).toBe(2);
  });

  it('does not keep an answer loaded while an invalidation happened', async () => {
    const principals = new PrincipalCache();
    const cache = new MeCache(principals);
    let loads = 0;
    await cache.read('usr_1', async () => {
      loads++;
      principals.invalidate('*'); // the tier changed while this lookup was in flight
      return [row('ws_old')];
    });
    const fresh = await cache.read('usr_1', async () => {
      loads++;
      return [row('ws_new')];
    });
    expect(loads).toBe(2);
    expect(fresh[0].id).toBe('ws_new');
  });

  it('expires entries after its lifetime', async () => {
    const cache = new MeCache(new PrincipalCache());
    await cache.read('usr_1', async () => [row('ws_a')]);
    expect(cache.get('usr_1')).toBeDefined();
    expect(cache.get('usr_1', Date.now() + 60_000)).toBeUndefined();
  });
});

describe('GET /me stays current', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    t = await createTestApp();
    ws = await createWorkspace(t, { tier: 'standard' });
  });
  afterAll(async () => t?.close());

  const me = async (token: string) => (await t.request({ method: 'GET', url: '/api/v1/me', token })).json();

  it('shows a tier or name change, a new membership and a new workspace on the next call', async () => {
    expect((await me(ws.admin.token)).workspace.tier).toBe('standard');
    await t.request({
      method: 'PATCH',
      url: `/api/v1/operator/workspaces/${ws.id}`,
      token: t.config.operatorToken,
      payload: { tier: 'advanced', name: 'Renamed clinic' },
    });
    const after = await me(ws.admin.token);
    expect(after.workspace).toMatchObject({ tier: 'advanced', name: 'Renamed clinic' });

    const other = await createWorkspace(t, { tier: 'free' });
    await addMember(t, other, { email: ws.admin.email, role: 'member' });
    expect((await me(ws.admin.token)).workspaces.map((w: { id: string }) => w.id)).toContain(other.id);

    const third = await createWorkspace(t, { tier: 'free', adminEmail: ws.admin.email });
    expect((await me(ws.admin.token)).workspaces.map((w: { id: string }) => w.id)).toContain(third.id);
  });
});
