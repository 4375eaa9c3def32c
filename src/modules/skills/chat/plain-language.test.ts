// Contract §4: the assistant works from plain language. It finds the patient by name (the built-in
// lookup, audited), chains the next tool, asks back only when two patients share the name, follows
// "her"/"his" to the patient named before, and its words never show internal ids or tool names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../../test/helpers/app.js';
import { createPatient, createWorkspace, type TestWorkspace } from '../../../../test/helpers/factories.js';

let t: TestApp;
let ws: TestWorkspace;
const ids: Record<string, string> = {};

type Turn = { role: 'user' | 'assistant'; content: string };
const chat = async (messages: Turn[]) => {
  const res = await t.request({ method: 'POST', url: '/api/v1/chat', token: ws.admin.token, payload: { messages } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    message: { content: string };
    toolCalls: {
      slug: string;
      tool: string;
      input: Record<string, unknown>;
      outcome: string;
      label: string;
      summary: string;
    }[];
  };
};

const INTERNAL_ID = /\b[a-z]{2,5}_[0-9a-z]{20,40}\b/;
const TOOL_NAMES =
  /\b[a-z0-9-]+__[a-z0-9_]+|check_eligibility|suggest_codes|precall_brief|classify_message|lookup_patient|units_remaining|register_patient|find_patient|structure_note/;

function expectPlain(content: string) {
  expect(content).not.toMatch(INTERNAL_ID);
  expect(content).not.toMatch(TOOL_NAMES);
}

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'advanced' });
  const install = (slug: string, scopes: string[]) =>
    t.request({ method: 'POST', url: '/api/v1/marketplace/install', token: ws.admin.token, payload: { slug, scopes } });
  for (const [slug, scopes] of [
    ['insurance-eligibility', ['patients:read', 'billing:read']],
    ['billing-codes', ['patients:read']],
    ['telehealth-brief', ['patients:read', 'billing:read']],
    ['mail-spam-filter', ['mail:read']],
    ['authorized-units', ['patients:read']],
    ['patient-intake', ['patients:read', 'patients:write']],
    ['patient-lookup', ['patients:read']],
    ['soap-structurer', []],
  ] as const) {
    const res = await install(slug, [...scopes]);
    expect(res.statusCode, res.body).toBe(201);
  }
  const maria = await createPatient(t, ws.admin.token, {
    givenName: 'Maria',
    familyName: 'Lopez',
    dateOfBirth: '1980-03-02',
  });
  ids.maria = maria.id;
  const coverage = await t.request({
    method: 'PUT',
    url: `/api/v1/patients/${maria.id}/coverage`,
    token: ws.admin.token,
    payload: { payerName: 'Acme Health', payerId: 'ACME1', memberId: 'M-1001' },
  });
  expect(coverage.statusCode, coverage.body).toBe(200);
  const note = await t.request({
    method: 'POST',
    url: '/api/v1/notes',
    token: ws.admin.token,
    payload: {
      patientId: maria.id,
      assessment: 'Essential hypertension, follow-up visit',
      plan: 'Continue lisinopril',
    },
  });
  expect(note.statusCode, note.body).toBe(201);
  const auth = await t.request({
    method: 'POST',
    url: `/api/v1/patients/${maria.id}/authorizations`,
    token: ws.admin.token,
    payload: {
      service: 'physical-therapy',
      units: 12,
      unitMinutes: 45,
      validFrom: '2026-01-01',
      validTo: '2030-12-31',
    },
  });
  expect(auth.statusCode, auth.body).toBe(201);
  const john1 = await createPatient(t, ws.admin.token, {
    givenName: 'John',
    familyName: 'Smith',
    dateOfBirth: '1970-01-15',
    mrn: 'JS-100',
  });
  const john2 = await createPatient(t, ws.admin.token, {
    givenName: 'John',
    familyName: 'Smith',
    dateOfBirth: '1992-11-20',
    mrn: 'JS-200',
  });
  ids.john1 = john1.id;
  ids.john2 = john2.id;
});
afterAll(async () => t?.close());

