import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withSystem } from '../../platform/db/tenant.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'free' });
});
afterAll(async () => t?.close());

const eventsOf = (workspaceId: string, type: string) =>
  withSystem(t.database.db, (tx) =>
    queryRows<{ data: Record<string, unknown> }>(
      tx,
      sql`SELECT data FROM domain_events WHERE workspace_id = ${workspaceId} AND type = ${type} ORDER BY id`,
    ),
  );

describe('SOAP notes', () => {
  it('creates a draft, signs it once (author only) and emits soap_note.signed in the same transaction', async () => {
    const clinician = {
      ...(await addMember(t, ws, { role: 'member', isProvider: true, name: 'Dr. Lee' })),
      name: 'Dr. Lee',
    };
    const patient = await createPatient(t, clinician.token);
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/notes',
      token: clinician.token,
      payload: { patientId: patient.id, subjective: 'Knee pain', plan: 'PT twice a week' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const note = created.json();
    expect(note).toMatchObject({
      patientId: patient.id,
      authorId: clinician.userId,
      authorName: clinician.name,
      status: 'draft',
      signedAt: null,
      signedByName: null,
    });
    expect(note.id).toMatch(/^note_/);
    expect(await eventsOf(ws.id, 'soap_note.signed')).toEqual([]);

    const byOther = await t.request({ method: 'POST', url: `/api/v1/notes/${note.id}/sign`, token: ws.admin.token });
    expect(byOther.statusCode).toBe(403);

    const signed = await t.request({ method: 'POST', url: `/api/v1/notes/${note.id}/sign`, token: clinician.token });
    expect(signed.statusCode, signed.body).toBe(200);
    expect(signed.json()).toMatchObject({
      status: 'signed',
      signedBy: clinician.userId,
      signedByName: clinician.name,
      authorName: clinician.name,
    });
    expect(await eventsOf(ws.id, 'soap_note.signed')).toEqual([
      {
        data: { noteId: note.id, patientId: patient.id, signedBy: clinician.userId, signedAt: signed.json().signedAt },
      },
    ]);

    const again = await t.request({ method: 'POST', url: `/api/v1/notes/${note.id}/sign`, token: clinician.token });
    expect(again.statusCode).toBe(409);
    expect(await eventsOf(ws.id, 'soap_note.signed')).toHaveLength(1);

    const got = await t.request({ method: 'GET', url: `/api/v1/notes/${note.id}`, token: ws.admin.token });
    expect(got.json()).toEqual(signed.json());
    const list = await t.request({
      method: 'GET',
      url: `/api/v1/notes?patientId=${patient.id}`,
      token: ws.admin.token,
    });
    expect(list.json().items.map((n: { id: string }) => n.id)).toEqual([note.id]);
  });

  it('lets the author change a draft (PATCH), nobody else, and nothing once it is signed', async () => {
    const clinician = {
      ...(await addMember(t, ws, { role: 'member', isProvider: true, name: 'Dr. Ng' })),
      name: 'Dr. Ng',
    };
    const desk = await addMember(t, ws, { role: 'member', name: 'Front Desk' });
    const patient = await createPatient(t, clinician.token);
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/notes',
      token: clinician.token,
      payload: { patientId: patient.id, subjective: 'Knee pain', plan: 'PT' },
    });
    const note = created.json();
    const patch = (token: string, payload: Record<string, unknown>, id = note.id) =>
      t.request({ method: 'PATCH', url: `/api/v1/notes/${id}`, token, payload });

    const changed = await patch(clinician.token, { assessment: 'Patellofemoral pain', plan: 'PT twice a week' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.headers['cache-control']).toBe('no-store');
    expect(changed.json()).toMatchObject({
      id: note.id,
      status: 'draft',
      subjective: 'Knee pain',
      assessment: 'Patellofemoral pain',
      plan: 'PT twice a week',
      authorName: clinician.name,
    });
    expect(Date.parse(changed.json().updatedAt)).toBeGreaterThanOrEqual(Date.parse(note.updatedAt));

    // Not the author (an admin neither): 403, and nothing changed.
    for (const token of [desk.token, ws.admin.token]) {
      const refused = await patch(token, { plan: 'Something else' });
      expect(refused.statusCode).toBe(403);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.json()).toMatchObject({ code: 'forbidden', detail: 'Only the author may change this note' });
    }
    // Empty or malformed: 400.
    expect((await patch(clinician.token, {})).statusCode).toBe(400);
    expect((await patch(clinician.token, { plan: 42 })).statusCode).toBe(400);
    expect((await patch(clinician.token, { plan: 'x' }, 'note_missing')).statusCode).toBe(404);

    const signed = await t.request({ method: 'POST', url: `/api/v1/notes/${note.id}/sign`, token: clinician.token });
    expect(signed.statusCode).toBe(200);
    const late = await patch(clinician.token, { plan: 'Changed after signing' });
    expect(late.statusCode).toBe(409);
    expect(late.headers['content-type']).toContain('application/problem+json');
    expect(late.json().code).toBe('conflict');
    const got = await t.request({ method: 'GET', url: `/api/v1/notes/${note.id}`, token: clinician.token });
    expect(got.json()).toMatchObject({ plan: 'PT twice a week', status: 'signed' });
  });

  it('refuses a patient of another workspace and bad input', async () => {
    const other = await createWorkspace(t);
    const foreign = await createPatient(t, other.admin.token);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/notes',
      token: ws.admin.token,
      payload: { patientId: foreign.id },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('unknown_patient');
    const bad = await t.request({ method: 'POST', url: '/api/v1/notes', token: ws.admin.token, payload: {} });
    expect(bad.statusCode).toBe(400);
    const missing = await t.request({ method: 'POST', url: '/api/v1/notes/note_missing/sign', token: ws.admin.token });
    expect(missing.statusCode).toBe(404);
  });
});
