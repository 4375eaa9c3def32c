import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, setTier } from '../../../test/helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const STANDARD_SKILLS = [
  'insurance-eligibility',
  'billing-codes',
  'mail-spam-filter',
  'telehealth-brief',
  'patient-lookup',
  'authorized-units',
  'soap-structurer',
];

const install = (token: string, slug: string, scopes: string[] = []) =>
  t.request({ method: 'POST', url: '/api/v1/marketplace/install', token, payload: { slug, scopes } });

async function audit(token: string, kind: string) {
  const res = await t.request({ method: 'GET', url: `/api/v1/audit?kind=${kind}&limit=200`, token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as Record<string, unknown>[];
}

describe('catalog', () => {
  it('documents the marketplace and skills routes in OpenAPI', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const p of [
      '/api/v1/marketplace/install',
      '/api/v1/marketplace/module/{slug}',
      '/api/v1/skills/invoke',
      '/api/v1/chat',
    ]) {
      expect(paths).toContain(p);
    }
  });

  it('lists at least 8 built-in skills with §4 manifests for every tier, searchable', async () => {
    const ws = await createWorkspace(t, { tier: 'free' });
    const res = await t.request({ method: 'GET', url: '/api/v1/marketplace/catalog', token: ws.admin.token });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items;
    expect(items.length).toBeGreaterThanOrEqual(8);
    for (const m of items) {
      expect(m).toMatchObject({ visibility: 'public', installed: false, publisher: expect.any(String) });
      for (const tool of m.tools) {
        expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
        expect(tool.inputSchema.type).toBe('object');
        for (const s of tool.requiredScopes) expect(m.scopes.map((x: { scope: string }) => x.scope)).toContain(s);
      }
    }
    const search = await t.request({
      method: 'GET',
      url: '/api/v1/marketplace/catalog?q=eligibility',
      token: ws.admin.token,
    });
    expect(search.json().items.map((m: { slug: string }) => m.slug)).toEqual(['insurance-eligibility']);
    const cat = await t.request({
      method: 'GET',
      url: '/api/v1/marketplace/catalog?category=mail',
      token: ws.admin.token,
    });
    expect(cat.json().items.map((m: { slug: string }) => m.slug)).toEqual(['mail-spam-filter']);
  });

  it('shows a module with instructions and install state; unknown slugs are 404', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const res = await t.request({
      method: 'GET',
      url: '/api/v1/marketplace/module/billing-codes',
      token: ws.admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ slug: 'billing-codes', installed: false, install: null, source: 'builtin' });
    expect(res.json().content).toContain('# Billing code suggestions');
    expect(res.json().contentSummary).toMatch(/CPT/);
    const missing = await t.request({ method: 'GET', url: '/api/v1/marketplace/module/nope', token: ws.admin.token });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toContain('application/problem+json');
  });
});

