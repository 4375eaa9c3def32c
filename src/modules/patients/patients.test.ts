import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import {
  addMember,
  createPatient,
  createWorkspace,
  type TestWorkspace,
  waitForMail,
} from '../../../test/helpers/factories.js';
import { queryRows, withTenant } from '../../platform/db/tenant.js';

let t: TestApp;
let ws: TestWorkspace;

beforeAll(async () => {
  t = await createTestApp();
  await t.startBackground();
  ws = await createWorkspace(t, { tier: 'standard' });
});
afterAll(async () => t?.close());

const events = (type: string) =>
  withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
    queryRows<{ id: string; data: Record<string, unknown> }>(
      tx,
      sql`SELECT id, data FROM domain_events WHERE type = ${type} ORDER BY id`,
    ),
  );

describe('patients', () => {
  it('creates, reads, searches and updates, emitting patient.created and patient.updated in the outbox', async () => {
    const provider = await addMember(t, ws, { isProvider: true });
    const created = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      token: ws.admin.token,
      payload: {
        givenName: 'Grace',
        familyName: 'Hopper',
        dateOfBirth: '1906-12-09',
        mrn: 'MRN-1',
        preferredProviderId: provider.userId,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const patient = created.json();
    expect(patient).toMatchObject({
      id: expect.stringMatching(/^pat_/),
      givenName: 'Grace',
      dateOfBirth: '1906-12-09',
      mrn: 'MRN-1',
    });

    expect(
      (await t.request({ method: 'GET', url: `/api/v1/patients/${patient.id}`, token: ws.admin.token })).json(),
    ).toEqual(patient);
    const found = await t.request({ method: 'GET', url: '/api/v1/patients?q=hopp', token: ws.admin.token });
    expect(found.json().items.map((p: { id: string }) => p.id)).toEqual([patient.id]);
    // The command palette searches by full name, "family, given", MRN and exact date of birth.
    for (const q of ['grace hop', 'Hopper, Gr', 'mrn-1', '1906-12-09']) {
      const hit = await t.request({
        method: 'GET',
        url: `/api/v1/patients?q=${encodeURIComponent(q)}`,
        token: ws.admin.token,
      });
      expect(
        hit.json().items.map((p: { id: string }) => p.id),
        q,
      ).toEqual([patient.id]);
    }
    // Not a real day: no match and no database error.
    const impossible = await t.request({ method: 'GET', url: '/api/v1/patients?q=1906-02-30', token: ws.admin.token });
    expect(impossible.statusCode).toBe(200);
    expect(impossible.json().items).toEqual([]);

    const patched = await t.request({
      method: 'PATCH',
      url: `/api/v1/patients/${patient.id}`,
      token: ws.admin.token,
      payload: { mrn: null, givenName: 'Grace B.' },
    });
    expect(patched.json()).toMatchObject({ givenName: 'Grace B.', mrn: null, familyName: 'Hopper' });

    const createdEvents = await events('patient.created');
    expect(createdEvents.some((e) => (e.data.patient as { id: string }).id === patient.id)).toBe(true);
    const updatedEvents = await events('patient.updated');
    expect(updatedEvents.at(-1)?.data).toMatchObject({ patient: { id: patient.id }, changed: ['givenName', 'mrn'] });
  });

  it("opening a record writes one phi_access row per reader and hour; another workspace's patient is 404 and writes none", async () => {
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Ada', familyName: 'Lovelace' });
    const member = await addMember(t, ws);
    const open = (token: string, id = patient.id) => t.request({ method: 'GET', url: `/api/v1/patients/${id}`, token });
    const views = () =>
      withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
        queryRows<{ actor_user_id: string }>(
          tx,
          sql`SELECT actor_user_id FROM audit_log
               WHERE kind = 'phi_access' AND data->>'patientId' = ${patient.id}
                 AND data->>'context' = 'patients.record' ORDER BY at, id`,
        ),
      );
    for (let i = 0; i < 3; i++) expect((await open(ws.admin.token)).statusCode).toBe(200);
    expect((await open(member.token)).statusCode).toBe(200);
    expect((await views()).map((r) => r.actor_user_id)).toEqual([ws.admin.userId, member.userId]);
    // A view an hour ago no longer counts (the log is append-only: an earlier view is written as such).
    const member2 = await addMember(t, ws);
    await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
      tx.execute(
        sql`INSERT INTO audit_log (workspace_id, id, kind, at, actor_user_id, data)
            VALUES (${ws.id}, 'aud_earlier_view', 'phi_access', now() - interval '61 minutes', ${member2.userId},
                    ${JSON.stringify({ patientId: patient.id, context: 'patients.record' })}::jsonb)`,
      ),
    );
    expect((await open(member2.token)).statusCode).toBe(200);
    expect((await views()).map((r) => r.actor_user_id)).toEqual([
      member2.userId,
      ws.admin.userId,
      member.userId,
      member2.userId,
    ]);

    const other = await createWorkspace(t, { tier: 'standard' });
    const res = await open(other.admin.token);
    expect(res.statusCode).toBe(404);
    expect(await views()).toHaveLength(4);
  });

  it('pages with a cursor without repeats', async () => {
    for (let i = 0; i < 5; i++) await createPatient(t, ws.admin.token, { familyName: `Pager${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/v1/patients?q=Pager&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await t.request({ method: 'GET', url, token: ws.admin.token });
      seen.push(...res.json().items.map((p: { id: string }) => p.id));
      cursor = res.json().nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    const bad = await t.request({ method: 'GET', url: '/api/v1/patients?cursor=@@@', token: ws.admin.token });
    expect(bad.statusCode).toBe(400);
  });

  it('finds possible duplicates: exact given name, family name and date of birth, names ignoring case', async () => {
    const family = `Vance${Date.now()}`;
    const eleanor = await createPatient(t, ws.admin.token, {
      givenName: 'Eleanor',
      familyName: family,
      dateOfBirth: '1958-03-14',
    });
    // Near misses: another birth date, a longer given name, another family name with the same prefix.
    await createPatient(t, ws.admin.token, { givenName: 'Eleanor', familyName: family, dateOfBirth: '1958-03-15' });
    await createPatient(t, ws.admin.token, { givenName: 'Eleanora', familyName: family, dateOfBirth: '1958-03-14' });
    await createPatient(t, ws.admin.token, {
      givenName: 'Eleanor',
      familyName: `${family}x`,
      dateOfBirth: '1958-03-14',
    });
    const other = await createWorkspace(t);
    await createPatient(t, other.admin.token, { givenName: 'Eleanor', familyName: family, dateOfBirth: '1958-03-14' });

    const find = (query: string) =>
      t.request({ method: 'GET', url: `/api/v1/patients?${query}`, token: ws.admin.token });
    const exact = await find(
      new URLSearchParams({
        givenName: ' eLEANOR ',
        familyName: family.toUpperCase(),
        dateOfBirth: '1958-03-14',
      }).toString(),
    );
    expect(exact.statusCode, exact.body).toBe(200);
    expect(exact.json().items.map((p: { id: string }) => p.id)).toEqual([eleanor.id]);
    expect(exact.headers['cache-control']).toBe('no-store');

    // Accented names fold case as well.
    const zoe = await createPatient(t, ws.admin.token, { givenName: 'Zoë', familyName: `Émile${family}` });
    const accented = await find(new URLSearchParams({ givenName: 'ZOË', familyName: `émile${family}` }).toString());
    expect(accented.json().items.map((p: { id: string }) => p.id)).toEqual([zoe.id]);

    expect((await find('dateOfBirth=1958-02-30')).statusCode).toBe(400);
    expect((await find('givenName=')).statusCode).toBe(400);
  });

  it('rejects bad input and changes nothing', async () => {
    const before = (await events('patient.created')).length;
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      token: ws.admin.token,
      payload: { givenName: 'No', familyName: 'Provider', preferredProviderId: ws.admin.userId },
    });
    expect(res.statusCode).toBe(422);
    const empty = await t.request({
      method: 'PATCH',
      url: `/api/v1/patients/pat_x`,
      token: ws.admin.token,
      payload: {},
    });
    expect(empty.statusCode).toBe(400);
    expect((await events('patient.created')).length).toBe(before);
  });

  it('records insurance authorizations', async () => {
    const patient = await createPatient(t, ws.admin.token);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/authorizations`,
      token: ws.admin.token,
      payload: {
        service: 'physical-therapy',
        units: 12,
        unitMinutes: 45,
        validFrom: '2026-11-01',
        validTo: '2027-01-31',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ patientId: patient.id, units: 12, unitMinutes: 45 });
    const inverted = await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/authorizations`,
      token: ws.admin.token,
      payload: { service: 'pt', units: 1, unitMinutes: 30, validFrom: '2027-01-01', validTo: '2026-01-01' },
    });
    expect(inverted.statusCode).toBe(422);
    expect(inverted.json().code).toBe('invalid_period');
    const list = await t.request({
      method: 'GET',
      url: `/api/v1/patients/${patient.id}/authorizations`,
      token: ws.admin.token,
    });
    expect(list.json().items).toHaveLength(1);
  });

  it('break-glass writes an audit row, emits break_glass.invoked and e-mails every admin', async () => {
    const secondAdmin = await addMember(t, ws, { role: 'admin' });
    const nurse = { ...(await addMember(t, ws, { name: 'Nina Nurse' })), name: 'Nina Nurse' };
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Urgent' });
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/break-glass`,
      token: nurse.token,
      payload: { reason: 'Unconscious patient in ER' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const audit = await t.request({ method: 'GET', url: '/api/v1/audit?kind=break_glass', token: ws.admin.token });
    expect(audit.json().items[0]).toMatchObject({
      kind: 'break_glass',
      patientId: patient.id,
      reason: 'Unconscious patient in ER',
      actorUserId: nurse.userId,
    });
    expect((await events('break_glass.invoked')).at(-1)?.data).toMatchObject({
      patientId: patient.id,
      invokedBy: nurse.userId,
    });
    for (const to of [ws.admin.email, secondAdmin.email]) {
      // An admin added without a password was mailed a welcome first (the mailbox lists in no set order).
      await expect
        .poll(async () => (await waitForMail(t, to, 1, 200)).some((m) => /Break-glass/.test(m.subject)))
        .toBe(true);
      const mail = (await waitForMail(t, to)).filter((m) => /Break-glass/.test(m.subject));
      // Who in the subject, never the patient; the record, the reason and a link to it in the audit log inside.
      expect(mail[0].subject).toBe(`Break-glass access to a patient record by ${nurse.name}`);
      expect(mail[0].subject).not.toContain('Urgent');
      expect(mail[0].text).toContain(`Patient: Urgent `);
      expect(mail[0].text).toContain(`By: ${nurse.name} (${nurse.userId})`);
      expect(mail[0].text).toMatch(/When: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
      expect(mail[0].text).toContain('Unconscious patient in ER');
      expect(mail[0].text).toContain(
        `${t.app.atrium.selfUrl()}/admin/audit?kind=break_glass&patientId=${encodeURIComponent(patient.id)}`,
      );
    }
    const short = await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/break-glass`,
      token: nurse.token,
      payload: { reason: 'x' },
    });
    expect(short.statusCode).toBe(400);
  });
});