describe('the assistant in plain language', () => {
  it("checks Maria Lopez's insurance eligibility: looks her up, then checks, in plain words", async () => {
    const body = await chat([{ role: 'user', content: "Check Maria Lopez's insurance eligibility" }]);
    expect(body.toolCalls.map((c) => `${c.slug}/${c.tool}`)).toEqual([
      'assistant/lookup_patient',
      'insurance-eligibility/check_eligibility',
    ]);
    expect(body.toolCalls[1].input.patientId).toBe(ids.maria);
    expect(body.toolCalls[1].outcome).toBe('ok');
    expect(body.toolCalls[1].label).toBe('Check eligibility');
    expect(body.toolCalls[1].summary).not.toMatch(INTERNAL_ID);
    expectPlain(body.message.content);
    expect(body.message.content.length).toBeGreaterThan(10);
  });

  it('suggests billing codes for "her last note" after Maria was named earlier', async () => {
    const first = "Check Maria Lopez's insurance eligibility";
    const answer = (await chat([{ role: 'user', content: first }])).message.content;
    const body = await chat([
      { role: 'user', content: first },
      { role: 'assistant', content: answer },
      { role: 'user', content: 'Suggest billing codes for her last note' },
    ]);
    expect(body.toolCalls.map((c) => c.tool)).toEqual(['lookup_patient', 'suggest_codes_for_note']);
    expect(body.toolCalls[1].outcome).toBe('ok');
    expect(body.message.content).toContain('I10');
    expectPlain(body.message.content);
  });

  it('asks back when two patients share the name, then goes on with the one chosen by date of birth', async () => {
    const ask = await chat([{ role: 'user', content: 'Prepare a pre-call brief for John Smith' }]);
    expect(ask.toolCalls.map((c) => c.tool)).toEqual(['lookup_patient']);
    expect(ask.message.content).toContain('Which one do you mean?');
    expect(ask.message.content).toContain('1970-01-15');
    expect(ask.message.content).toContain('1992-11-20');
    expectPlain(ask.message.content);

    const chosen = await chat([
      { role: 'user', content: 'Prepare a pre-call brief for John Smith' },
      { role: 'assistant', content: ask.message.content },
      { role: 'user', content: 'The one born 1992-11-20' },
    ]);
    expect(chosen.toolCalls.map((c) => c.tool)).toEqual(['lookup_patient', 'precall_brief']);
    expect(chosen.toolCalls[1].input.patientId).toBe(ids.john2);
    expectPlain(chosen.message.content);
  });

  it('says so plainly when nobody has that name', async () => {
    const body = await chat([{ role: 'user', content: 'Check Nobody Atall insurance eligibility' }]);
    expect(body.message.content).toContain('could not find a patient named Nobody Atall');
    expectPlain(body.message.content);
  });

  it('classifies an e-mail as spam without needing a patient', async () => {
    const body = await chat([
      {
        role: 'user',
        content:
          'Is this email spam: URGENT! You won a $1,000,000 prize, click http://bit.ly/claim-now and send your bank password',
      },
    ]);
    expect(body.toolCalls.map((c) => c.tool)).toEqual(['classify_message']);
    expect(body.toolCalls[0].outcome).toBe('ok');
    expectPlain(body.message.content);
  });

  it('reads a name written in lower case', async () => {
    const body = await chat([{ role: 'user', content: 'check maria lopez insurance eligibility' }]);
    expect(body.toolCalls.map((c) => c.tool)).toEqual(['lookup_patient', 'check_eligibility']);
    expect(body.toolCalls[0].input).toEqual({ name: 'Maria Lopez' });
    expect(body.toolCalls[1].input.patientId).toBe(ids.maria);
    expectPlain(body.message.content);
  });

  it('goes on with the one chosen by MRN after asking which', async () => {
    const ask = await chat([{ role: 'user', content: 'Prepare a pre-call brief for John Smith' }]);
    const chosen = await chat([
      { role: 'user', content: 'Prepare a pre-call brief for John Smith' },
      { role: 'assistant', content: ask.message.content },
      // "mrn" is also a trigger of the patient-lookup skill: this still answers the question.
      { role: 'user', content: 'The one with MRN JS-100' },
    ]);
    expect(chosen.toolCalls.map((c) => c.tool)).toEqual(['lookup_patient', 'precall_brief']);
    expect(chosen.toolCalls[1].input.patientId).toBe(ids.john1);
    expectPlain(chosen.message.content);
  });

  it('tells the authorized units left for a named patient, naming her (authorized units)', async () => {
    const body = await chat([{ role: 'user', content: 'How many authorized units does Maria Lopez have left?' }]);
    expect(body.toolCalls.map((c) => `${c.slug}/${c.tool}`)).toEqual([
      'assistant/lookup_patient',
      'authorized-units/units_remaining',
    ]);
    expect(body.toolCalls[1].input.patientId).toBe(ids.maria);
    expect(body.message.content).toContain('Maria Lopez');
    expect(body.message.content).toContain('12 units');
    expectPlain(body.message.content);
  });

  it('registers a new patient from a sentence (patient intake)', async () => {
    const body = await chat([{ role: 'user', content: 'Register a new patient Ana Ruiz born 1990-04-12' }]);
    expect(body.toolCalls.map((c) => c.tool)).toEqual(['register_patient']);
    expect(body.toolCalls[0]).toMatchObject({
      outcome: 'ok',
      input: { givenName: 'Ana', familyName: 'Ruiz', dateOfBirth: '1990-04-12' },
    });
    expect(body.message.content).toContain('Ana Ruiz');
    expectPlain(body.message.content);
    const found = await t.request({ method: 'GET', url: '/api/v1/patients?q=Ana%20Ruiz', token: ws.admin.token });
    expect(found.json().items).toEqual([expect.objectContaining({ givenName: 'Ana', dateOfBirth: '1990-04-12' })]);
  });

  it('finds patients by a partial name with what tells them apart (patient lookup skill)', async () => {
    const body = await chat([{ role: 'user', content: 'Find patient smith' }]);
    expect(body.toolCalls.map((c) => `${c.slug}/${c.tool}`)).toEqual(['patient-lookup/find_patient']);
    expect(body.message.content).toContain('John Smith (born 1970-01-15, MRN JS-100)');
    expect(body.message.content).toContain('John Smith (born 1992-11-20, MRN JS-200)');
    expectPlain(body.message.content);
  });

  it('sorts a dictated note into SOAP sections (SOAP structurer)', async () => {
    const body = await chat([
      {
        role: 'user',
        content:
          'Structure this note: Patient reports cough for 3 days. Temp 38.2. Likely viral bronchitis. Rest and fluids.',
      },
    ]);
    expect(body.toolCalls.map((c) => c.tool)).toEqual(['structure_note']);
    expect(body.toolCalls[0].outcome).toBe('ok');
    expect(body.message.content).toMatch(/Subjective/);
    expectPlain(body.message.content);
  });

  it('audits every lookup like a tool call', async () => {
    const res = await t.request({
      method: 'GET',
      url: '/api/v1/audit?kind=skill_invocation&limit=200',
      token: ws.admin.token,
    });
    const lookups = (res.json().items as Record<string, unknown>[]).filter((r) => r.toolName === 'lookup_patient');
    expect(lookups.length).toBeGreaterThanOrEqual(4);
    expect(lookups[0]).toMatchObject({ slug: 'assistant', outcome: 'ok', via: 'chat' });
  });

  it('never offers the lookup without a patients:read grant', async () => {
    const bare = await createWorkspace(t, { tier: 'standard' });
    await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/install',
      token: bare.admin.token,
      payload: { slug: 'mail-spam-filter', scopes: ['mail:read'] },
    });
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/chat',
      token: bare.admin.token,
      payload: { messages: [{ role: 'user', content: "Check Maria Lopez's insurance eligibility" }] },
    });
    expect(res.json().toolCalls).toEqual([]);
  });
});

