import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleToolCall } from '../../../packages/skill-sdk/src/handler.js';
import type { SkillManifest } from '../../../packages/skill-sdk/src/manifest.js';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createWorkspace, setTier, type TestWorkspace } from '../../../test/helpers/factories.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../../test/helpers/https-receiver.js';
import { loadTestConfig } from '../../config.js';

let t: TestApp;
let receiver: HttpsReceiver;
let a: TestWorkspace;
let b: TestWorkspace;
let secret: string;

const manifest = (version: string, extra: Partial<SkillManifest> = {}): Partial<SkillManifest> => ({
  slug: 'shift-notes',
  name: 'Shift notes',
  summary: 'Turns handover notes into a checklist',
  description: 'Private skill of the test clinic.',
  category: 'clinical',
  version,
  publisher: 'Test Clinic IT',
  scopes: [{ scope: 'patients:read', reason: 'Reads the patient named in the note' }],
  triggers: ['handover'],
  tools: [
    {
      name: 'checklist',
      description: 'Make a checklist from a handover note',
      inputSchema: { type: 'object', properties: { note: { type: 'string', minLength: 1 } }, required: ['note'] },
      requiredScopes: ['patients:read'],
    },
  ],
  ...extra,
});

const register = (ws: TestWorkspace, body: unknown, token = ws.admin.token) =>
  t.request({ method: 'POST', url: '/api/v1/marketplace/skills', token, payload: body as object });
const invoke = (ws: TestWorkspace, tool: string, input: unknown) =>
  t.request({
    method: 'POST',
    url: '/api/v1/skills/invoke',
    token: ws.admin.token,
    payload: { slug: 'shift-notes', tool, input },
  });
const install = (ws: TestWorkspace, scopes: string[]) =>
  t.request({
    method: 'POST',
    url: '/api/v1/marketplace/install',
    token: ws.admin.token,
    payload: { slug: 'shift-notes', scopes },
  });

