import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Tier } from '../../src/platform/context.js';
import type { TestApp } from './app.js';

export interface TestUser {
  userId: string;
  token: string;
  email: string;
}

export interface TestWorkspace {
  id: string;
  name: string;
  tier: Tier;
  organizationId: string | null;
  admin: TestUser;
}

const unique = () => randomBytes(4).toString('hex');

/**
 * A password strong enough for the policy. Factories set it only when asked (`password:
 * TEST_PASSWORD`): the strength check loads ~40 MB of dictionaries, which most test files never need.
 */
export const TEST_PASSWORD = 'kettle-orbit-maple-91';

export async function createOrganization(t: TestApp, name = `Org ${unique()}`): Promise<{ id: string; name: string }> {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/operator/organizations',
    token: t.config.operatorToken,
    payload: { name },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** A workspace with its first admin (give `password` to sign in as them). */
export async function createWorkspace(
  t: TestApp,
  opts: { tier?: Tier; name?: string; organizationId?: string; adminEmail?: string; password?: string } = {},
): Promise<TestWorkspace> {
  const email = opts.adminEmail ?? `admin-${unique()}@example.test`;
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/operator/workspaces',
    token: t.config.operatorToken,
    payload: {
      name: opts.name ?? `Workspace ${unique()}`,
      tier: opts.tier ?? 'enterprise',
      organizationId: opts.organizationId,
      admin: { email, name: 'Test Admin', password: opts.password },
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json();
  return { ...body.workspace, admin: { ...body.admin, email } };
}

export async function addMember(
  t: TestApp,
  workspace: { id: string },
  opts: { role?: 'admin' | 'member'; isProvider?: boolean; name?: string; email?: string; password?: string } = {},
): Promise<TestUser> {
  const email = opts.email ?? `member-${unique()}@example.test`;
  const res = await t.request({
    method: 'POST',
    url: `/api/v1/operator/workspaces/${workspace.id}/members`,
    token: t.config.operatorToken,
    payload: {
      email,
      name: opts.name ?? 'Test Member',
      role: opts.role ?? 'member',
      isProvider: opts.isProvider ?? false,
      password: opts.password,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { ...res.json(), email };
}

export async function createPatient(
  t: TestApp,
  token: string,
  body: Record<string, unknown> = {},
): Promise<{ id: string; givenName: string; familyName: string }> {
  const res = await t.request({
    method: 'POST',
    url: '/api/v1/patients',
    token,
    payload: { givenName: 'Ada', familyName: `Lovelace-${unique()}`, ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

export async function setTier(t: TestApp, workspaceId: string, tier: Tier): Promise<void> {
  const res = await t.request({
    method: 'PATCH',
    url: `/api/v1/operator/workspaces/${workspaceId}`,
    token: t.config.operatorToken,
    payload: { tier },
  });
  expect(res.statusCode, res.body).toBe(200);
}

/** Reads the mail emulator's mailbox over HTTP, waiting until `count` messages to `to` arrived. */
export async function waitForMail(
  t: TestApp,
  to: string,
  count = 1,
  timeoutMs = 10_000,
): Promise<
  {
    subject: string;
    text: string;
    to: string[];
    attachments: { filename: string; contentType: string; content: string }[];
  }[]
> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${t.baseUrl}/_emulators/mail/messages?to=${encodeURIComponent(to)}`);
    const body = (await res.json()) as { items: [] };
    if (body.items.length >= count || Date.now() > deadline) return body.items;
    await new Promise((r) => setTimeout(r, 100));
  }
}
