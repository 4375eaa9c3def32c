// The workspace inbox's handled state: a replay marks an event's dead letters replayed, an admin may resolve any
// item without one, and the list filters open from handled (GET /inbox without a filter lists every item).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { postInboxNotice } from './service.js';

let t: TestApp;

beforeAll(async () => {
  // No background worker: a replayed delivery stays queued, nothing is sent.
  t = await createTestApp({ webhooks: { retryDelaysMs: [60_000], timeoutMs: 2000, allowCidrs: [] } });
});
afterAll(async () => t?.close());

interface Item {
  id: string;
  kind: string;
  endpointId: string | null;
  eventId: string | null;
  state: string;
  handledAt: string | null;
  handledBy: string | null;
  handledByName: string | null;
}

async function inbox(ws: TestWorkspace, query = ''): Promise<Item[]> {
  const res = await t.request({ method: 'GET', url: `/api/v1/inbox${query}`, token: ws.admin.token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items;
}

const resolve = (ws: { admin: { token: string } }, id: string) =>
  t.request({ method: 'POST', url: `/api/v1/inbox/${id}/resolve`, token: ws.admin.token });

/** A workspace with an endpoint and one event to it dead-lettered (as the worker leaves it), plus a mail notice. */
async function deadLetterCase() {
  const ws = await createWorkspace(t, { tier: 'advanced' });
  const created = await t.request({
    method: 'POST',
    url: '/api/v1/admin/webhooks',
    token: ws.admin.token,
    payload: { url: 'https://93.184.216.34/hooks' },
  });
  expect(created.statusCode, created.body).toBe(201);
  const endpointId = created.json().id as string;
  await createPatient(t, ws.admin.token);
  const [delivery] = await withSystem(t.database.db, (tx) =>
    queryRows<{ event_id: string }>(
      tx,
      sql`UPDATE webhook_deliveries SET state = 'dead', attempts = 6, last_status = 503
           WHERE workspace_id = ${ws.id} AND endpoint_id = ${endpointId} RETURNING event_id`,
    ),
  );
  const eventId = delivery.event_id;
  await withSystem(t.database.db, async (tx) => {
    await postInboxNotice(tx, ws.id, {
      kind: 'webhook.dead_lettered',
      endpointId,
      eventId,
      eventType: 'patient.created',
      lastStatus: 503,
      message: 'HTTP 503: down',
    });
    await postInboxNotice(tx, ws.id, {
      kind: 'mail.undeliverable',
      eventType: 'mail.send',
      message: 'Mail job_x to 2 recipients was not delivered in 3 days',
    });
  });
  return { ws, endpointId, eventId };
}

describe('inbox handled state', () => {
  it('lists new items as open; a replay marks the dead letter replayed, with when and by whom', async () => {
    const { ws, endpointId, eventId } = await deadLetterCase();
    const all = await inbox(ws);
    expect(all).toHaveLength(2);
    for (const item of all) expect(item).toMatchObject({ state: 'open', handledAt: null, handledBy: null });
    const dead = all.find((i) => i.kind === 'webhook.dead_lettered')!;

    const before = Date.now();
    const replay = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpointId}/replay/${eventId}`,
      token: ws.admin.token,
    });
    expect(replay.statusCode, replay.body).toBe(202);

    const handled = await inbox(ws, '?state=handled');
    expect(handled).toEqual([
      expect.objectContaining({
        id: dead.id,
        state: 'replayed',
        handledBy: ws.admin.userId,
        handledByName: 'Test Admin',
      }),
    ]);
    expect(new Date(handled[0].handledAt!).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect((await inbox(ws, '?state=open')).map((i) => i.kind)).toEqual(['mail.undeliverable']);
    // Without a filter: every item, as before (contract §7.1).
    expect(await inbox(ws)).toHaveLength(2);

    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: ws.admin.token });
    expect(audit.json().items[0]).toMatchObject({
      action: 'webhooks.replay',
      target: endpointId,
      inboxItems: [dead.id],
    });

    // A second replay finds nothing open to mark; the item keeps its first handling.
    await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${endpointId}/replay/${eventId}`,
      token: ws.admin.token,
    });
    expect((await inbox(ws, '?state=handled'))[0].handledAt).toBe(handled[0].handledAt);
  });

  it('resolves an item without a replay, audited; a second resolve is 409 and changes nothing', async () => {
    const { ws } = await deadLetterCase();
    const other = await addMember(t, ws, { role: 'admin', name: 'Second Admin' });
    const mail = (await inbox(ws)).find((i) => i.kind === 'mail.undeliverable')!;

    const res = await resolve({ admin: other }, mail.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      id: mail.id,
      state: 'resolved',
      handledBy: other.userId,
      handledByName: 'Second Admin',
    });
    expect(res.json().handledAt).toEqual(expect.any(String));
    expect((await inbox(ws, '?state=open')).map((i) => i.kind)).toEqual(['webhook.dead_lettered']);
    expect((await inbox(ws, '?state=handled')).map((i) => i.id)).toEqual([mail.id]);

    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: ws.admin.token });
    expect(audit.json().items[0]).toMatchObject({
      action: 'webhooks.inbox_resolve',
      target: mail.id,
      actorUserId: other.userId,
    });

    const again = await resolve(ws, mail.id);
    expect(again.statusCode).toBe(409);
    expect(again.headers['content-type']).toContain('application/problem+json');
    expect(again.json()).toMatchObject({ code: 'conflict', state: 'resolved' });
    expect((await inbox(ws, '?state=handled'))[0]).toMatchObject({ handledBy: other.userId });
    const audited = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: ws.admin.token });
    expect(audited.json().items.filter((r: { action: string }) => r.action === 'webhooks.inbox_resolve')).toHaveLength(
      1,
    );
  });

  it('reopens a resolved item, audited; an open or replayed one is 409 and changes nothing', async () => {
    const { ws } = await deadLetterCase();
    const mail = (await inbox(ws)).find((i) => i.kind === 'mail.undeliverable')!;
    const dead = (await inbox(ws)).find((i) => i.kind === 'webhook.dead_lettered')!;
    const reopen = (id: string) =>
      t.request({ method: 'POST', url: `/api/v1/inbox/${id}/reopen`, token: ws.admin.token });

    // Open already: 409, nothing audited.
    const open = await reopen(mail.id);
    expect(open.statusCode).toBe(409);
    expect(open.json()).toMatchObject({ code: 'conflict', state: 'open' });

    expect((await resolve(ws, mail.id)).statusCode).toBe(200);
    const res = await reopen(mail.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: mail.id, state: 'open', handledAt: null, handledBy: null });
    expect((await inbox(ws, '?state=open')).map((i) => i.id).sort()).toEqual([mail.id, dead.id].sort());
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: ws.admin.token });
    expect(audit.json().items[0]).toMatchObject({ action: 'webhooks.inbox_reopen', target: mail.id });
    // Resolved again, it is handled again.
    expect((await resolve(ws, mail.id)).statusCode).toBe(200);

    // A replayed one stays replayed.
    await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${dead.endpointId}/replay/${dead.eventId}`,
      token: ws.admin.token,
    });
    const replayed = await reopen(dead.id);
    expect(replayed.statusCode).toBe(409);
    expect(replayed.json()).toMatchObject({ state: 'replayed' });
    // Resolved first and its event replayed afterwards: the replay takes it too, so it is not reopened as waiting.
    const { ws: second } = await deadLetterCase();
    const item = (await inbox(second)).find((i) => i.kind === 'webhook.dead_lettered')!;
    expect((await resolve(second, item.id)).statusCode).toBe(200);
    await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${item.endpointId}/replay/${item.eventId}`,
      token: second.admin.token,
    });
    expect((await inbox(second, '?state=handled')).find((i) => i.id === item.id)).toMatchObject({ state: 'replayed' });
    const late = await t.request({
      method: 'POST',
      url: `/api/v1/inbox/${item.id}/reopen`,
      token: second.admin.token,
    });
    expect(late.statusCode).toBe(409);
    // Another workspace's item, or none: 404.
    const other = await createWorkspace(t, { tier: 'advanced' });
    const foreign = await t.request({
      method: 'POST',
      url: `/api/v1/inbox/${mail.id}/reopen`,
      token: other.admin.token,
    });
    expect(foreign.statusCode).toBe(404);
    expect((await inbox(ws, '?state=handled')).map((i) => i.id)).toContain(mail.id);
  });

  it('pages a filtered list with its cursor', async () => {
    const { ws } = await deadLetterCase();
    await withSystem(t.database.db, async (tx) => {
      for (let i = 0; i < 3; i++)
        await postInboxNotice(tx, ws.id, { kind: 'mail.undeliverable', eventType: 'mail.send', message: `m${i}` });
    });
    const [newest] = await inbox(ws);
    expect((await resolve(ws, newest.id)).statusCode).toBe(200);
    const first = await t.request({ method: 'GET', url: '/api/v1/inbox?state=open&limit=2', token: ws.admin.token });
    const second = await t.request({
      method: 'GET',
      url: `/api/v1/inbox?state=open&limit=2&cursor=${first.json().nextCursor}`,
      token: ws.admin.token,
    });
    const ids = [...first.json().items, ...second.json().items].map((i: Item) => i.id);
    expect(ids).toHaveLength(4);
    expect(ids).not.toContain(newest.id);
    expect(second.json().nextCursor).toBeNull();
  });

  it('refuses a bad filter, an unknown item, a member and a workspace below Advanced', async () => {
    const { ws } = await deadLetterCase();
    const bad = await t.request({ method: 'GET', url: '/api/v1/inbox?state=closed', token: ws.admin.token });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('validation_failed');

    const missing = await resolve(ws, 'inb_doesnotexist');
    expect(missing.statusCode).toBe(404);

    const [item] = await inbox(ws);
    const member = await addMember(t, ws, { role: 'member' });
    const asMember = await resolve({ admin: member }, item.id);
    expect(asMember.statusCode).toBe(403);
    expect(asMember.json().code).toBe('forbidden');

    const standard = await createWorkspace(t, { tier: 'standard' });
    const below = await resolve(standard, item.id);
    expect(below.statusCode).toBe(403);
    expect(below.json().code).toBe('tier_required');
    expect((await inbox(ws, '?state=open')).length).toBe(2);
  });
});
