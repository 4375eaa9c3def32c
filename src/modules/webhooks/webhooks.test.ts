import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';
import { openSecret, secretKeys } from './service.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp({ webhooks: { retryDelaysMs: [60_000], timeoutMs: 2000, allowCidrs: ['127.0.0.0/8'] } });
  ws = await createWorkspace(t, { tier: 'advanced' });
});
afterAll(async () => t?.close());

const create = (token: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: '/api/v1/admin/webhooks', token, payload, headers });

describe('webhook endpoint administration', () => {
  it('creates an endpoint, shows the secret once and stores it encrypted', async () => {
    const res = await create(ws.admin.token, { url: 'https://127.0.0.1:9/hook', description: 'billing' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      url: 'https://127.0.0.1:9/hook',
      events: ['*'],
      description: 'billing',
      enabled: true,
    });
    expect(body.id).toMatch(/^whk_/);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(body.secret.slice(6), 'base64')).toHaveLength(32);

    const list = await t.request({ method: 'GET', url: '/api/v1/admin/webhooks', token: ws.admin.token });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(body.secret);
    expect(list.json().items.map((e: { id: string }) => e.id)).toContain(body.id);

    const [row] = await withSystem(t.database.db, (tx) =>
      queryRows<{ secret_enc: string }>(tx, sql`SELECT secret_enc FROM webhook_endpoints WHERE id = ${body.id}`),
    );
    expect(row.secret_enc).not.toContain(body.secret.slice(6));
    expect(row.secret_enc).toMatch(/^v1\./);

    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=admin_action', token: ws.admin.token });
    expect(audit.json().items[0]).toMatchObject({ action: 'webhooks.create', target: body.id });
  });

  it.each([
    ['http://example.com/hook', 'scheme'],
    ['ftp://example.com/hook', 'scheme'],
    ['https://user:pass@example.com/hook', 'credentials'],
    ['https://10.0.0.5/hook', 'blocked_address'],
    ['https://169.254.169.254/latest/meta-data', 'blocked_address'],
    ['https://[::ffff:10.0.0.1]/hook', 'blocked_address'],
    ['https://[64:ff9b::a9fe:a9fe]/hook', 'blocked_address'],
    ['https://0xa9fea9fe/hook', 'blocked_address'],
    ['https://does-not-exist.invalid/hook', 'unresolvable'],
    ['not a url', 'invalid'],
  ])('refuses %s with unsafe_url (%s) and stores nothing', async (url, reason) => {
    const before = await t.request({ method: 'GET', url: '/api/v1/admin/webhooks', token: ws.admin.token });
    const res = await create(ws.admin.token, { url });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'unsafe_url', reason });
    const after = await t.request({ method: 'GET', url: '/api/v1/admin/webhooks', token: ws.admin.token });
    expect(after.json().items).toHaveLength(before.json().items.length);
  });

  it('validates the event filter', async () => {
    const res = await create(ws.admin.token, { url: 'https://127.0.0.1:9/x', events: ['patient.deleted'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('validation_failed');
    const ok = await create(ws.admin.token, { url: 'https://127.0.0.1:9/x', events: ['claim.paid', 'claim.paid'] });
    expect(ok.json().events).toEqual(['claim.paid']);
  });

  it('is for admins of Advanced+ workspaces only', async () => {
    const member = await addMember(t, ws, { role: 'member' });
    const asMember = await create(member.token, { url: 'https://127.0.0.1:9/x' });
    expect(asMember.statusCode).toBe(403);
    expect(asMember.json().code).toBe('forbidden');
    for (const url of ['/api/v1/admin/webhooks', '/api/v1/inbox']) {
      const res = await t.request({ method: 'GET', url, token: member.token });
      expect(res.statusCode).toBe(403);
    }

    const standard = await createWorkspace(t, { tier: 'standard' });
    const res = await create(standard.admin.token, { url: 'https://127.0.0.1:9/x' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'tier_required', feature: 'outbound_webhooks', requiredTier: 'advanced' });
    const inbox = await t.request({ method: 'GET', url: '/api/v1/inbox', token: standard.admin.token });
    expect(inbox.json().code).toBe('tier_required');
  });

  it('honours Idempotency-Key: the repeat returns the first response (same secret) and creates nothing', async () => {
    const headers = { 'idempotency-key': 'create-hook-1' };
    const first = await create(ws.admin.token, { url: 'https://127.0.0.1:9/idem' }, headers);
    const again = await create(ws.admin.token, { url: 'https://127.0.0.1:9/idem' }, headers);
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    const list = await t.request({ method: 'GET', url: '/api/v1/admin/webhooks', token: ws.admin.token });
    expect(list.json().items.filter((e: { url: string }) => e.url.endsWith('/idem'))).toHaveLength(1);
    const reused = await create(ws.admin.token, { url: 'https://127.0.0.1:9/other' }, headers);
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('idempotency_key_reused');
  });

  it('updates filters, disables, and re-checks a changed URL', async () => {
    const { id } = (await create(ws.admin.token, { url: 'https://127.0.0.1:9/p' })).json();
    const url = `/api/v1/admin/webhooks/${id}`;
    const patched = await t.request({
      method: 'PATCH',
      url,
      token: ws.admin.token,
      payload: { enabled: false, events: ['claim.paid'] },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ enabled: false, events: ['claim.paid'] });
    const unsafe = await t.request({
      method: 'PATCH',
      url,
      token: ws.admin.token,
      payload: { url: 'https://10.1.1.1/' },
    });
    expect(unsafe.statusCode).toBe(422);
    expect(unsafe.json().reason).toBe('blocked_address');
    expect((await t.request({ method: 'GET', url, token: ws.admin.token })).json().url).toBe('https://127.0.0.1:9/p');
  });

  it('rotates the secret, shows the new one once and reports the overlap window', async () => {
    const created = (await create(ws.admin.token, { url: 'https://127.0.0.1:9/r' })).json();
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${created.id}/rotate-secret`,
      token: ws.admin.token,
    });
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    const hours = (Date.parse(rotated.previousSecretExpiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    const got = await t.request({ method: 'GET', url: `/api/v1/admin/webhooks/${created.id}`, token: ws.admin.token });
    expect(got.json().previousSecretExpiresAt).toBe(rotated.previousSecretExpiresAt);
  });

  it('rotations at once run one after another: the last two secrets handed out are the current and previous', async () => {
    const created = (await create(ws.admin.token, { url: 'https://127.0.0.1:9/race' })).json();
    // All rotations arrive while the endpoint row is held (by this test, like by a rotation still committing),
    // so each reads it before any of them has written. 4: the PostgreSQL test pool has 5 connections, one is the holder.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held!: () => void;
    const holding = new Promise<void>((resolve) => {
      held = resolve;
    });
    const holder = withSystem(t.database.db, async (tx) => {
      await tx.execute(sql`SELECT id FROM webhook_endpoints WHERE id = ${created.id} FOR UPDATE`);
      held();
      await released;
    });
    await holding;
    const pending = Promise.all(
      Array.from({ length: 4 }, () =>
        t.request({
          method: 'POST',
          url: `/api/v1/admin/webhooks/${created.id}/rotate-secret`,
          token: ws.admin.token,
        }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    await holder;
    const answers = await pending;
    expect(answers.map((r) => r.statusCode)).toEqual(Array(4).fill(200));
    const handedOut = answers.map((r) => r.json().secret as string);
    expect(new Set(handedOut).size).toBe(4);
    const [row] = await withSystem(t.database.db, (tx) =>
      queryRows<{ secret_enc: string; previous_secret_enc: string }>(
        tx,
        sql`SELECT secret_enc, previous_secret_enc FROM webhook_endpoints WHERE id = ${created.id}`,
      ),
    );
    const open = (blob: string) => openSecret(secretKeys(t.app.atrium), blob, ws.id, created.id);
    const current = open(row.secret_enc);
    const previous = open(row.previous_secret_enc);
    // The last rotation to commit replaced the secret of the one before it, not the one all had read at once.
    expect(handedOut).toContain(current);
    expect(previous).not.toBe(created.secret);
    expect(handedOut).toContain(previous);
    expect(previous).not.toBe(current);
  });

  it('deletes an endpoint and cancels its pending deliveries', async () => {
    const { id } = (await create(ws.admin.token, { url: 'https://127.0.0.1:9/d' })).json();
    await createPatient(t, ws.admin.token);
    const states = () =>
      withSystem(t.database.db, (tx) =>
        queryRows<{ state: string }>(tx, sql`SELECT state FROM webhook_deliveries WHERE endpoint_id = ${id}`),
      );
    expect(await states()).toEqual([{ state: 'pending' }]);
    const res = await t.request({ method: 'DELETE', url: `/api/v1/admin/webhooks/${id}`, token: ws.admin.token });
    expect(res.statusCode).toBe(204);
    expect(await states()).toEqual([{ state: 'cancelled' }]);
    const again = await t.request({ method: 'DELETE', url: `/api/v1/admin/webhooks/${id}`, token: ws.admin.token });
    expect(again.statusCode).toBe(404);
    const log = await t.request({
      method: 'GET',
      url: `/api/v1/admin/webhooks/${id}/deliveries`,
      token: ws.admin.token,
    });
    expect(log.statusCode).toBe(404);
  });

  it('answers 404 for replay of an event that never went to the endpoint', async () => {
    const { id } = (await create(ws.admin.token, { url: 'https://127.0.0.1:9/n', events: ['claim.paid'] })).json();
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/admin/webhooks/${id}/replay/evt_00000000000000000000000000`,
      token: ws.admin.token,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('rejects bad delivery-log queries with problem+json', async () => {
    const { id } = (await create(ws.admin.token, { url: 'https://127.0.0.1:9/q' })).json();
    for (const query of ['status=weird', 'limit=0', 'limit=201', 'cursor=%%%']) {
      const res = await t.request({
        method: 'GET',
        url: `/api/v1/admin/webhooks/${id}/deliveries?${query}`,
        token: ws.admin.token,
      });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
  });
});

describe('fan-out in the publishing transaction', () => {
  it('writes delivery rows with the event, only for matching enabled endpoints, and none on rollback', async () => {
    const other = await createWorkspace(t, { tier: 'enterprise' });
    const make = async (payload: Record<string, unknown>) => (await create(other.admin.token, payload)).json().id;
    const all = await make({ url: 'https://127.0.0.1:9/all' });
    const claimsOnly = await make({ url: 'https://127.0.0.1:9/claims', events: ['claim.paid'] });
    const patientsOnly = await make({ url: 'https://127.0.0.1:9/pat', events: ['patient.created'] });
    const disabled = await make({ url: 'https://127.0.0.1:9/off' });
    await t.request({
      method: 'PATCH',
      url: `/api/v1/admin/webhooks/${disabled}`,
      token: other.admin.token,
      payload: { enabled: false },
    });

    const patient = await createPatient(t, other.admin.token);
    // A change that fails validation inside its transaction leaves no event and no delivery behind.
    const failed = await t.request({
      method: 'PATCH',
      url: `/api/v1/patients/${patient.id}`,
      token: other.admin.token,
      payload: { preferredProviderId: 'usr_nobody' },
    });
    expect(failed.statusCode).toBe(422);
    await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/break-glass`,
      token: other.admin.token,
      payload: { reason: 'patient unconscious in the ER' },
    });

    const rows = await withSystem(t.database.db, (tx) =>
      queryRows<{ endpoint_id: string; event_type: string }>(
        tx,
        sql`SELECT endpoint_id, event_type FROM webhook_deliveries WHERE workspace_id = ${other.id} ORDER BY event_type, endpoint_id`,
      ),
    );
    const of = (endpoint: string) => rows.filter((r) => r.endpoint_id === endpoint).map((r) => r.event_type);
    expect(of(all).sort()).toEqual(['break_glass.invoked', 'patient.created']);
    expect(of(patientsOnly).sort()).toEqual(['break_glass.invoked', 'patient.created']);
    expect(of(claimsOnly)).toEqual(['break_glass.invoked']); // whatever its filter
    expect(of(disabled)).toEqual([]);
    expect(rows.some((r) => r.event_type === 'patient.updated')).toBe(false);
  });
});
