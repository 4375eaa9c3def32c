import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectCalendar } from '../../../test/helpers/calendar.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const install = (ws: TestWorkspace, slug: string, scopes: string[] = []) =>
  t.request({ method: 'POST', url: '/api/v1/marketplace/install', token: ws.admin.token, payload: { slug, scopes } });
const uninstall = (ws: TestWorkspace, slug: string) =>
  t.request({ method: 'POST', url: '/api/v1/marketplace/uninstall', token: ws.admin.token, payload: { slug } });
const invoke = (token: string, slug: string, tool: string, input: unknown) =>
  t.request({ method: 'POST', url: '/api/v1/skills/invoke', token, payload: { slug, tool, input } });
const chat = (token: string, content: string) =>
  t.request({ method: 'POST', url: '/api/v1/chat', token, payload: { messages: [{ role: 'user', content }] } });

async function invocations(ws: TestWorkspace) {
  const res = await t.request({
    method: 'GET',
    url: '/api/v1/audit?kind=skill_invocation&limit=200',
    token: ws.admin.token,
  });
  return res.json().items as Record<string, unknown>[];
}

describe('dispatcher', () => {
  it('denies a tool whose scope is not granted (403 scope_denied), then runs it once granted; audits both', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const member = await addMember(t, ws);
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Grace', familyName: 'Hopper', mrn: 'MRN-77' });
    expect((await install(ws, 'patient-lookup', [])).statusCode).toBe(201);

    const denied = await invoke(member.token, 'patient-lookup', 'find_patient', { query: 'Hopper' });
    expect(denied.statusCode).toBe(403);
    expect(denied.headers['content-type']).toContain('application/problem+json');
    expect(denied.json()).toMatchObject({ code: 'scope_denied', requiredScopes: ['patients:read'], grantedScopes: [] });

    await install(ws, 'patient-lookup', ['patients:read']);
    const ok = await invoke(member.token, 'patient-lookup', 'find_patient', { query: 'Hopper' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().result.matches).toEqual([
      { id: patient.id, name: 'Grace Hopper', dateOfBirth: null, mrn: 'MRN-77' },
    ]);

    const rows = await invocations(ws);
    expect(rows.map((r) => r.outcome)).toEqual(['ok', 'denied']);
    for (const row of rows) {
      expect(row).toMatchObject({
        kind: 'skill_invocation',
        skillId: 'skl_patient_lookup',
        slug: 'patient-lookup',
        toolName: 'find_patient',
        caller: member.userId,
        actorUserId: member.userId,
      });
    }
  });

  it('validates input against inputSchema (422 invalid_input with paths) and 404s for skills not installed', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    await install(ws, 'soap-structurer');
    const bad = await invoke(ws.admin.token, 'soap-structurer', 'structure_note', { text: '', extra: 1 });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().code).toBe('invalid_input');
    expect(
      bad
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['input.extra', 'input.text']);
    const wrongType = await invoke(ws.admin.token, 'soap-structurer', 'structure_note', 'just a string');
    expect(wrongType.statusCode).toBe(422);
    const unknownTool = await invoke(ws.admin.token, 'soap-structurer', 'drop_tables', {});
    expect(unknownTool.statusCode).toBe(404);
    const notInstalled = await invoke(ws.admin.token, 'billing-codes', 'suggest_codes', { note: 'hypertension' });
    expect(notInstalled.statusCode).toBe(404);
    const rows = await invocations(ws);
    expect(rows.map((r) => [r.toolName, r.outcome, r.reason])).toEqual([
      ['suggest_codes', 'denied', 'not_found'],
      ['drop_tables', 'denied', 'not_found'],
      ['structure_note', 'denied', 'invalid_input'],
      ['structure_note', 'denied', 'invalid_input'],
    ]);
    const ok = await invoke(ws.admin.token, 'soap-structurer', 'structure_note', {
      text: 'Patient reports knee pain since Monday. BP 120/80 on exam. Assessment: likely sprain. Plan: follow up in two weeks.',
    });
    expect(ok.json().result).toMatchObject({
      subjective: ['Patient reports knee pain since Monday.'],
      objective: ['BP 120/80 on exam.'],
      assessment: ['Assessment: likely sprain.'],
      plan: ['Plan: follow up in two weeks.'],
    });
  });

  it('uninstall removes the tools at once from invoke, routing, content and chat', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    await install(ws, 'billing-codes', []);
    const routing = await t.request({ method: 'GET', url: '/api/v1/skills/routing', token: ws.admin.token });
    // suggest_codes_for_note needs patients:read, not granted: only suggest_codes is routed.
    expect(routing.json().items).toEqual([
      expect.objectContaining({
        slug: 'billing-codes',
        skillId: 'skl_billing_codes',
        triggers: expect.arrayContaining(['cpt']),
        tools: [expect.objectContaining({ name: 'suggest_codes' })],
      }),
    ]);
    const content = await t.request({
      method: 'GET',
      url: '/api/v1/skills/content?slug=billing-codes',
      token: ws.admin.token,
    });
    expect(content.json().items[0].content).toContain('evidence');
    const before = await chat(ws.admin.token, 'Suggest billing codes: hypertension follow-up visit');
    expect(before.json().toolCalls).toHaveLength(1);

    expect((await uninstall(ws, 'billing-codes')).statusCode).toBe(200);
    expect((await invoke(ws.admin.token, 'billing-codes', 'suggest_codes', { note: 'hypertension' })).statusCode).toBe(
      404,
    );
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/skills/routing', token: ws.admin.token })).json().items,
    ).toEqual([]);
    expect(
      (await t.request({ method: 'GET', url: '/api/v1/skills/content?slug=billing-codes', token: ws.admin.token }))
        .statusCode,
    ).toBe(404);
    const after = await chat(ws.admin.token, 'Suggest billing codes: hypertension follow-up visit');
    expect(after.statusCode).toBe(200);
    expect(after.json().toolCalls).toEqual([]);
  });
});