beforeAll(async () => {
  t = await createTestApp({ webhooks: { ...loadTestConfig().webhooks, allowCidrs: ['127.0.0.0/8'] } });
  receiver = await startHttpsReceiver();
  a = await createWorkspace(t, { tier: 'enterprise', name: 'Clinic A' });
  b = await createWorkspace(t, { tier: 'enterprise', name: 'Clinic B' });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe('private skills (Enterprise)', () => {
  it('refuses lower tiers, members, invalid manifests and unsafe endpoints', async () => {
    const adv = await createWorkspace(t, { tier: 'advanced' });
    const lower = await register(adv, { manifest: manifest('1.0.0'), endpoint: `${receiver.url}/skill` });
    expect(lower.statusCode).toBe(403);
    expect(lower.json()).toMatchObject({ code: 'tier_required', feature: 'custom_skills', requiredTier: 'enterprise' });
    const member = await addMember(t, a);
    expect((await register(a, { manifest: manifest('1.0.0'), endpoint: receiver.url }, member.token)).statusCode).toBe(
      403,
    );
    const invalid = await register(a, {
      manifest: {
        ...manifest('1.0.0'),
        tools: [{ name: 'bad name', description: 'x', inputSchema: {}, requiredScopes: ['billing:write'] }],
      },
      endpoint: receiver.url,
    });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().code).toBe('invalid_manifest');
    expect(invalid.json().errors.map((e: { path: string }) => e.path)).toEqual(
      expect.arrayContaining([
        'body.manifest.tools.0.name',
        'body.manifest.tools.0.inputSchema',
        'body.manifest.tools.0.requiredScopes.0',
      ]),
    );
    const http = await register(a, { manifest: manifest('1.0.0'), endpoint: 'http://example.com/skill' });
    expect(http.json()).toMatchObject({ code: 'unsafe_url', reason: 'scheme' });
    const metadata = await register(a, { manifest: manifest('1.0.0'), endpoint: 'https://169.254.169.254/latest' });
    expect(metadata.json()).toMatchObject({ code: 'unsafe_url', reason: 'blocked_address' });
    const builtin = await register(a, {
      manifest: { ...manifest('1.0.0'), slug: 'billing-codes' },
      endpoint: receiver.url,
    });
    expect(builtin.statusCode).toBe(409);
  });

  it('registers a skill visible only in its workspace, with a whsec_ secret shown once', async () => {
    const res = await register(a, { manifest: manifest('1.0.0'), endpoint: `${receiver.url}/skill` });
    expect(res.statusCode, res.body).toBe(201);
    secret = res.json().secret;
    expect(secret).toMatch(/^whsec_/);
    expect(res.json().skill).toMatchObject({
      slug: 'shift-notes',
      visibility: 'private',
      minTier: 'enterprise',
      skillId: expect.stringMatching(/^skl_/),
    });
    const list = await t.request({ method: 'GET', url: '/api/v1/marketplace/skills', token: a.admin.token });
    expect(list.json().items).toHaveLength(1);
    expect(list.body).not.toContain(secret);

    const catalogA = await t.request({
      method: 'GET',
      url: '/api/v1/marketplace/catalog?q=shift',
      token: a.admin.token,
    });
    expect(catalogA.json().items.map((m: { slug: string }) => m.slug)).toEqual(['shift-notes']);
    const catalogB = await t.request({
      method: 'GET',
      url: '/api/v1/marketplace/catalog?q=shift',
      token: b.admin.token,
    });
    expect(catalogB.json().items).toEqual([]);
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/marketplace/module/shift-notes', token: b.admin.token }))
        .statusCode,
    ).toBe(404);
    expect((await install(b, ['patients:read'])).statusCode).toBe(404);
  });

  it('runs tools by a signed HTTPS call that the SDK and Standard Webhooks verify', async () => {
    receiver.respondWith(async (req) => {
      const answer = await handleToolCall(
        {
          secret,
          manifest: manifest('1.0.0') as SkillManifest,
          tools: {
            checklist: (input) =>
              String(input.note)
                .split('.')
                .map((s) => s.trim())
                .filter(Boolean),
          },
        },
        req.headers,
        req.body,
      );
      return {
        status: answer.status,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(answer.body),
      };
    });
    expect((await install(a, ['patients:read'])).statusCode).toBe(201);
    const before = receiver.requests.length;
    const res = await invoke(a, 'checklist', { note: 'Check vitals. Call family.' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toEqual(['Check vitals', 'Call family']);
    const sent = receiver.requests[before];
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/skill');
    expect(sent.headers['x-service-signature']).toBe(sent.headers['webhook-signature']);
    expect(new Webhook(secret).verify(sent.body, sent.headers)).toMatchObject({
      type: 'skill.tool_call',
      tool: 'checklist',
      workspace_id: a.id,
      caller: { userId: a.admin.userId },
      input: { note: 'Check vitals. Call family.' },
    });
    // Input is validated before anything leaves the building.
    expect((await invoke(a, 'checklist', { note: '' })).statusCode).toBe(422);
    expect(receiver.requests.length).toBe(before + 1);
  });

  it('endpoint failures are 502 problems and error audit rows', async () => {
    receiver.respondWith({ status: 500, body: 'boom' });
    const res = await invoke(a, 'checklist', { note: 'x' });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'upstream_failed', upstreamStatus: 500 });
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=skill_invocation', token: a.admin.token });
    expect(audit.json().items[0]).toMatchObject({
      slug: 'shift-notes',
      outcome: 'error',
      errorCode: 'upstream_failed',
    });
  });

  it('a newer version that adds scopes needs the admin to grant them again', async () => {
    receiver.respondWith({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"result":"ok"}' });
    const v2 = manifest('1.1.0', {
      scopes: [
        { scope: 'patients:read', reason: 'Reads the patient named in the note' },
        { scope: 'billing:read', reason: 'Adds the coverage to the checklist' },
      ],
    });
    v2.tools = [
      { ...v2.tools![0], requiredScopes: ['patients:read', 'billing:read'] },
      { name: 'claims', description: 'List claims', inputSchema: { type: 'object' }, requiredScopes: ['billing:read'] },
    ];
    const same = await register(a, { manifest: manifest('1.0.0'), endpoint: `${receiver.url}/skill` });
    expect(same.statusCode).toBe(409);
    const updated = await register(a, { manifest: v2, endpoint: `${receiver.url}/skill` });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json().secret).toBeUndefined();

    const installed = await t.request({ method: 'GET', url: '/api/v1/marketplace/installed', token: a.admin.token });
    expect(installed.json().items[0]).toMatchObject({
      version: '1.0.0',
      updateAvailable: true,
      latestVersion: '1.1.0',
      newScopes: ['billing:read'],
    });
    // The pinned install has no `claims` tool; the changed tool now needs an ungranted scope.
    expect((await invoke(a, 'claims', {})).statusCode).toBe(404);
    const denied = await invoke(a, 'checklist', { note: 'x' });
    expect(denied.json()).toMatchObject({ code: 'scope_denied', missingScopes: ['billing:read'] });

    const regrant = await install(a, ['patients:read', 'billing:read']);
    expect(regrant.statusCode).toBe(200);
    expect(regrant.json().install).toMatchObject({ version: '1.1.0', updateAvailable: false });
    expect((await invoke(a, 'claims', {})).json()).toEqual({ result: 'ok', invocationId: expect.any(String) });
    expect((await invoke(a, 'checklist', { note: 'x' })).statusCode).toBe(200);
  });

  it('stay Enterprise-only whatever the manifest claims, also after a downgrade', async () => {
    const ws = await createWorkspace(t, { tier: 'enterprise' });
    const saved = await register(ws, {
      manifest: manifest('1.0.0', { minTier: 'free' }),
      endpoint: `${receiver.url}/skill`,
    });
    expect(saved.statusCode, saved.body).toBe(201);
    expect((await install(ws, ['patients:read'])).statusCode).toBeLessThan(300);
    await setTier(t, ws.id, 'advanced');
    const refused = await invoke(ws, 'checklist', { note: 'handover' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('tier_required');
  });

  it('deleting the skill uninstalls it and removes its tools', async () => {
    const del = await t.request({
      method: 'DELETE',
      url: '/api/v1/marketplace/skills/shift-notes',
      token: a.admin.token,
    });
    expect(del.statusCode).toBe(204);
    expect((await invoke(a, 'checklist', { note: 'x' })).statusCode).toBe(404);
    const installed = await t.request({ method: 'GET', url: '/api/v1/marketplace/installed', token: a.admin.token });
    expect(installed.json().items).toEqual([]);
    const actions = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: a.admin.token });
    expect(actions.json().items.map((r: { action: string }) => r.action)).toEqual(
      expect.arrayContaining([
        'marketplace.private_skill.create',
        'marketplace.private_skill.update',
        'marketplace.private_skill.delete',
      ]),
    );
  });
});
