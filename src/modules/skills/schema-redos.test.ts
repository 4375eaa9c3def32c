// Issue 9 §3 (HIGH): a private skill's inputSchema `pattern` must not stall the process for other
// workspaces, and compiled validators are cached per skill version.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { type HttpsReceiver, startHttpsReceiver } from '../../../test/helpers/https-receiver.js';
import { loadTestConfig } from '../../config.js';
import { toolValidators } from './validators.js';

const EVIL = '^(a+)+$';
// 13.7 s of blocked event loop with V8's backtracking engine (issue 9).
const evilInput = `${'a'.repeat(30)}!`;

let t: TestApp;
let receiver: HttpsReceiver;
let a: TestWorkspace;
let b: TestWorkspace;

const manifest = (version: string, pattern = EVIL) => ({
  slug: 'code-check',
  name: 'Code check',
  summary: 'Checks a code',
  description: 'Private skill with a pattern-constrained input.',
  category: 'admin',
  version,
  publisher: 'Clinic A IT',
  scopes: [],
  tools: [
    {
      name: 'lookup',
      description: 'Look up a code',
      inputSchema: { type: 'object', properties: { code: { type: 'string', pattern } }, required: ['code'] },
      requiredScopes: [],
    },
  ],
});

const register = (version: string, pattern?: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/marketplace/skills',
    token: a.admin.token,
    payload: { manifest: manifest(version, pattern), endpoint: `${receiver.url}/skill` },
  });
const install = () =>
  t.request({
    method: 'POST',
    url: '/api/v1/marketplace/install',
    token: a.admin.token,
    payload: { slug: 'code-check', scopes: [] },
  });
const invoke = (code: string) =>
  t.request({
    method: 'POST',
    url: '/api/v1/skills/invoke',
    token: a.admin.token,
    payload: { slug: 'code-check', tool: 'lookup', input: { code } },
  });

beforeAll(async () => {
  t = await createTestApp({ webhooks: { ...loadTestConfig().webhooks, allowCidrs: ['127.0.0.0/8'] } });
  receiver = await startHttpsReceiver();
  receiver.respondWith({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"result":"found"}' });
  a = await createWorkspace(t, { tier: 'enterprise', name: 'Clinic A' });
  b = await createWorkspace(t, { tier: 'standard', name: 'Clinic B' });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe('private skill schemas (ReDoS)', () => {
  it('refuses at upload a pattern the linear-time engine cannot run, naming tool and pattern', async () => {
    const res = await register('1.0.0', '^(a)\\1$');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'invalid_manifest',
      errors: [
        {
          path: 'body.manifest.tools.0.inputSchema',
          message: expect.stringMatching(
            /^Tool lookup: invalid JSON Schema: pattern "\^\(a\)\\\\1\$" is not supported/,
          ),
        },
      ],
    });
  });

  it('refuses at upload schemas whose validation is not linear (pairwise uniqueItems)', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/skills',
      token: a.admin.token,
      payload: {
        manifest: {
          ...manifest('1.0.0'),
          tools: [
            {
              name: 'tags',
              description: 'Tags',
              inputSchema: { type: 'object', properties: { tags: { type: 'array', uniqueItems: true } } },
              requiredScopes: [],
            },
          ],
        },
        endpoint: `${receiver.url}/skill`,
      },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].message).toMatch(/^Tool tags: uniqueItems needs/);
  });

  it("answers the catastrophic input with a 422 while another workspace's request is served", async () => {
    expect((await register('1.0.0')).statusCode).toBe(201);
    expect((await install()).statusCode).toBe(201);
    expect((await invoke('aaa')).json()).toMatchObject({ result: 'found' });
    const calls = receiver.requests.length;

    // The longest gap between 5 ms timer ticks, i.e. the longest time the event loop was blocked.
    let last = performance.now();
    let longestStall = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestStall = Math.max(longestStall, now - last);
      last = now;
    }, 5);
    // Workspace B sends a GET /me every 10 ms while A's invoke runs (a few are always in flight).
    const meLatencies: number[] = [];
    const meStatuses: number[] = [];
    const meRequests: Promise<void>[] = [];
    const sendMe = () => {
      const started = performance.now();
      meRequests.push(
        t.request({ method: 'GET', url: '/api/v1/me', token: b.admin.token }).then((res) => {
          meLatencies.push(performance.now() - started);
          meStatuses.push(res.statusCode);
        }),
      );
    };
    sendMe();
    const sender = setInterval(() => meRequests.length < 500 && sendMe(), 10);
    const evil = await invoke(evilInput);
    clearInterval(sender);
    await Promise.all(meRequests);
    await new Promise((resolve) => setTimeout(resolve, 20));
    clearInterval(ticker);

    expect(evil.statusCode).toBe(422);
    expect(evil.json()).toMatchObject({
      code: 'invalid_input',
      errors: [{ path: 'input.code', message: `must match pattern "${EVIL}"` }],
    });
    expect(meStatuses.length).toBeGreaterThan(0);
    expect(meStatuses.every((status) => status === 200)).toBe(true);
    // Milliseconds here; 13 s for both with V8's backtracking engine.
    expect(longestStall).toBeLessThan(1000);
    expect(Math.max(...meLatencies)).toBeLessThan(1000);
    expect(receiver.requests.length).toBe(calls);
  });

  it('compiles each skill version once, and a new version once more', async () => {
    await invoke('aaa');
    const warm = toolValidators.stats();
    for (let i = 0; i < 5; i++) expect((await invoke(i % 2 ? 'aaaa' : evilInput)).statusCode).toBe(i % 2 ? 200 : 422);
    const after = toolValidators.stats();
    expect(after.misses).toBe(warm.misses);
    expect(after.hits).toBeGreaterThanOrEqual(warm.hits + 5);

    // 1.1.0 is the catalog's current version while the install stays pinned to 1.0.0: one compile.
    expect((await register('1.1.0', '^(b+)+$')).statusCode).toBe(200);
    expect((await invoke('aaaa')).statusCode).toBe(422);
    expect(toolValidators.stats().misses).toBe(after.misses + 1);
    expect((await install()).statusCode).toBe(200);
    expect((await invoke('bbbb')).statusCode).toBe(200);
    expect((await invoke('bbbb')).statusCode).toBe(200);
    expect(toolValidators.stats().misses).toBe(after.misses + 1);
  });
});
