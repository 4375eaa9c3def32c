// PUT/GET /patients/:id/coverage (contract §3a): the insurance on file, with history kept through
// effective dates, patient.updated emitted without the insurance details.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { queryRows, withTenant } from '../../platform/db/tenant.js';
import { patientCoverages } from './tables.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const today = () => new Date().toISOString().slice(0, 10);
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const body = {
  payerName: 'Acme Health',
  payerId: 'ACME1',
  memberId: 'M-100',
  groupNumber: 'G-7',
  planName: 'Gold PPO',
};

const put = (patientId: string, payload: Record<string, unknown>, token = ws.admin.token) =>
  t.request({ method: 'PUT', url: `/api/v1/patients/${patientId}/coverage`, token, payload });
const get = (patientId: string) =>
  t.request({ method: 'GET', url: `/api/v1/patients/${patientId}/coverage`, token: ws.admin.token });
const coverageRows = (patientId: string) =>
  withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
    queryRows<{ id: string; member_id: string; effective_from: string; effective_to: string | null }>(
      tx,
      sql`SELECT id, member_id, effective_from::text, effective_to::text FROM patient_coverages
          WHERE patient_id = ${patientId} ORDER BY id`,
    ),
  );

describe('patient coverage', () => {
  it('is 404 until set, then PUT returns and GET reads the coverage effective from today', async () => {
    const patient = await createPatient(t, ws.admin.token);
    const none = await get(patient.id);
    expect(none.statusCode).toBe(404);
    expect(none.json().code).toBe('not_found');

    const res = await put(patient.id, body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      id: expect.stringMatching(/^cov_/),
      patientId: patient.id,
      ...body,
      effectiveFrom: today(),
      effectiveTo: null,
    });
    expect((await get(patient.id)).json()).toEqual(res.json());
  });

  it('corrects a coverage set today in place (omitted optional members become null), and any member may set it', async () => {
    const patient = await createPatient(t, ws.admin.token);
    const first = (await put(patient.id, body)).json();
    const member = await addMember(t, ws);
    const second = await put(
      patient.id,
      { payerName: 'Acme Health', payerId: 'ACME1', memberId: 'M-200' },
      member.token,
    );
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json()).toMatchObject({ id: first.id, memberId: 'M-200', groupNumber: null, planName: null });
    expect(await coverageRows(patient.id)).toHaveLength(1);
  });

  it('ends an earlier coverage yesterday and starts the new one today, keeping the history', async () => {
    const patient = await createPatient(t, ws.admin.token);
    await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
      tx.insert(patientCoverages).values({
        workspaceId: ws.id,
        id: 'cov_old_for_test',
        patientId: patient.id,
        payerName: 'Old Payer',
        payerId: 'OLD1',
        memberId: 'M-OLD',
        effectiveFrom: '2025-01-01',
        createdBy: ws.admin.userId,
      }),
    );
    expect((await get(patient.id)).json()).toMatchObject({ id: 'cov_old_for_test', memberId: 'M-OLD' });

    const res = await put(patient.id, body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().id).not.toBe('cov_old_for_test');
    expect((await get(patient.id)).json()).toMatchObject({ id: res.json().id, memberId: 'M-100' });
    const rows = await coverageRows(patient.id);
    expect(rows.find((r) => r.id === 'cov_old_for_test')).toMatchObject({
      effective_from: '2025-01-01',
      effective_to: yesterday(),
    });
    expect(rows).toHaveLength(2);
  });

  it('PUTs at once leave what PUTs one after another leave: one open coverage (and the earlier one ended once)', async () => {
    const fresh = await createPatient(t, ws.admin.token);
    const earlier = await createPatient(t, ws.admin.token);
    await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
      tx.insert(patientCoverages).values({
        workspaceId: ws.id,
        id: `cov_old_race_${earlier.id}`,
        patientId: earlier.id,
        payerName: 'Old Payer',
        payerId: 'OLD1',
        memberId: 'M-OLD',
        effectiveFrom: '2025-01-01',
        createdBy: ws.admin.userId,
      }),
    );
    for (const patient of [fresh, earlier]) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          put(patient.id, { payerName: 'R1', payerId: '60054', memberId: `M${i + 1}` }),
        ),
      );
      expect(answers.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
      const rows = await coverageRows(patient.id);
      const open = rows.filter((r) => r.effective_to === null);
      expect(open, JSON.stringify(rows)).toHaveLength(1);
      expect(open[0].effective_from).toBe(today());
      // The last PUT to commit is on file, and it is one of the answers.
      const current = (await get(patient.id)).json();
      expect(current).toMatchObject({ id: open[0].id, memberId: open[0].member_id, effectiveTo: null });
      expect(answers.some((r) => r.json().memberId === current.memberId)).toBe(true);
      expect(rows).toHaveLength(patient === earlier ? 2 : 1);
      if (patient === earlier) {
        expect(rows.find((r) => r.id === `cov_old_race_${earlier.id}`)?.effective_to).toBe(yesterday());
      }
    }
  });

  it("starts on the caller's own date when sent (a US evening is already tomorrow in UTC), within a day of UTC", async () => {
    const utc = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    // 7:37 PM in New York on the 26th is the 27th in UTC: the web app sends the 26th, its own date.
    const evening = utc(-1);
    const patient = await createPatient(t, ws.admin.token);
    await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
      tx.insert(patientCoverages).values({
        workspaceId: ws.id,
        id: 'cov_before_evening',
        patientId: patient.id,
        payerName: 'Old Payer',
        payerId: 'OLD1',
        memberId: 'M-OLD',
        effectiveFrom: '2025-01-01',
        createdBy: ws.admin.userId,
      }),
    );
    const res = await put(patient.id, { ...body, today: evening });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ memberId: 'M-100', effectiveFrom: evening, effectiveTo: null });
    const rows = await coverageRows(patient.id);
    expect(rows.find((r) => r.id === 'cov_before_evening')?.effective_to).toBe(utc(-2));
    // On file that day (asked with the same date) and on the UTC date alike.
    const onDay = await t.request({
      method: 'GET',
      url: `/api/v1/patients/${patient.id}/coverage?today=${evening}`,
      token: ws.admin.token,
    });
    expect(onDay.json()).toMatchObject({ id: res.json().id, effectiveFrom: evening });
    expect((await get(patient.id)).json()).toMatchObject({ id: res.json().id });
    // A second change that evening corrects it in place.
    const again = await put(patient.id, { ...body, memberId: 'M-101', today: evening });
    expect(again.json()).toMatchObject({ id: res.json().id, memberId: 'M-101', effectiveFrom: evening });
    expect(await coverageRows(patient.id)).toHaveLength(2);

    // Auckland's morning is a day ahead of UTC: accepted too.
    const ahead = await createPatient(t, ws.admin.token);
    expect((await put(ahead.id, { ...body, today: utc(1) })).json().effectiveFrom).toBe(utc(1));

    // Nothing further than a day from UTC, and only a real date.
    for (const today of [utc(2), utc(-2), '2026-02-30', 'tomorrow']) {
      const refused = await put(patient.id, { ...body, today });
      expect(refused.statusCode, today).toBe(400);
      expect(refused.json().code).toBe('validation_failed');
      expect(refused.json().errors.map((e: { path: string }) => e.path)).toContain('body.today');
    }
    // A read never fails on a browser whose clock is off: a day too far is read as the UTC date; a non-date is 400.
    const skewed = await t.request({
      method: 'GET',
      url: `/api/v1/patients/${patient.id}/coverage?today=${utc(3)}`,
      token: ws.admin.token,
    });
    expect(skewed.statusCode, skewed.body).toBe(200);
    const plain = await t.request({
      method: 'GET',
      url: `/api/v1/patients/${patient.id}/coverage`,
      token: ws.admin.token,
    });
    expect(skewed.json()).toEqual(plain.json());
    const badQuery = await t.request({
      method: 'GET',
      url: `/api/v1/patients/${patient.id}/coverage?today=tomorrow`,
      token: ws.admin.token,
    });
    expect(badQuery.statusCode).toBe(400);
  });

  it('corrects in place a coverage set this same evening by the UTC date (before the caller sent its own)', async () => {
    const utc = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    const patient = await createPatient(t, ws.admin.token);
    // What a change at 7:37 PM in New York left before: the old one ending on the local today, the new one
    // starting on the UTC date (the local tomorrow).
    await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
      tx.insert(patientCoverages).values([
        {
          workspaceId: ws.id,
          id: 'cov_ev_old',
          patientId: patient.id,
          payerName: 'Old Payer',
          payerId: 'OLD1',
          memberId: 'M-OLD',
          effectiveFrom: '2025-01-01',
          effectiveTo: utc(-1),
          createdBy: ws.admin.userId,
        },
        {
          workspaceId: ws.id,
          id: 'cov_ev_utc',
          patientId: patient.id,
          payerName: 'Acme Health',
          payerId: 'ACME1',
          memberId: 'M-UTC',
          effectiveFrom: utc(0),
          createdBy: ws.admin.userId,
        },
      ]),
    );
    const res = await put(patient.id, { ...body, memberId: 'M-LOCAL', today: utc(-1) });
    expect(res.json()).toMatchObject({ id: 'cov_ev_utc', memberId: 'M-LOCAL', effectiveFrom: utc(-1) });
    const rows = await coverageRows(patient.id);
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.id === 'cov_ev_old')?.effective_to).toBe(utc(-2));
  });

  it('a change from a caller whose day is behind corrects the coverage one ahead set today, never overlapping it', async () => {
    const utc = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
    const patient = await createPatient(t, ws.admin.token);
    const first = await put(patient.id, { ...body, memberId: 'M-FIRST', today: utc(-1) });
    // Someone already past midnight (UTC+14) changes it: on file from their today, the first ends before it.
    const ahead = await put(patient.id, { ...body, memberId: 'M-AHEAD', today: utc(1) });
    expect(ahead.json()).toMatchObject({ memberId: 'M-AHEAD', effectiveFrom: utc(1) });
    // Someone still on yesterday (UTC−10) changes it again: the one ahead is today's, corrected in place.
    const behind = await put(patient.id, { ...body, memberId: 'M-BEHIND', today: utc(-1) });
    expect(behind.json()).toMatchObject({ id: ahead.json().id, memberId: 'M-BEHIND', effectiveFrom: utc(-1) });
    // Nothing overlaps: the first (set the same day as the correction) is gone, one coverage is on file.
    const rows = await coverageRows(patient.id);
    expect(rows.map((r) => [r.id, r.effective_from, r.effective_to])).toEqual([[ahead.json().id, utc(-1), null]]);
    expect(first.statusCode).toBe(200);
  });

  it('emits patient.updated with changed: coverage and without the insurance details', async () => {
    const patient = await createPatient(t, ws.admin.token);
    await put(patient.id, { ...body, memberId: 'M-NOT-IN-EVENT' });
    const events = await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
      queryRows<{ data: { patient: { id: string }; changed: string[] } }>(
        tx,
        sql`SELECT data FROM domain_events WHERE type = 'patient.updated' AND data->'patient'->>'id' = ${patient.id}`,
      ),
    );
    expect(events).toHaveLength(1);
    expect(events[0].data.changed).toEqual(['coverage']);
    expect(JSON.stringify(events[0].data)).not.toContain('M-NOT-IN-EVENT');
  });

  it('refuses missing or empty members with 400 and an unknown patient with 404', async () => {
    const patient = await createPatient(t, ws.admin.token);
    const missing = await put(patient.id, { payerName: 'Acme', payerId: 'A1' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors.map((e: { path: string }) => e.path)).toContain('body.memberId');
    expect((await put(patient.id, { ...body, payerName: '  ' })).statusCode).toBe(400);
    expect((await put('pat_nope', body)).statusCode).toBe(404);
    expect((await get('pat_nope')).statusCode).toBe(404);
    expect(await coverageRows(patient.id)).toHaveLength(0);
  });

  it('is the coverage the insurance-eligibility skill checks (and one the skill records is read back)', async () => {
    const patient = await createPatient(t, ws.admin.token, { dateOfBirth: '1980-12-10' });
    const installed = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/install',
      token: ws.admin.token,
      payload: { slug: 'insurance-eligibility', scopes: ['patients:read', 'billing:read', 'billing:write'] },
    });
    expect(installed.statusCode, installed.body).toBe(201);
    const invoke = (tool: string, input: unknown) =>
      t.request({
        method: 'POST',
        url: '/api/v1/skills/invoke',
        token: ws.admin.token,
        payload: { slug: 'insurance-eligibility', tool, input },
      });
    expect((await put(patient.id, { payerName: 'Aetna', payerId: 'AETNA', memberId: 'W987654321' })).statusCode).toBe(
      200,
    );
    const checked = await invoke('check_eligibility', { patientId: patient.id, serviceDate: today() });
    expect(checked.statusCode, checked.body).toBe(200);
    expect(checked.json().result).toMatchObject({ memberId: 'W987654321' });
    expect(checked.json().result.x12.request.subscriber.memberId).toBe('W987654321');

    const recorded = await invoke('record_coverage', {
      patientId: patient.id,
      payerId: 'AETNA',
      payerName: 'Aetna',
      memberId: 'W111',
      effectiveFrom: '2020-01-01',
      effectiveTo: '2020-12-31',
    });
    expect(recorded.statusCode, recorded.body).toBe(200);
    expect((await coverageRows(patient.id)).map((r) => r.member_id).sort()).toEqual(['W111', 'W987654321']);
    expect((await get(patient.id)).json().memberId).toBe('W987654321');
  });
});
