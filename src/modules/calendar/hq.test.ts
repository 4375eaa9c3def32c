// The HQ view (Enterprise, contract §5.2 scope=organization): every workspace of the caller's
// organization where the caller is a member, events tagged with their workspace, each token read
// audited in the workspace that owns the token; nothing from workspaces the caller is not in.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { addMember, createOrganization, createWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const WINDOW = 'timeMin=2026-12-07T00:00:00Z&timeMax=2026-12-14T00:00:00Z';

describe('HQ view', () => {
  it('merges the workspaces the caller belongs to, tags each event, audits tokens where they live', async () => {
    const org = await createOrganization(t);
    const north = await createWorkspace(t, { tier: 'enterprise', organizationId: org.id });
    const south = await createWorkspace(t, { tier: 'enterprise', organizationId: org.id });
    const hidden = await createWorkspace(t, { tier: 'enterprise', organizationId: org.id });
    const hq = await addMember(t, north, { role: 'admin', name: 'HQ Manager', email: `hq-${org.id}@example.test` });
    const inSouth = await addMember(t, south, { role: 'member', email: `hq-${org.id}@example.test` });
    expect(inSouth.userId).toBe(hq.userId);

    for (const [ws, name] of [
      [north, 'North visit'],
      [south, 'South visit'],
      [hidden, 'Hidden visit'],
    ] as const) {
      const cal = await connectCalendar(t, ws.admin.token, 'google', `${name.split(' ')[0]}-${org.id}@google.example`);
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: {
          calendar: cal.calendarId,
          draft: { title: name, start: '2026-12-08T15:00:00Z', end: '2026-12-08T16:00:00Z' },
        },
      });
      expect(res.statusCode, res.body).toBe(201);
    }

    const res = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?${WINDOW}&scope=organization`,
      token: hq.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as { title: string; workspaceId: string }[];
    expect(items.map((e) => [e.title, e.workspaceId]).sort()).toEqual([
      ['North visit', north.id],
      ['South visit', south.id],
    ]);
    const audited = await withSystem(t.app.atrium.db, (tx) =>
      queryRows<{ workspace_id: string }>(
        tx,
        sql`SELECT workspace_id FROM audit_log WHERE kind = 'token_access' AND actor_user_id = ${hq.userId}
             AND data->>'reason' = 'calendar.events.list'`,
      ),
    );
    expect(audited.map((r) => r.workspace_id).sort()).toEqual([north.id, south.id].sort());

    const own = await t.request({ method: 'GET', url: `/api/v1/calendar/events?${WINDOW}`, token: hq.token });
    expect(own.json().items.map((e: { title: string }) => e.title)).toEqual(['North visit']);
  });

  it('is Enterprise only', async () => {
    const ws = await createWorkspace(t, { tier: 'advanced' });
    const res = await t.request({
      method: 'GET',
      url: `/api/v1/calendar/events?${WINDOW}&scope=organization`,
      token: ws.admin.token,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'tier_required', requiredTier: 'enterprise' });
  });
});
