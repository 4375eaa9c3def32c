// GET /audit (contract §3): every filter, cursor paging newest first, and the CSV download (RFC 4180,
// formula injection neutralised), documented in OpenAPI beside the JSON answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import type { AuditKind } from '../../platform/audit/audit.js';
import { withTenant } from '../../platform/db/tenant.js';
import { csvCell } from '../../platform/http/csv.js';
import { newId } from '../../platform/ids.js';
import { auditLog } from '../../platform/platform-tables.js';

let t: TestApp;
let ws: TestWorkspace;
const rows: Record<string, string> = {};
/** Rows the workspace had before these tests (its creation is audited), left out of the comparisons. */
const before = new Set<string>();
const TRICKY = '=HYPERLINK("http://evil.example"), Dr. "Bob"\nsecond line';

/** Appends an audit row with a chosen time (ids still ascend in insertion order, as in production). */
async function addRow(name: string, kind: AuditKind, actorUserId: string, at: string, data: Record<string, unknown>) {
  const id = newId('aud');
  await withTenant(t.database.db, { workspaceId: ws.id }, (tx) =>
    tx
      .insert(auditLog)
      .values({ workspaceId: ws.id, id, kind, actorUserId, requestId: `req-${name}`, at: new Date(at), data }),
  );
  rows[name] = id;
}

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  for (const item of (await get('?limit=200')).json().items) before.add(item.id);
  await addRow('r1', 'admin_action', 'usr_one', '2026-01-01T10:00:00Z', { action: 'webhooks.create', target: TRICKY });
  await addRow('r2', 'phi_access', 'usr_two', '2026-01-02T10:00:00Z', {
    patientId: 'pat_A',
    context: 'direct-messages',
  });
  await addRow('r3', 'break_glass', 'usr_one', '2026-01-03T10:00:00Z', {
    patientId: 'pat_A',
    reason: '+1 urgent, "ER"',
  });
  await addRow('r4', 'phi_access', 'usr_one', '2026-01-03T12:00:00Z', { patientId: 'pat_B', context: '@mention' });
});
afterAll(async () => t?.close());

const get = (query: string, headers: Record<string, string> = {}) =>
  t.request({ method: 'GET', url: `/api/v1/audit${query}`, token: ws.admin.token, headers });
const names = (body: { items: { id: string }[] }) =>
  body.items.filter((i) => !before.has(i.id)).map((i) => Object.keys(rows).find((k) => rows[k] === i.id) ?? i.id);