describe('built-in skills on workspace data', () => {
  it('insurance eligibility: records coverage, sends a 270 to the payer emulator and reads the 271', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const patient = await createPatient(t, ws.admin.token, {
      givenName: 'Ada',
      familyName: 'Byron',
      dateOfBirth: '1980-12-10',
    });
    await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/authorizations`,
      token: ws.admin.token,
      payload: { service: 'psychotherapy', units: 12, unitMinutes: 60, validFrom: '2026-01-01', validTo: '2026-06-30' },
    });
    await install(ws, 'insurance-eligibility', ['patients:read', 'billing:read']);
    const noCoverage = await invoke(ws.admin.token, 'insurance-eligibility', 'check_eligibility', {
      patientId: patient.id,
    });
    expect(noCoverage.statusCode).toBe(422);
    expect(noCoverage.json().code).toBe('no_coverage');
    // record_coverage needs billing:write, which is not granted yet.
    const coverage = {
      patientId: patient.id,
      payerId: 'AETNA',
      payerName: 'Aetna',
      memberId: 'W123456789',
      planName: 'Choice POS II',
      effectiveFrom: '2026-01-01',
      effectiveTo: '2026-12-31',
    };
    expect((await invoke(ws.admin.token, 'insurance-eligibility', 'record_coverage', coverage)).json().code).toBe(
      'scope_denied',
    );
    await install(ws, 'insurance-eligibility', ['patients:read', 'billing:read', 'billing:write']);
    expect((await invoke(ws.admin.token, 'insurance-eligibility', 'record_coverage', coverage)).statusCode).toBe(200);

    const active = await invoke(ws.admin.token, 'insurance-eligibility', 'check_eligibility', {
      patientId: patient.id,
      serviceDate: '2026-03-15',
      serviceTypeCode: 'MH',
    });
    expect(active.statusCode, active.body).toBe(200);
    const r = active.json().result;
    expect(r).toMatchObject({ status: 'active', memberId: 'W123456789', planName: 'Choice POS II', rejections: [] });
    expect(r.copay).toBeGreaterThanOrEqual(10);
    expect(r.authorizations).toEqual([
      expect.objectContaining({ service: 'psychotherapy', status: 'certified', unitsCertified: 12 }),
    ]);
    expect(r.x12.request).toMatchObject({
      transactionSetId: '270',
      subscriber: { memberId: 'W123456789', firstName: 'Ada', lastName: 'Byron', dateOfBirth: '19801210' },
      eligibilityInquiry: { dateOfService: '20260315', serviceTypeCodes: ['MH'] },
    });
    expect(r.x12.response.transactionSetId).toBe('271');
    // Deterministic: the same member gets the same benefits.
    const again = await invoke(ws.admin.token, 'insurance-eligibility', 'check_eligibility', {
      patientId: patient.id,
      serviceDate: '2026-03-15',
      serviceTypeCode: 'MH',
    });
    expect(again.json().result.copay).toBe(r.copay);

    const later = await invoke(ws.admin.token, 'insurance-eligibility', 'check_eligibility', {
      patientId: patient.id,
      serviceDate: '2027-02-01',
    });
    expect(later.json().result).toMatchObject({
      status: 'inactive',
      authorizations: [expect.objectContaining({ status: 'expired', unitsCertified: 0 })],
    });
  });

  it('payer failures become problem+json (502) and an error audit row', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const patient = await createPatient(t, ws.admin.token);
    await install(ws, 'insurance-eligibility', ['patients:read', 'billing:read', 'billing:write']);
    await invoke(ws.admin.token, 'insurance-eligibility', 'record_coverage', {
      patientId: patient.id,
      payerId: 'BCBS',
      payerName: 'Blue Cross',
      memberId: 'NF0000001',
      effectiveFrom: '2026-01-01',
    });
    const rejected = await invoke(ws.admin.token, 'insurance-eligibility', 'check_eligibility', {
      patientId: patient.id,
      serviceDate: '2026-05-01',
    });
    expect(rejected.json().result).toMatchObject({ status: 'rejected', rejections: [{ code: '75' }] });

    await fetch(`${t.baseUrl}/_emulators/payer/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'eligibility', status: 503 }),
    });
    const failed = await invoke(ws.admin.token, 'insurance-eligibility', 'check_eligibility', {
      patientId: patient.id,
    });
    expect(failed.statusCode).toBe(502);
    expect(failed.json()).toMatchObject({ code: 'upstream_failed', upstream: 'payer', upstreamStatus: 503 });
    expect(failed.body).not.toMatch(/at .*\.ts/);
    const rows = await invocations(ws);
    expect(rows[0]).toMatchObject({ toolName: 'check_eligibility', outcome: 'error', errorCode: 'upstream_failed' });
  });

  it('billing codes come with their evidence phrases and skip negated findings', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    await install(ws, 'billing-codes');
    const note =
      'Established patient follow-up visit for type 2 diabetes and hypertension. Denies chest pain. ' +
      'A1c drawn today. 53 minute psychotherapy session for generalized anxiety disorder.';
    const res = await invoke(ws.admin.token, 'billing-codes', 'suggest_codes', { note });
    expect(res.statusCode, res.body).toBe(200);
    const { cpt, icd10 } = res.json().result;
    const codes = (xs: { code: string }[]) => xs.map((x) => x.code);
    expect(codes(icd10)).toEqual(expect.arrayContaining(['E11.9', 'I10', 'F41.1']));
    expect(codes(icd10)).not.toContain('R07.9');
    expect(codes(cpt)).toEqual(expect.arrayContaining(['99213', '83036', '90837']));
    expect(codes(cpt)).not.toContain('90834');
    const diabetes = icd10.find((x: { code: string }) => x.code === 'E11.9');
    expect(diabetes.evidence[0]).toMatchObject({ phrase: 'type 2 diabetes', at: note.indexOf('type 2 diabetes') });
  });

  it('spam classification returns a label and a real probability', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    await install(ws, 'mail-spam-filter', ['mail:read']);
    const spam = await invoke(ws.admin.token, 'mail-spam-filter', 'classify_message', {
      subject: 'You WON',
      body: 'Congratulations! Claim your free gift card prize now, click here!!!',
    });
    expect(spam.json().result.label).toBe('spam');
    expect(spam.json().result.probability).toBeGreaterThan(0.9);
    const ham = await invoke(ws.admin.token, 'mail-spam-filter', 'classify_message', {
      body: 'Can you move the patient follow-up appointment to Thursday afternoon?',
    });
    expect(ham.json().result).toMatchObject({ label: 'ham' });
    expect(ham.json().result.spamProbability).toBeLessThan(0.2);
  });

  it('telehealth brief uses only granted scopes: coverage is withheld without billing:read', async () => {
    const ws = await createWorkspace(t, { tier: 'enterprise' });
    const colleague = await addMember(t, ws);
    const patient = await createPatient(t, ws.admin.token, {
      givenName: 'Alan',
      familyName: 'Turing',
      dateOfBirth: '1990-06-23',
      mrn: 'T-1',
    });
    const dm = await t.request({
      method: 'POST',
      url: '/api/v1/direct-messages',
      token: ws.admin.token,
      payload: { recipients: [colleague.userId], body: `Please review @patient:${patient.id} before the call` },
    });
    expect(dm.statusCode, dm.body).toBe(201);
    await install(ws, 'telehealth-brief', ['patients:read']);
    const brief = await invoke(ws.admin.token, 'telehealth-brief', 'precall_brief', { patientId: patient.id });
    expect(brief.statusCode, brief.body).toBe(200);
    const r = brief.json().result;
    expect(r.patient).toMatchObject({ id: patient.id, givenName: 'Alan', mrn: 'T-1' });
    expect(r.recentMentions).toEqual([
      expect.objectContaining({ excerpt: expect.stringContaining('before the call') }),
    ]);
    expect(r.coverage).toBeNull();
    expect(r.withheld).toEqual(expect.arrayContaining([{ section: 'coverage', scope: 'billing:read' }]));

    await install(ws, 'telehealth-brief', ['patients:read', 'billing:read']);
    const full = await invoke(ws.admin.token, 'telehealth-brief', 'precall_brief', { patientId: patient.id });
    expect(full.json().result.withheld).toEqual([]);
    const other = await addMember(t, ws);
    // Mentions come only from threads the caller takes part in.
    const outsider = await invoke(other.token, 'telehealth-brief', 'precall_brief', { patientId: patient.id });
    expect(outsider.json().result.recentMentions).toEqual([]);
    // A patient id of nowhere is a 404 problem, not a crash.
    const missing = await invoke(ws.admin.token, 'telehealth-brief', 'precall_brief', {
      patientId: 'pat_00000000000000000000000000',
    });
    expect(missing.statusCode).toBe(404);
  });

  it("telehealth brief names the patient's next appointment from the calendars, when in words, and reads cleanly", async () => {
    const ws = await createWorkspace(t, { tier: 'enterprise' });
    const colleague = await addMember(t, ws);
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Grace', familyName: 'Hopper' });
    await install(ws, 'telehealth-brief', ['patients:read']);
    // No calendar yet: nothing upcoming (the calendars are the source; there is always one).
    const before = await invoke(ws.admin.token, 'telehealth-brief', 'precall_brief', { patientId: patient.id });
    expect(before.json().result.summary).toContain('No upcoming appointment.');
    expect(before.json().result.summary).not.toContain('No appointment source');

    const { calendarId } = await connectCalendar(t, ws.admin.token, 'google', `brief-${ws.id}@google.example`);
    const start = new Date(Date.now() + 3 * 86_400_000);
    start.setUTCHours(15, 0, 0, 0);
    const visit = (title: string, at: Date) =>
      t.request({
        method: 'POST',
        url: '/api/v1/calendar/events',
        token: ws.admin.token,
        payload: {
          calendar: calendarId,
          draft: {
            title,
            start: at.toISOString(),
            end: new Date(at.getTime() + 30 * 60_000).toISOString(),
            timeZone: 'America/New_York',
            patientId: patient.id,
          },
        },
      });
    expect((await visit('Follow-up: Grace Hopper', start)).statusCode).toBe(201);
    expect((await visit('Later visit', new Date(start.getTime() + 7 * 86_400_000))).statusCode).toBe(201);
    await t.request({
      method: 'POST',
      url: '/api/v1/notes',
      token: ws.admin.token,
      payload: { patientId: patient.id, assessment: 'Stable angina.' },
    });
    await t.request({
      method: 'POST',
      url: '/api/v1/direct-messages',
      token: ws.admin.token,
      payload: { recipients: [colleague.userId], body: `Please review @patient:${patient.id} chart before the call` },
    });

    const brief = await invoke(ws.admin.token, 'telehealth-brief', 'precall_brief', { patientId: patient.id });
    expect(brief.statusCode, brief.body).toBe(200);
    const r = brief.json().result;
    expect(r.upcomingAppointment).toMatchObject({ title: 'Follow-up: Grace Hopper', start: start.toISOString() });
    const when = new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      weekday: 'short',
      month: 'short',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
    })
      .format(start)
      .replace(/[\u2009\u202f]/g, ' ');
    expect(r.summary).toContain(`Next appointment: Follow-up: Grace Hopper, ${when}.`);
    // The assessment's own full stop, not a second one; the mention as the patient's name, not its token.
    expect(r.summary).toContain('latest assessment: Stable angina. ');
    expect(r.summary).not.toContain('..');
    expect(r.recentMentions[0].excerpt).toBe('Please review Grace Hopper chart before the call');
    expect(r.summary).not.toContain('@patient:');

    // Google not answering: the next appointment is not known, which is not "none".
    await fetch(`${t.baseUrl}/_emulators/google/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ operation: 'events.list', status: 503, times: 20 }),
    });
    try {
      const outage = await invoke(ws.admin.token, 'telehealth-brief', 'precall_brief', { patientId: patient.id });
      expect(outage.statusCode, outage.body).toBe(200);
      expect(outage.json().result).toMatchObject({ upcomingAppointment: null, appointmentUnknown: true });
      expect(outage.json().result.summary).toContain('The calendars could not be read just now');
      expect(outage.json().result.summary).not.toContain('No upcoming appointment');
    } finally {
      await fetch(`${t.baseUrl}/_emulators/google/faults`, { method: 'DELETE' });
    }
  });
});

describe('chat', () => {
  it('routes to a granted tool through the dispatcher and answers from the result (offline model)', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const patient = await createPatient(t, ws.admin.token, { givenName: 'Katherine', familyName: 'Johnson' });
    await install(ws, 'patient-lookup', ['patients:read']);
    await install(ws, 'billing-codes');
    const res = await chat(ws.admin.token, 'Find patient Johnson');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.model).toEqual({ provider: 'emulator', name: 'atrium-offline-1', offline: true });
    expect(body.toolCalls).toEqual([
      expect.objectContaining({
        slug: 'patient-lookup',
        tool: 'find_patient',
        input: { query: 'Johnson' },
        outcome: 'ok',
      }),
    ]);
    // The answer names the patient and never shows the internal id (contract §4).
    expect(body.message.content).toContain('Katherine Johnson');
    expect(body.message.content).not.toContain(patient.id);

    const codes = await chat(ws.admin.token, 'What are the billing codes for: established patient with hypertension');
    expect(codes.json().toolCalls[0]).toMatchObject({ slug: 'billing-codes', tool: 'suggest_codes', outcome: 'ok' });
    expect(codes.json().message.content).toContain('I10');

    const rows = await invocations(ws);
    expect(rows.filter((r) => r.via === 'chat').map((r) => r.toolName)).toEqual(['suggest_codes', 'find_patient']);

    const nothing = await chat(ws.admin.token, 'Hello there');
    expect(nothing.json().toolCalls).toEqual([]);
    expect(nothing.json().message.content).toMatch(/offline model/);
  });
});
