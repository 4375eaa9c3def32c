import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compareVersions,
  createSkillHandler,
  createSkillHarness,
  type SkillManifest,
  signRequest,
  toFunctionTools,
  toMcpTools,
  validateManifest,
  verifyRequest,
} from './index.js';

const manifest: SkillManifest = {
  slug: 'shift-notes',
  skillId: 'skl_shift_notes',
  name: 'Shift notes',
  summary: 'Summarises handover notes',
  description: 'Turns handover notes into a checklist.',
  category: 'clinical',
  version: '1.2.0',
  publisher: 'Example Clinic',
  minTier: 'enterprise',
  visibility: 'private',
  scopes: [{ scope: 'patients:read', reason: 'Reads the patient named in the note' }],
  tools: [
    {
      name: 'checklist',
      description: 'Make a checklist from a note',
      inputSchema: { type: 'object', properties: { note: { type: 'string', minLength: 1 } }, required: ['note'] },
      requiredScopes: [],
    },
    {
      name: 'lookup',
      description: 'Look a patient up',
      inputSchema: { type: 'object', properties: { patientId: { type: 'string' } }, required: ['patientId'] },
      requiredScopes: ['patients:read'],
    },
  ],
};
const secret = `whsec_${Buffer.from('s'.repeat(32)).toString('base64')}`;
const checklist = (input: Record<string, unknown>) =>
  String(input.note)
    .split('.')
    .map((s) => s.trim())
    .filter(Boolean);

describe('manifest validation', () => {
  it('accepts a valid manifest and converts it to MCP and function-calling tools', () => {
    expect(validateManifest(manifest)).toEqual({ ok: true, manifest });
    expect(toMcpTools(manifest)[0]).toEqual({
      name: 'checklist',
      description: 'Make a checklist from a note',
      inputSchema: manifest.tools[0].inputSchema,
    });
    expect(toFunctionTools(manifest)[1].function.parameters).toBe(manifest.tools[1].inputSchema);
  });

  it('reports every problem with a path', () => {
    const bad = {
      ...manifest,
      slug: 'Bad Slug',
      version: 'v1',
      scopes: [{ scope: 'root:all', reason: 'x' }],
      tools: [
        { name: 'has space', description: 'd', inputSchema: { type: 'string' }, requiredScopes: ['billing:write'] },
        {
          name: 'ok',
          description: 'd',
          inputSchema: { type: 'object', properties: { a: { type: 'nope' } } },
          requiredScopes: [],
        },
      ],
    };
    const check = validateManifest(bad);
    expect(check.ok).toBe(false);
    const paths = check.ok ? [] : check.errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'slug',
        'version',
        'scopes.0.scope',
        'tools.0.name',
        'tools.0.inputSchema',
        'tools.0.requiredScopes.0',
        'tools.1.inputSchema',
      ]),
    );
  });

  it('orders versions semantically', () => {
    expect(compareVersions('1.10.0', '1.9.9')).toBeGreaterThan(0);
    expect(compareVersions('1.0.0-beta', '1.0.0')).toBeLessThan(0);
    expect(compareVersions('2.0.0', '2.0.0')).toBe(0);
  });
});

describe('request verification', () => {
  it('accepts what Standard Webhooks libraries sign, and rejects tampering and stale requests', () => {
    const body = '{"tool":"checklist"}';
    const at = new Date();
    const headers = {
      'webhook-id': 'inv_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('inv_1', at, body),
    };
    expect(verifyRequest(secret, headers, body)).toBe('inv_1');
    expect(() => verifyRequest(secret, headers, `${body} `)).toThrow(/signature/);
    expect(() => verifyRequest(secret, { ...headers, 'webhook-signature': undefined }, body)).toThrow(/Missing/);
    const stale = signRequest(secret, 'inv_2', body, new Date(Date.now() - 10 * 60_000));
    expect(() => verifyRequest(secret, stale, body)).toThrow(/too old/);
  });
});

describe('local harness', () => {
  let server: ReturnType<typeof createServer>;
  let url: string;
  beforeAll(async () => {
    server = createServer(
      createSkillHandler({ secret, manifest, tools: { checklist, lookup: (i) => ({ id: i.patientId }) } }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/skill`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('checks scopes and input like the dispatcher, then runs the tool in-process', async () => {
    const harness = createSkillHarness({ manifest, grantedScopes: [], tools: { checklist } });
    expect(await harness.invoke('checklist', { note: 'Check vitals. Call family.' })).toEqual({
      outcome: 'ok',
      status: 200,
      result: ['Check vitals', 'Call family'],
    });
    expect(await harness.invoke('lookup', { patientId: 'pat_1' })).toMatchObject({
      status: 403,
      code: 'scope_denied',
      requiredScopes: ['patients:read'],
      grantedScopes: [],
    });
    expect(await harness.invoke('checklist', { note: '' })).toMatchObject({
      status: 422,
      errors: [{ path: 'input.note' }],
    });
    expect(await harness.invoke('missing', {})).toMatchObject({ status: 404 });
  });

  it('calls a real endpoint with a signed request that the SDK handler verifies', async () => {
    const good = createSkillHarness({ manifest, endpoint: { url, secret } });
    expect(await good.invoke('lookup', { patientId: 'pat_9' })).toEqual({
      outcome: 'ok',
      status: 200,
      result: { id: 'pat_9' },
    });
    const wrongSecret = createSkillHarness({
      manifest,
      endpoint: { url, secret: `whsec_${Buffer.from('x'.repeat(32)).toString('base64')}` },
    });
    expect(await wrongSecret.invoke('checklist', { note: 'a' })).toMatchObject({
      status: 502,
      detail: 'Endpoint answered 401',
    });
  });
});
