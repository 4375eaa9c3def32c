// API tokens record when they were last used (to about a minute), and both token lists say it: the caller's own
// (GET /auth/tokens) and the admin's (GET /admin/tokens). Tokens of one name are told apart by it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

type Listed = { id: string; name: string; lastUsedAt: string | null };
const list = async (url: string) =>
  (await t.request({ method: 'GET', url, token: ws.admin.token })).json().items as Listed[];

describe('API token last use', () => {
  it('is null until a request carries the token, then the time of that request, in both lists', async () => {
    const create = () =>
      t.request({ method: 'POST', url: '/api/v1/auth/tokens', token: ws.admin.token, payload: { name: 'Export' } });
    const used = (await create()).json() as { id: string; token: string };
    const idle = (await create()).json() as { id: string };
    const before = Date.now();
    expect((await t.request({ method: 'GET', url: '/api/v1/me', token: used.token })).statusCode).toBe(200);

    for (const url of ['/api/v1/auth/tokens', '/api/v1/admin/tokens']) {
      const items = await list(url);
      const usedAt = items.find((i) => i.id === used.id)?.lastUsedAt;
      expect(usedAt, url).toBeTruthy();
      expect(Math.abs(Date.parse(usedAt as string) - before)).toBeLessThan(60_000);
      expect(items.find((i) => i.id === idle.id)).toMatchObject({ name: 'Export', lastUsedAt: null });
    }
  });
});
