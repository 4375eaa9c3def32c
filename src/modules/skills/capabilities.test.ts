import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createWorkspace } from '../../../test/helpers/factories.js';
import type { RequestContext } from '../../platform/context.js';
import { buildCapabilities } from './capabilities.js';
import { BUILTIN_SKILLS } from './catalog/index.js';

let t: TestApp;
let ctx: RequestContext;
beforeAll(async () => {
  t = await createTestApp();
  const ws = await createWorkspace(t, { tier: 'enterprise' });
  ctx = {
    workspaceId: ws.id,
    organizationId: null,
    tier: 'enterprise',
    userId: ws.admin.userId,
    role: 'admin',
    isProvider: false,
    requestId: 'req_test',
    log: t.app.log,
    via: 'token',
  };
});
afterAll(async () => t?.close());

const skill = { slug: 'x', skillId: 'skl_x', version: '1.0.0' };

describe('capability object', () => {
  it('holds a client only for granted scopes', () => {
    const none = buildCapabilities(t.app.atrium, ctx, skill, []);
    expect(none.patients).toBeUndefined();
    expect(none.patientsWriter).toBeUndefined();
    expect(none.billing).toBeUndefined();
    expect(none.billingWriter).toBeUndefined();

    const read = buildCapabilities(t.app.atrium, ctx, skill, ['patients:read']);
    expect(read.patients).toBeDefined();
    expect(read.patientsWriter).toBeUndefined();
    expect(read.billing).toBeUndefined();

    const write = buildCapabilities(t.app.atrium, ctx, skill, ['patients:write', 'billing:write']);
    expect(write.patients).toBeUndefined();
    expect(write.patientsWriter).toBeDefined();
    expect(write.billingWriter).toBeDefined();
    expect(Object.isFrozen(write)).toBe(true);
    expect(() => {
      (write as { patients?: unknown }).patients = {};
    }).toThrow();
  });

  it('a built-in tool run without its scope fails closed (scope_denied), it cannot reach the data', async () => {
    const brief = BUILTIN_SKILLS.find((s) => s.manifest.slug === 'telehealth-brief')!;
    const caps = buildCapabilities(t.app.atrium, ctx, skill, []);
    await expect(brief.tools.precall_brief({ patientId: 'pat_x' }, caps)).rejects.toMatchObject({
      code: 'scope_denied',
    });
    const lookup = BUILTIN_SKILLS.find((s) => s.manifest.slug === 'patient-lookup')!;
    await expect(lookup.tools.find_patient({ query: 'a' }, caps)).rejects.toMatchObject({ code: 'scope_denied' });
  });

  it('every built-in manifest declares a reason for each scope and SKILL.md instructions', () => {
    expect(BUILTIN_SKILLS.length).toBeGreaterThanOrEqual(8);
    for (const s of BUILTIN_SKILLS) {
      expect(s.content).toMatch(/^# /);
      for (const scope of s.manifest.scopes) expect(scope.reason.length).toBeGreaterThan(10);
    }
  });
});
