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

/** The same request with each of A's ids replaced by a look-alike that exists nowhere. */
function withGhostIds(req: CrossTenantRequest, ids: Record<string, string>): CrossTenantRequest {
  let text = JSON.stringify({ url: req.url, payload: req.payload ?? null });
  for (const id of Object.values(ids)) {
    const ghost = `${id.slice(0, Math.max(1, id.length - 6))}${'zq9x7w'.slice(0, Math.min(6, id.length - 1))}`;
    text = text.split(id).join(ghost);
  }
  const parsed = JSON.parse(text) as { url: string; payload: unknown };
  return { ...req, url: parsed.url, payload: parsed.payload ?? undefined };
}

const codeOf = (body: string) => {
  try {
    return (JSON.parse(body) as { code?: string }).code;
  } catch {
    return undefined;
  }
};

const itemCount = (body: string) => {
  try {
    return (JSON.parse(body) as { items?: unknown[] }).items?.length;
  } catch {
    return undefined;
  }
};

describe('workspace B can neither read nor change workspace A', () => {
  for (const testCase of ALL_CASES) {
    it(testCase.name, async () => {
      const ids = await testCase.setup(t, a);
      const own = (await testCase.attackerSetup?.(t, b)) ?? {};
      const before = await Promise.all((testCase.unchanged?.(ids) ?? []).map((r) => send(r, a.admin.token)));
      for (const req of testCase.denied(ids, own)) {
        exercised.push(req);
        const what = `${req.method} ${req.url} ${req.payload ? JSON.stringify(req.payload) : ''}`;
        const expected = req.expect ?? { status: 404, code: 'not_found' };
        const res = await send(req, b.admin.token);
        expect({ status: res.statusCode, code: codeOf(res.body) }, `${what} → ${res.body}`).toEqual(expected);
        // A's ids the request did not carry itself must not appear (echoing the caller's own input is no leak).
        const sent = JSON.stringify(req);
        for (const id of Object.values(ids).filter((v) => !sent.includes(v))) {
          expect(res.body, `${what} leaks ${id}`).not.toContain(id);
        }
        // Indistinguishable from an id that exists nowhere: same status, same code.
        const ghost = await send(withGhostIds(req, ids), b.admin.token);
        expect({ status: ghost.statusCode, code: codeOf(ghost.body) }, `${what} with unknown ids`).toEqual(expected);
      }
      for (const req of testCase.lists?.(ids) ?? []) {
        exercised.push(req);
        const res = await send(req, b.admin.token);
        expect(res.statusCode, `${req.method} ${req.url}: ${res.body}`).toBeLessThan(300);
        for (const id of Object.values(ids)) expect(res.body, `${req.url} leaks ${id}`).not.toContain(id);
        // Filtering by A's id answers as filtering by an id that exists nowhere.
        const ghost = await send(withGhostIds(req, ids), b.admin.token);
        expect([ghost.statusCode, itemCount(ghost.body)], `${req.url} with unknown ids`).toEqual([
          res.statusCode,
          itemCount(res.body),
        ]);
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
