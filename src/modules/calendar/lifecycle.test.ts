// What happens to calendars when the people and accounts behind them go: a removed member's
// accounts are disconnected in the removal (contract §2a: their tokens stop working at once), and a
// connection flow they started before it cannot finish afterwards.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { addMember, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { saveConnection } from '../../platform/oauth/index.js';
import { oauthDeps } from './providers/index.js';

let t: TestApp;
let ws: TestWorkspace;

const api = (method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, token = ws.admin.token, payload?: unknown) =>
  t.request({ method, url: `/api/v1${url}`, token, payload: payload as Record<string, unknown> | undefined });

const connectionRows = (workspaceId: string, userId: string) =>
  withSystem(t.app.atrium.db, (tx) =>
    queryRows<{ id: string; status: string }>(
      tx,
      sql`SELECT id, status FROM oauth_connections WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`,
    ),
  );

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
}, 60_000);
afterAll(async () => t?.close());

describe('a removed member', () => {
  it('loses their calendar connections in the removal: tokens gone, calendars out of every list, events there 404', async () => {
    const dr = await addMember(t, ws, { isProvider: true, name: 'Dr. Gone' });
    const mine = await connectCalendar(t, dr.token, 'google', `gone-${ws.id}@google.example`);
    const desk = await connectCalendar(t, ws.admin.token, 'microsoft', `desk-${ws.id}@microsoft.example`);
    expect((await api('GET', '/calendar/calendars')).json().items.map((c: { id: string }) => c.id)).toContain(
      mine.calendarId,
    );

    const removed = await api('DELETE', `/members/${dr.userId}`);
    expect(removed.statusCode, removed.body).toBe(204);

    expect(await connectionRows(ws.id, dr.userId)).toEqual([]);
    const connections = (await api('GET', '/calendar/connections')).json().items.map((c: { id: string }) => c.id);
    expect(connections).toEqual([desk.connectionId]);
    const calendars = (await api('GET', '/calendar/calendars')).json().items.map((c: { id: string }) => c.id);
    expect(calendars).not.toContain(mine.calendarId);
    expect(calendars).toContain(desk.calendarId);

    // The merged list reads only the desk's token; the ex-member's calendar is unknown to reads and writes.
    const window = 'timeMin=2026-12-01T00:00:00Z&timeMax=2026-12-08T00:00:00Z';
    const before = await auditCount(mine.connectionId);
    const list = await api('GET', `/calendar/events?${window}`);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().warnings).toEqual([]);
    expect((await api('GET', `/calendar/events?${window}&calendar=${mine.calendarId}`)).json().code).toBe(
      'calendar_not_found',
    );
    const create = await api('POST', '/calendar/events', ws.admin.token, {
      calendar: mine.calendarId,
      draft: { title: 'Visit', start: '2026-12-02T15:00:00Z', end: '2026-12-02T15:30:00Z' },
    });
    expect([create.statusCode, create.json().code]).toEqual([404, 'calendar_not_found']);
    expect(await auditCount(mine.connectionId)).toBe(before);

    // The disconnect is on record, in the workspace, naming the member removed.
    const audit = await api('GET', `/audit?kind=token_access&limit=100`);
    const revoke = audit
      .json()
      .items.find(
        (a: { connectionId: string; reason: string }) =>
          a.connectionId === mine.connectionId && a.reason === 'token.revoke',
      );
    expect(revoke, audit.body).toMatchObject({ actorUserId: ws.admin.userId, removedMember: dr.userId, outcome: 'ok' });
  });

  it('cannot finish a connection started before the removal: 400 invalid_state, nothing stored', async () => {
    const dr = await addMember(t, ws, { isProvider: true });
    const start = await api('POST', '/calendar/connections', dr.token, { provider: 'google' });
    expect(start.statusCode, start.body).toBe(201);
    const authorize = new URL(start.json().authorizeUrl);
    authorize.searchParams.set('login_hint', `late-${ws.id}@google.example`);
    const consent = await fetch(authorize, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const callback = new URL(consent.headers.get('location') ?? '');

    expect((await api('DELETE', `/members/${dr.userId}`)).statusCode).toBe(204);
    const back = await t.request({ method: 'GET', url: `${callback.pathname}${callback.search}` });
    expect(back.statusCode, back.body).toBe(400);
    expect(back.json()).toMatchObject({ code: 'invalid_state' });
    expect(back.json().detail).toMatch(/no longer a member/);
    expect(await connectionRows(ws.id, dr.userId)).toEqual([]);
  });

  it('cannot have a connection stored for them (the check as it is stored, for a removal that lands mid-flow)', async () => {
    const dr = await addMember(t, ws, { isProvider: true });
    expect((await api('DELETE', `/members/${dr.userId}`)).statusCode).toBe(204);
    const save = saveConnection(
      oauthDeps(t.app.atrium),
      { workspaceId: ws.id, userId: dr.userId },
      'google',
      `stored-${ws.id}@google.example`,
      { accessToken: 'at', refreshToken: 'rt', expiresInSec: 3600 },
    );
    await expect(save).rejects.toMatchObject({ code: 'invalid_state' });
    expect(await connectionRows(ws.id, dr.userId)).toEqual([]);
  });
});

async function auditCount(connectionId: string): Promise<number> {
  const rows = await withSystem(t.app.atrium.db, (tx) =>
    queryRows<{ n: number }>(
      tx,
      sql`SELECT count(*)::int AS n FROM audit_log WHERE workspace_id = ${ws.id} AND data->>'connectionId' = ${connectionId}`,
    ),
  );
  return rows[0].n;
}
