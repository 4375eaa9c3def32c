import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_CASES } from './cross-tenant/index.js';
import type { CrossTenantRequest } from './cross-tenant/types.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createWorkspace, type TestWorkspace } from './helpers/factories.js';

let t: TestApp;
let a: TestWorkspace;
let b: TestWorkspace;
const exercised: CrossTenantRequest[] = [];

beforeAll(async () => {
  t = await createTestApp();
  a = await createWorkspace(t, { tier: 'enterprise', name: 'Tenant A' });
  b = await createWorkspace(t, { tier: 'enterprise', name: 'Tenant B' });
});
afterAll(async () => t?.close());

const send = (req: CrossTenantRequest, token: string) =>
  t.request({ method: req.method, url: req.url, payload: req.payload as object, token });

describe('workspace B can neither read nor change workspace A', () => {
  for (const testCase of ALL_CASES) {
    it(testCase.name, async () => {
      const ids = await testCase.setup(t, a);
      const before = await Promise.all((testCase.unchanged?.(ids) ?? []).map((r) => send(r, a.admin.token)));
      for (const req of testCase.denied(ids)) {
        exercised.push(req);
        const res = await send(req, b.admin.token);
        expect([403, 404], `${req.method} ${req.url} → ${res.statusCode} ${res.body}`).toContain(res.statusCode);
        for (const id of Object.values(ids)) expect(res.body).not.toContain(id);
      }
      for (const req of testCase.lists?.(ids) ?? []) {
        exercised.push(req);
        const res = await send(req, b.admin.token);
        expect(res.statusCode, `${req.method} ${req.url}: ${res.body}`).toBeLessThan(300);
        for (const id of Object.values(ids)) expect(res.body, `${req.url} leaks ${id}`).not.toContain(id);
      }
      const after = await Promise.all((testCase.unchanged?.(ids) ?? []).map((r) => send(r, a.admin.token)));
      after.forEach((res, i) => {
        expect(res.statusCode).toBe(200);
        expect(res.body).toBe(before[i].body);
      });
    });
  }

  it('covers every tenant route that addresses a resource by id', () => {
    const toRegex = (url: string) => new RegExp(`^${url.replace(/:[A-Za-z_]+/g, '[^/?]+')}(\\?.*)?$`);
    const missing = t.app.atrium.routes
      .filter((r) => r.url.startsWith('/api/v1/') && r.url.includes(':'))
      .filter((r) => r.auth !== 'operator' && r.auth !== 'public' && r.auth !== 'cron')
      .filter((r) => !exercised.some((e) => e.method === r.method && toRegex(r.url).test(e.url)))
      .map((r) => `${r.method} ${r.url}`);
    expect(missing, 'add a cross-tenant case for these routes').toEqual([]);
  });
});
