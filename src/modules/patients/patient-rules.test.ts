// Contract §3a rules on the patient record: an MRN names one patient per workspace (409 mrn_taken, also
// under concurrent creates) and a birth date is a real date between 1900 and today (400 on body.dateOfBirth).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;
let n = 0;
const mrn = () => `RULES-${process.pid}-${Date.now()}-${n++}`;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  other = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const create = (token: string, body: Record<string, unknown>) =>
  t.request({
    method: 'POST',
    url: '/api/v1/patients',
    token,
    payload: { givenName: 'Ada', familyName: 'Rules', ...body },
  });
const patch = (id: string, body: Record<string, unknown>) =>
  t.request({ method: 'PATCH', url: `/api/v1/patients/${id}`, token: ws.admin.token, payload: body });

describe('MRN unique in the workspace', () => {
  it('refuses a second patient with the same MRN (409 mrn_taken), allows it in another workspace and allows many without an MRN', async () => {
    const value = mrn();
    expect((await create(ws.admin.token, { mrn: value })).statusCode).toBe(201);
    const dup = await create(ws.admin.token, { mrn: value });
    expect(dup.statusCode, dup.body).toBe(409);
    expect(dup.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(dup.json()).toMatchObject({ status: 409, code: 'mrn_taken', errors: [{ path: 'body.mrn' }] });

    expect((await create(other.admin.token, { mrn: value })).statusCode).toBe(201);
    expect((await create(ws.admin.token, {})).statusCode).toBe(201);
    expect((await create(ws.admin.token, {})).statusCode).toBe(201);
  });

  it('refuses a PATCH to an MRN another patient holds, keeps the record unchanged, and allows re-sending its own MRN', async () => {
    const taken = mrn();
    await createPatient(t, ws.admin.token, { mrn: taken });
    const own = mrn();
    const patient = await createPatient(t, ws.admin.token, { mrn: own });
    const res = await patch(patient.id, { mrn: taken, givenName: 'Changed' });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe('mrn_taken');
    const after = await t.request({ method: 'GET', url: `/api/v1/patients/${patient.id}`, token: ws.admin.token });
    expect(after.json()).toMatchObject({ mrn: own, givenName: 'Ada' });
    expect((await patch(patient.id, { mrn: own })).statusCode).toBe(200);
    // Releasing an MRN frees it for another patient.
    expect((await patch(patient.id, { mrn: null })).statusCode).toBe(200);
    expect((await create(ws.admin.token, { mrn: own })).statusCode).toBe(201);
  });

  it('gives exactly one 201 and one 409 when two creates with the same MRN race', async () => {
    const value = mrn();
    const results = await Promise.all([create(ws.admin.token, { mrn: value }), create(ws.admin.token, { mrn: value })]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.statusCode === 409)?.json().code).toBe('mrn_taken');
    const found = await t.request({ method: 'GET', url: `/api/v1/patients?q=${value}`, token: ws.admin.token });
    expect(found.json().items).toHaveLength(1);
  });
});

describe('date of birth', () => {
  const today = new Date().toISOString().slice(0, 10);
  const cases: [string, unknown, RegExp][] = [
    ['in the future', '2999-01-01', /future/],
    ['before 1900', '1899-12-31', /1900/],
    ['not a real day', '2023-02-29', /real date/],
    ['month 13', '1990-13-01', /real date/],
    ['not a date', 'yesterday', /real date/],
    ['a timestamp', '1990-01-01T00:00:00Z', /real date/],
  ];
  for (const [label, value, message] of cases) {
    it(`refuses a birth date ${label} with 400 on body.dateOfBirth, on create and on update`, async () => {
      const res = await create(ws.admin.token, { dateOfBirth: value });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe('validation_failed');
      const error = res.json().errors.find((e: { path: string }) => e.path === 'body.dateOfBirth');
      expect(error?.message).toMatch(message);

      const patient = await createPatient(t, ws.admin.token);
      const patched = await patch(patient.id, { dateOfBirth: value });
      expect(patched.statusCode, patched.body).toBe(400);
      expect(patched.json().errors.map((e: { path: string }) => e.path)).toContain('body.dateOfBirth');
    });
  }

  it('accepts 1900-01-01, a leap day and today', async () => {
    for (const dateOfBirth of ['1900-01-01', '2024-02-29', today]) {
      const res = await create(ws.admin.token, { dateOfBirth });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().dateOfBirth).toBe(dateOfBirth);
    }
  });
});

describe('Idempotency-Key on create', () => {
  it('answers a repeat with the first response and creates nothing; the same key with another body is 422', async () => {
    const key = `create-${mrn()}`;
    const value = mrn();
    const send = (body: Record<string, unknown>) =>
      t.request({
        method: 'POST',
        url: '/api/v1/patients',
        token: ws.admin.token,
        headers: { 'idempotency-key': key },
        payload: { givenName: 'Idem', familyName: 'Potent', mrn: value, ...body },
      });
    const first = await send({});
    expect(first.statusCode, first.body).toBe(201);
    const again = await send({});
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().id).toBe(first.json().id);
    const found = await t.request({ method: 'GET', url: `/api/v1/patients?q=${value}`, token: ws.admin.token });
    expect(found.json().items).toHaveLength(1);
    const reused = await send({ givenName: 'Other' });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('idempotency_key_reused');
  });
});
