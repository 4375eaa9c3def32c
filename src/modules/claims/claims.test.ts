import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const eventTypes = (workspaceId: string) =>
  withSystem(t.database.db, (tx) =>
    queryRows<{ type: string; data: Record<string, unknown> }>(
      tx,
      sql`SELECT type, data FROM domain_events WHERE workspace_id = ${workspaceId} AND type LIKE 'claim.%' ORDER BY id`,
    ),
  );

async function submit(token: string, body: Record<string, unknown>) {
  return t.request({ method: 'POST', url: '/api/v1/claims', token, payload: body });
}

describe('claims', () => {
  it('submits (claim.submitted) and adjudicates once as paid (claim.paid) or denied (claim.denied)', async () => {
    const member = await addMember(t, ws);
    const patient = await createPatient(t, member.token);
    const paidRes = await submit(member.token, {
      patientId: patient.id,
      payer: 'Acme Health',
      amountCents: 12_500,
      codes: ['97110'],
    });
    expect(paidRes.statusCode, paidRes.body).toBe(201);
    const claim = paidRes.json();
    expect(claim).toMatchObject({
      status: 'submitted',
      amountCents: 12_500,
      codes: ['97110'],
      submittedBy: member.userId,
    });
    expect(claim.id).toMatch(/^clm_/);

    const asMember = await t.request({
      method: 'POST',
      url: `/api/v1/claims/${claim.id}/adjudicate`,
      token: member.token,
      payload: { outcome: 'paid' },
    });
    expect(asMember.statusCode).toBe(403);

    const paid = await t.request({
      method: 'POST',
      url: `/api/v1/claims/${claim.id}/adjudicate`,
      token: ws.admin.token,
      payload: { outcome: 'paid', paidAmountCents: 10_000 },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json()).toMatchObject({ status: 'paid', paidAmountCents: 10_000 });
    const twice = await t.request({
      method: 'POST',
      url: `/api/v1/claims/${claim.id}/adjudicate`,
      token: ws.admin.token,
      payload: { outcome: 'denied' },
    });
    expect(twice.statusCode).toBe(409);

    const other = (
      await submit(member.token, { patientId: patient.id, payer: 'Acme Health', amountCents: 900 })
    ).json();
    const denied = await t.request({
      method: 'POST',
      url: `/api/v1/claims/${other.id}/adjudicate`,
      token: ws.admin.token,
      payload: { outcome: 'denied', reason: 'Not covered' },
    });
    expect(denied.json()).toMatchObject({ status: 'denied', denialReason: 'Not covered', paidAmountCents: null });

    const events = await eventTypes(ws.id);
    expect(events.map((e) => [e.type, e.data.claimId])).toEqual([
      ['claim.submitted', claim.id],
      ['claim.paid', claim.id],
      ['claim.submitted', other.id],
      ['claim.denied', other.id],
    ]);
    const list = await t.request({ method: 'GET', url: '/api/v1/claims?status=denied', token: member.token });
    expect(list.json().items.map((c: { id: string }) => c.id)).toEqual([other.id]);
    const got = await t.request({ method: 'GET', url: `/api/v1/claims/${claim.id}`, token: member.token });
    expect(got.json()).toEqual(paid.json());
  });

  it('refuses unknown patients, mismatched notes and bad bodies without emitting events', async () => {
    const before = (await eventTypes(ws.id)).length;
    const other = await createWorkspace(t);
    const foreign = await createPatient(t, other.admin.token);
    const res = await submit(ws.admin.token, { patientId: foreign.id, payer: 'X', amountCents: 1 });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('unknown_patient');
    const patient = await createPatient(t, ws.admin.token);
    const note = await submit(ws.admin.token, { patientId: patient.id, payer: 'X', amountCents: 1, noteId: 'note_x' });
    expect(note.json().code).toBe('unknown_note');
    for (const body of [
      { patientId: patient.id, payer: 'X', amountCents: 0 },
      { patientId: patient.id, amountCents: 5 },
    ]) {
      expect((await submit(ws.admin.token, body)).statusCode).toBe(400);
    }
    const badOutcome = await t.request({
      method: 'POST',
      url: '/api/v1/claims/clm_missing/adjudicate',
      token: ws.admin.token,
      payload: { outcome: 'maybe' },
    });
    expect(badOutcome.statusCode).toBe(400);
    expect((await eventTypes(ws.id)).length).toBe(before);
  });

  it('refuses a paid amount above the billed amount (422 invalid_amount), storing nothing', async () => {
    const patient = await createPatient(t, ws.admin.token);
    const claim = (await submit(ws.admin.token, { patientId: patient.id, payer: 'Acme', amountCents: 10_000 })).json();
    const before = (await eventTypes(ws.id)).length;
    const over = await t.request({
      method: 'POST',
      url: `/api/v1/claims/${claim.id}/adjudicate`,
      token: ws.admin.token,
      payload: { outcome: 'paid', paidAmountCents: 99_999_999 },
    });
    expect(over.statusCode, over.body).toBe(422);
    expect(over.json()).toMatchObject({
      code: 'invalid_amount',
      errors: [{ path: 'body.paidAmountCents', message: expect.stringMatching(/10000|100\.00/) }],
    });
    const oneCentOver = await t.request({
      method: 'POST',
      url: `/api/v1/claims/${claim.id}/adjudicate`,
      token: ws.admin.token,
      payload: { outcome: 'paid', paidAmountCents: 10_001 },
    });
    expect(oneCentOver.json().code).toBe('invalid_amount');
    // Nothing stored or emitted: the claim is still open.
    const got = await t.request({ method: 'GET', url: `/api/v1/claims/${claim.id}`, token: ws.admin.token });
    expect(got.json()).toMatchObject({ status: 'submitted', paidAmountCents: null, adjudicatedAt: null });
    expect((await eventTypes(ws.id)).length).toBe(before);
    // Paid in full is still fine.
    const full = await t.request({
      method: 'POST',
      url: `/api/v1/claims/${claim.id}/adjudicate`,
      token: ws.admin.token,
      payload: { outcome: 'paid', paidAmountCents: 10_000 },
    });
    expect(full.json()).toMatchObject({ status: 'paid', paidAmountCents: 10_000 });
  });

  it('refuses a service date in the future (400 validation_failed), storing nothing', async () => {
    const patient = await createPatient(t, ws.admin.token);
    // The date at UTC+14 (the zone furthest ahead) that many days from now.
    const day = (offsetDays: number) =>
      new Date(Date.now() + 14 * 3_600_000 + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const count = async () =>
      (await t.request({ method: 'GET', url: `/api/v1/claims?patientId=${patient.id}`, token: ws.admin.token })).json()
        .items.length;
    const claims = await count();
    for (const serviceDate of [day(1), day(365 * 100), '9999-12-31']) {
      const res = await submit(ws.admin.token, { patientId: patient.id, payer: 'Acme', amountCents: 1, serviceDate });
      expect(res.statusCode, serviceDate).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'validation_failed',
        errors: [{ path: 'body.serviceDate', message: expect.stringMatching(/future/) }],
      });
    }
    expect(await count()).toBe(claims);
    // Today anywhere on Earth (UTC+14 is up to a day ahead of UTC), today in UTC and the past are accepted.
    for (const serviceDate of [day(0), new Date().toISOString().slice(0, 10), day(-30)]) {
      const res = await submit(ws.admin.token, { patientId: patient.id, payer: 'Acme', amountCents: 1, serviceDate });
      expect(res.statusCode, serviceDate).toBe(201);
    }
  });
});