describe('a skill that is not installed', () => {
  it('is named as not installed, with where to get it, instead of a guess', async () => {
    const other = await createWorkspace(t, { tier: 'advanced' });
    const installed = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/install',
      token: other.admin.token,
      payload: { slug: 'billing-codes', scopes: ['patients:read'] },
    });
    expect(installed.statusCode, installed.body).toBe(201);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/chat',
      token: other.admin.token,
      payload: { messages: [{ role: 'user', content: "Check Eleanor Vance's insurance eligibility" }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const content = res.json().message.content as string;
    expect(content).toContain('The Insurance eligibility check skill is not installed in this workspace');
    expect(content).toContain('Marketplace');
    expect(res.json().toolCalls).toEqual([]);
    expectPlain(content);
  });
});

describe('a skill installed without the access its tools need', () => {
  it('is named with the access it misses and where to grant it, instead of a guess', async () => {
    const other = await createWorkspace(t, { tier: 'advanced' });
    const installed = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/install',
      token: other.admin.token,
      payload: { slug: 'insurance-eligibility', scopes: [] },
    });
    expect(installed.statusCode, installed.body).toBe(201);
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/chat',
      token: other.admin.token,
      payload: { messages: [{ role: 'user', content: "Check Eleanor Vance's insurance eligibility" }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const content = res.json().message.content as string;
    expect(content).toContain('The Insurance eligibility check skill is installed here');
    expect(content).toContain('patients:read');
    expect(content).toContain('billing:read');
    expect(content).toContain('Change access in the Marketplace');
    expect(res.json().toolCalls).toEqual([]);
    expectPlain(content);

    // Once the access is granted, the same words run the tool.
    const granted = await t.request({
      method: 'POST',
      url: '/api/v1/marketplace/install',
      token: other.admin.token,
      payload: { slug: 'insurance-eligibility', scopes: ['patients:read', 'billing:read'] },
    });
    expect(granted.statusCode, granted.body).toBe(200);
    const again = await t.request({
      method: 'POST',
      url: '/api/v1/chat',
      token: other.admin.token,
      payload: { messages: [{ role: 'user', content: "Check Eleanor Vance's insurance eligibility" }] },
    });
    expect(again.json().message.content).not.toContain('was not given the access');
  });
});