describe('GET /audit filters and paging', () => {
  const cases: [string, string[]][] = [
    ['', ['r4', 'r3', 'r2', 'r1']],
    ['?kind=phi_access', ['r4', 'r2']],
    ['?actorUserId=usr_one', ['r4', 'r3', 'r1']],
    ['?patientId=pat_A', ['r3', 'r2']],
    ['?from=2026-01-02&to=2026-01-03', ['r4', 'r3', 'r2']],
    ['?to=2026-01-03T11:00:00Z', ['r3', 'r2', 'r1']],
    ['?from=2026-01-03T10:00:00.000Z', ['r4', 'r3']],
    ['?kind=phi_access&actorUserId=usr_one&patientId=pat_B', ['r4']],
    ['?patientId=pat_nobody', []],
  ];
  for (const [query, expected] of cases) {
    it(`${query || 'no filter'} → ${expected.join(', ') || 'nothing'}`, async () => {
      const res = await get(query);
      expect(res.statusCode, res.body).toBe(200);
      expect(names(res.json())).toEqual(expected);
    });
  }

  it('returns each member of the row beside id, kind, at, actorUserId and requestId', async () => {
    expect((await get('?kind=break_glass')).json().items[0]).toEqual({
      id: rows.r3,
      kind: 'break_glass',
      at: '2026-01-03T10:00:00.000Z',
      actorUserId: 'usr_one',
      requestId: 'req-r3',
      patientId: 'pat_A',
      reason: '+1 urgent, "ER"',
    });
  });

  it('pages newest first with a cursor under a filter, without repeats, ending with nextCursor null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`?actorUserId=usr_one&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...names(res.json()));
      cursor = res.json().nextCursor;
    } while (cursor);
    expect(seen).toEqual(['r4', 'r3', 'r1']);
  });

  it('finds the audit rows of a real patient (break-glass through the API)', async () => {
    const patient = await createPatient(t, ws.admin.token);
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/patients/${patient.id}/break-glass`,
      token: ws.admin.token,
      payload: { reason: 'Patient unresponsive in clinic' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const items = (await get(`?patientId=${patient.id}`)).json().items;
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: 'break_glass', patientId: patient.id, actorUserId: ws.admin.userId });
  });

  it('refuses bad filters with 400 validation_failed', async () => {
    for (const query of [
      '?from=yesterday',
      '?from=2026-01-03&to=2026-01-02',
      '?kind=nope',
      '?cursor=%%%',
      '?format=xml',
    ]) {
      const res = await get(query);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
  });

  it('is for admins only', async () => {
    const member = await addMember(t, ws);
    const res = await t.request({ method: 'GET', url: '/api/v1/audit?format=csv', token: member.token });
    expect(res.statusCode).toBe(403);
  });
});

/** A minimal RFC 4180 reader, to prove the download parses back to the original values. */
function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      out.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell || row.length) throw new Error('CSV does not end with CRLF');
  return out;
}

describe('GET /audit as CSV', () => {
  it('sends the same filter as a text/csv attachment with a header row, for Accept: text/csv and format=csv', async () => {
    for (const [query, headers] of [
      ['?actorUserId=usr_one', { accept: 'text/csv' }],
      ['?actorUserId=usr_one&format=csv', {}],
      ['?actorUserId=usr_one', { accept: 'application/json;q=0.5, text/csv' }],
    ] as const) {
      const res = await get(query, headers);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="audit-\d{4}-\d{2}-\d{2}\.csv"$/);
      expect(res.headers['cache-control']).toBe('no-store');
      const table = parseCsv(res.body);
      expect(table[0]).toEqual([
        'id',
        'at',
        'kind',
        'actorUserId',
        'actorName',
        'requestId',
        'patientId',
        'action',
        'target',
        'reason',
        'outcome',
        'context',
        'details',
      ]);
      expect(table.slice(1).map((r) => r[0])).toEqual([rows.r4, rows.r3, rows.r1]);
    }
  });

  it('quotes commas, quotes and newlines (RFC 4180) and neutralises cells a spreadsheet would run as formulas', async () => {
    const res = await get('?format=csv');
    expect(res.body).toContain(`,"'=HYPERLINK(""http://evil.example""), Dr. ""Bob""\nsecond line",`);
    const byId = new Map(parseCsv(res.body).map((r) => [r[0], r]));
    expect(byId.get(rows.r1)?.slice(2, 9)).toEqual([
      'admin_action',
      'usr_one',
      '', // no such person: no name
      'req-r1',
      '',
      'webhooks.create',
      `'${TRICKY}`,
    ]);
    expect(byId.get(rows.r3)?.[9]).toBe(`'+1 urgent, "ER"`);
    expect(byId.get(rows.r4)?.[11]).toBe(`'@mention`);
    expect(byId.get(rows.r2)?.[1]).toBe('2026-01-02T10:00:00.000Z');
  });

  it('answers JSON when JSON is preferred, and a problem (not a broken download) for a bad cursor', async () => {
    const json = await get('', { accept: 'text/csv;q=0.4, application/json' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    const bad = await get('?format=csv&cursor=bm90LWpzb24');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('csvCell: empty for null, JSON for objects, quotes only when needed, quote prefix for = + - @ tab and CR', () => {
    expect(csvCell(null)).toBe('');
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell({ a: 1 })).toBe('"{""a"":1}"');
    for (const start of ['=', '+', '-', '@', '\t']) expect(csvCell(`${start}SUM(A1)`)).toBe(`'${start}SUM(A1)`);
    expect(csvCell('\rx')).toBe(`"'\rx"`);
    expect(csvCell('a=b')).toBe('a=b');
  });

  it('is documented in OpenAPI with both media types for 200', async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const ok = doc.paths['/api/v1/audit'].get.responses['200'];
    expect(Object.keys(ok.content).sort()).toEqual(['application/json', 'text/csv']);
    expect(ok.content['text/csv'].schema.type).toBe('string');
    expect(JSON.stringify(doc)).not.toContain('x-also-as');
  });
});