describe('installs', () => {
  it('refuses Free (tier_required), members (forbidden), skills above the tier and undeclared scopes', async () => {
    const free = await createWorkspace(t, { tier: 'free' });
    const res = await install(free.admin.token, 'billing-codes');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({
      code: 'tier_required',
      feature: 'marketplace_install',
      requiredTier: 'standard',
    });
    // Said in the words the web app uses: the plan's name, capitalised ('plan', not 'tier').
    expect(res.json().detail).toBe('This needs the Standard plan or above');

    const std = await createWorkspace(t, { tier: 'standard' });
    const member = await addMember(t, std);
    expect((await install(member.token, 'billing-codes')).json().code).toBe('forbidden');
    const above = await install(std.admin.token, 'patient-intake', ['patients:write']);
    expect(above.statusCode).toBe(403);
    expect(above.json()).toMatchObject({ code: 'tier_required', requiredTier: 'advanced' });
    expect(above.json().detail).toMatch(/needs the Advanced plan or above$/);
    const undeclared = await install(std.admin.token, 'soap-structurer', ['patients:read']);
    expect(undeclared.statusCode).toBe(422);
    expect(undeclared.json()).toMatchObject({ code: 'scope_not_declared', undeclared: ['patients:read'] });
    const bogus = await install(std.admin.token, 'soap-structurer', ['root:all']);
    expect(bogus.statusCode).toBe(422);
    expect(bogus.json()).toMatchObject({ code: 'scope_not_declared', undeclared: ['root:all'] });
    const installed = await t.request({ method: 'GET', url: '/api/v1/marketplace/installed', token: std.admin.token });
    expect(installed.json()).toMatchObject({ items: [], activeCount: 0, limit: 5 });
  });

  it('installs with opt-in scopes (201), changes grants on re-install (200), uninstalls; each writes admin_action', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const first = await install(ws.admin.token, 'telehealth-brief', ['patients:read']);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().install).toMatchObject({
      slug: 'telehealth-brief',
      skillId: 'skl_telehealth_brief',
      version: '1.0.0',
      grantedScopes: ['patients:read'],
      status: 'active',
      installedBy: ws.admin.userId,
    });
    const again = await install(ws.admin.token, 'telehealth-brief', ['billing:read', 'patients:read']);
    expect(again.statusCode).toBe(200);
    expect(again.json().install.grantedScopes).toEqual(['billing:read', 'patients:read']);

    const list = await t.request({ method: 'GET', url: '/api/v1/marketplace/installed', token: ws.admin.token });
    expect(list.json()).toMatchObject({ activeCount: 1, limit: 5, tier: 'standard' });
    const catalog = await t.request({
      method: 'GET',
      url: '/api/v1/marketplace/catalog?q=telehealth',
      token: ws.admin.token,
    });
    expect(catalog.json().items[0]).toMatchObject({ installed: true, installedVersion: '1.0.0' });

    const un = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/uninstall',
      token: ws.admin.token,
      payload: { slug: 'telehealth-brief' },
    });
    expect(un.statusCode, un.body).toBe(200);
    expect(un.json().install).toMatchObject({ status: 'uninstalled', grantedScopes: [] });
    const twice = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/uninstall',
      token: ws.admin.token,
      payload: { slug: 'telehealth-brief' },
    });
    expect(twice.statusCode).toBe(404);

    const rows = (await audit(ws.admin.token, 'admin_action')).filter((r) =>
      String(r.action).startsWith('marketplace.'),
    );
    expect(rows.map((r) => r.action).reverse()).toEqual([
      'marketplace.install',
      'marketplace.grants_changed',
      'marketplace.uninstall',
    ]);
    expect(rows.every((r) => r.target === 'telehealth-brief' && r.actorUserId === ws.admin.userId)).toBe(true);
    expect(rows.find((r) => r.action === 'marketplace.grants_changed')).toMatchObject({
      previousScopes: ['patients:read'],
      grantedScopes: ['billing:read', 'patients:read'],
    });
  });

  it('counts active installs against the Standard limit of 5 (409 limit_reached); uninstalling frees a slot', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    for (const slug of STANDARD_SKILLS.slice(0, 5)) expect((await install(ws.admin.token, slug)).statusCode).toBe(201);
    const sixth = await install(ws.admin.token, STANDARD_SKILLS[5]);
    expect(sixth.statusCode).toBe(409);
    expect(sixth.json()).toMatchObject({ code: 'limit_reached', limit: 5, current: 5 });
    // Changing grants of an installed skill is not a new install.
    expect((await install(ws.admin.token, STANDARD_SKILLS[0], ['patients:read'])).statusCode).toBe(200);
    await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/uninstall',
      token: ws.admin.token,
      payload: { slug: STANDARD_SKILLS[1] },
    });
    expect((await install(ws.admin.token, STANDARD_SKILLS[5])).statusCode).toBe(201);
    // Upgrading lifts the limit to 20; Enterprise is unlimited.
    await setTier(t, ws.id, 'advanced');
    expect((await install(ws.admin.token, STANDARD_SKILLS[6])).statusCode).toBe(201);
    const list = await t.request({ method: 'GET', url: '/api/v1/marketplace/installed', token: ws.admin.token });
    expect(list.json()).toMatchObject({ activeCount: 6, limit: 20 });
  });

  it('is race-safe: concurrent installs at the edge of the limit never exceed it', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    for (const slug of STANDARD_SKILLS.slice(0, 3)) await install(ws.admin.token, slug);
    const results = await Promise.all(STANDARD_SKILLS.slice(3).map((slug) => install(ws.admin.token, slug)));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 201, 409, 409]);
    const list = await t.request({ method: 'GET', url: '/api/v1/marketplace/installed', token: ws.admin.token });
    expect(list.json().activeCount).toBe(5);
  });
});
