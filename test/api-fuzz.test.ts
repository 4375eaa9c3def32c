// Hostile input across the whole public API: every operation of the OpenAPI document is called with
// well-formed requests that carry one hostile value each (NUL bytes, lone surrogates, very long
// text, numbers past the database's integer range, dates outside its calendar, another workspace's
// ids, wrong types) in its path, its query and its body. Nothing may answer 5xx, and every refusal
// of the API is problem+json (the emulators answer in their providers' own error shapes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { connectCalendar } from './helpers/calendar.js';
import { connectChannel, deliver } from './helpers/channels.js';
import { addMember, createPatient, createWorkspace, type TestWorkspace } from './helpers/factories.js';

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  default?: unknown;
  $ref?: string;
}

interface Operation {
  parameters?: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

let t: TestApp;
let ws: TestWorkspace;
let other: TestWorkspace;
let otherPatient: string;
let doc: { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

/** Real ids of the fuzzed workspace, by the names fields and path parameters give them. */
const ids: Record<string, string> = {};
/** Well-formed bodies where a reading of the schema alone does not give one. */
const bodies: Record<string, unknown> = {};
/** `{id}` of a path, by the collection segment before it. */
const byCollection: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp({ webhooks: { retryDelaysMs: [], timeoutMs: 1000, allowCidrs: ['127.0.0.0/8'] } });
  ws = await createWorkspace(t, { tier: 'enterprise' });
  other = await createWorkspace(t, { tier: 'enterprise' });
  otherPatient = (await createPatient(t, other.admin.token)).id;
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const api = async (method: 'POST' | 'GET' | 'PUT', url: string, payload?: object) => {
    const res = await t.request({ method, url: `/api/v1${url}`, token: ws.admin.token, payload });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return res.json();
  };
  const member = await addMember(t, ws, { isProvider: true });
  const patient = (await createPatient(t, ws.admin.token)).id;
  await api('PUT', `/patients/${patient}/coverage`, { payerName: 'Acme Health', payerId: 'ACME1', memberId: 'M123' });
  const authorization = (
    await api('POST', `/patients/${patient}/authorizations`, {
      service: 'Physical therapy',
      units: 12,
      unitMinutes: 45,
      validFrom: '2026-11-01',
      validTo: '2027-02-28',
    })
  ).id;
  const note = (
    await api('POST', '/notes', { patientId: patient, subjective: 's', objective: 'o', assessment: 'a', plan: 'p' })
  ).id;
  const claim = (
    await api('POST', '/claims', {
      patientId: patient,
      noteId: note,
      payer: 'Acme Health',
      amountCents: 12_000,
      codes: ['97110'],
      serviceDate: '2026-11-20',
    })
  ).id;
  const sent = await api('POST', '/direct-messages', { recipients: [member.userId], body: 'Hello' });
  const { connectionId, calendarId } = await connectCalendar(t, ws.admin.token, 'google');
  const event = (
    await api('POST', '/calendar/events', {
      calendar: calendarId,
      draft: { title: 'Visit', start: '2026-11-24T15:00:00Z', end: '2026-11-24T15:30:00Z', patientId: patient },
    })
  ).eventId;
  const webhook = (await api('POST', '/admin/webhooks', { url: 'https://127.0.0.1:9/hook' })).id;
  const task = (await api('POST', '/tasks', { title: 'Call back', assigneeUserId: member.userId })).id;
  const channel = await connectChannel(t, ws.admin.token, 'telegram');
  await deliver(t, channel, { id: '5001', from: '777', text: 'Hi there', name: 'Pat' });
  const conversation = (await api('GET', '/channels/conversations')).items[0];
  const token = (await api('POST', '/auth/tokens', { name: 'fuzz' })).id;
  Object.assign(ids, {
    patientId: patient,
    noteId: note,
    claimId: claim,
    authorizationId: authorization,
    threadId: sent.threadId,
    lastReadMessageId: sent.message.id,
    endpointId: webhook,
    calendar: calendarId,
    calendarId,
    connectionId,
    event,
    eventId: event,
    userId: member.userId,
    assigneeUserId: member.userId,
    hostUserId: member.userId,
    conversationId: conversation?.id,
    contactId: conversation?.contact?.id,
    workspaceId: ws.id,
    // A window or span the routes accept (a reading of the schema gives start = end).
    timeMin: '2026-11-23T00:00:00Z',
    timeMax: '2026-11-30T00:00:00Z',
    start: '2026-11-25T15:00:00Z',
    end: '2026-11-25T15:30:00Z',
  });
  Object.assign(byCollection, {
    patients: patient,
    notes: note,
    claims: claim,
    authorizations: authorization,
    tasks: task,
    channels: channel.id,
    conversations: conversation?.id,
    contacts: conversation?.contact?.id,
    connections: connectionId,
    tokens: token,
    workspaces: ws.id,
    members: member.userId,
    webhooks: webhook,
  });
  Object.assign(bodies, {
    'post /api/v1/patients': { givenName: 'Ada', familyName: 'Lovelace', dateOfBirth: '1980-04-23', mrn: 'MRN-9' },
    'patch /api/v1/patients/{id}': { givenName: 'Ada', dateOfBirth: '1980-04-23' },
    'post /api/v1/admin/webhooks': { url: 'https://127.0.0.1:9/hook', events: ['*'], description: 'd' },
    'patch /api/v1/admin/webhooks/{id}': { url: 'https://127.0.0.1:9/hook2', events: ['*'], enabled: true },
    'post /api/v1/direct-messages': { recipients: [member.userId], body: 'Hi', title: 'T' },
    'post /api/v1/direct-messages/{threadId}': { body: 'Hi' },
    'patch /api/v1/direct-messages/{threadId}': { read: true, lastReadMessageId: sent.message.id },
    'post /api/v1/calendar/events': {
      calendar: calendarId,
      draft: { title: 'Visit', start: '2026-11-25T15:00:00Z', end: '2026-11-25T15:30:00Z', patientId: patient },
    },
    'patch /api/v1/calendar/events': {
      event,
      draft: { title: 'Moved', start: '2026-11-25T16:00:00Z', end: '2026-11-25T16:30:00Z' },
    },
    'post /api/v1/calendar/sessions/from-authorization': {
      patientId: patient,
      authorizationId: authorization,
      calendar: calendarId,
      firstStart: '2026-12-01T15:00:00Z',
      timeZone: 'America/New_York',
      frequency: 'weekly',
      units: 1,
    },
    'post /api/v1/tasks': {
      title: 'Call',
      eventId: event,
      dueAt: '2026-12-01T15:00:00Z',
      assigneeUserId: member.userId,
    },
    'patch /api/v1/tasks/{id}': { title: 'Call', dueAt: '2026-12-01T15:00:00Z', done: true },
    'post /api/v1/channels': { channel: 'viber', name: 'Viber line', credentials: { authToken: 'a'.repeat(24) } },
    'post /api/v1/channels/conversations/{id}/messages': { text: 'Hello' },
    'put /api/v1/channels/contacts/{id}/patient': { patientId: patient },
    'post /api/v1/auth/switch-workspace': { workspaceId: ws.id },
  });
}, 120_000);
afterAll(async () => t?.close());

const resolve = (s: Schema | undefined): Schema | undefined => {
  if (!s?.$ref) return s;
  const name = s.$ref.split('/').at(-1)!;
  return resolve(doc.components?.schemas?.[name]);
};

/** A value the schema accepts (as far as a simple reading of it goes). */
function sample(raw: Schema | undefined, depth = 0, name = ''): unknown {
  if (ids[name]) return ids[name];
  const s = resolve(raw);
  if (!s || depth > 6) return 'x';
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return sample(alt.find((a) => resolve(a)?.type !== 'null') ?? alt[0], depth + 1);
  if (s.allOf) return sample(s.allOf[0], depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) out[k] = sample(v, depth + 1, k);
      return out;
    }
    case 'array':
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sample(s.items, depth + 1));
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      if (s.format === 'date-time') return '2026-11-24T10:00:00.000Z';
      if (s.format === 'date') return '2026-11-24';
      if (s.format === 'email') return 'fuzz@example.test';
      if (s.format === 'uri') return 'https://example.test/x';
      return 'a'.repeat(Math.max(1, s.minLength ?? 1));
  }
}

/**
 * Text that passes a loose schema and then trips a database or a parser: very long, dates outside
 * PostgreSQL's calendar or not on it, numbers past any integer type.
 */
const HOSTILE_TEXT = [
  // Past every length limit and PostgreSQL's largest index entry (~2.7 kB).
  'x'.repeat(10_000),
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+14:00',
  '0000-01-01',
  '9'.repeat(40),
];
/** Text refused by one shared check (NUL, lone surrogates) or harmless by construction: tried once per operation. */
const HOSTILE_ONCE = [
  'a\u0000b',
  '\ud800',
  '+275760-09-13T00:00:00.000Z',
  '2026-02-30T10:00:00Z',
  "' OR 1=1 --",
  '%00',
];

const DATE_LIKE = /^\d{4}-\d{2}-\d{2}/;

/**
 * Hostile values for a body field, chosen by its good value: a time or day gets the dates, other text
 * the long and numeric text (wrong types cost a schema check only). Query parameters, which a search
 * may read as a date, get every hostile text.
 */
function hostileFor(good: unknown): unknown[] {
  if (typeof good === 'string') {
    return [...HOSTILE_TEXT.filter((v) => DATE_LIKE.test(v) === DATE_LIKE.test(good)), null, 2 ** 31];
  }
  if (typeof good === 'number') return [2 ** 31, 2 ** 63, -1, 1e308, 0.5, '1', null];
  if (typeof good === 'boolean') return ['true', null];
  return [null, [], 'x'.repeat(10_000), [[[[[]]]]]];
}

/** The good body, then every top-level (and one level down) field replaced in turn by its hostile values. */
function* mutations(body: unknown): Generator<unknown> {
  yield body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const firstText = Object.entries(body).find(([, v]) => typeof v === 'string')?.[0];
  if (firstText) for (const value of HOSTILE_ONCE) yield { ...(body as object), [firstText]: value };
  for (const [key, inner] of Object.entries(body)) {
    for (const value of hostileFor(inner)) yield { ...(body as object), [key]: value };
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
      for (const [k, v] of Object.entries(inner)) {
        for (const value of hostileFor(v)) yield { ...(body as object), [key]: { ...inner, [k]: value } };
      }
    }
  }
}

/** URL-encoded; a lone surrogate (which UTF-8 cannot hold) goes out as the bytes of one, invalid UTF-8. */
const enc = (v: unknown) =>
  (typeof v === 'string' ? v : JSON.stringify(v))
    .split(/([\ud800-\udfff])/)
    .map((part) => (/^[\ud800-\udfff]$/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');

describe('hostile input on every operation', () => {
  it('never answers 5xx, and every refusal is problem+json', async () => {
    const failures: string[] = [];
    const reached = new Set<string>();
    let requests = 0;
    const hostileIds = [...HOSTILE_ONCE.slice(0, 2), otherPatient, other.id, 'x'.repeat(3000)];
    // What removes the fuzzed resources, signs out or changes the workspace's tier goes last.
    const last = (o: { path: string; method: string }) =>
      o.method === 'delete' || o.path.startsWith('/api/v1/operator/') || o.path === '/api/v1/auth/sign-out';
    const operations = Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))
      .filter(({ method }) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .sort((a, b) => Number(last(a)) - Number(last(b)));
    for (const { path, method, op } of operations) {
      if ('text/event-stream' in (op.responses?.['200']?.content ?? {})) continue; // streams stay open
      const params = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === 'path');
      const query = params.filter((p) => p.in === 'query');
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      const real = (name: string, at: number) => {
        if (ids[name]) return ids[name];
        const collection = path.slice(0, at).split('/').filter(Boolean).at(-1) ?? '';
        return byCollection[collection] ?? 'x_01unknown';
      };
      const fill = (values: Record<string, unknown>) =>
        path.replace(/\{(\w+)\}/g, (_, name: string, at: number) => enc(values[name] ?? real(name, at)));
      const base = fill({});
      // Required parameters (and those naming one of our ids) with a good value; each one in turn hostile.
      const validPair = (q: (typeof query)[number]) => `${q.name}=${enc(sample(q.schema, 0, q.name))}`;
      const validQuery = query.filter((q) => q.required || ids[q.name]).map(validPair);
      const cases: { url: string; body?: unknown }[] = [];
      // The well-formed request itself first (with a body: the first of the body's cases).
      if (!bodySchema || method === 'get')
        cases.push({ url: validQuery.length ? `${base}?${validQuery.join('&')}` : base });
      for (const p of pathParams) for (const v of hostileIds) cases.push({ url: fill({ [p.name]: v }) });
      for (const [i, q] of query.entries()) {
        const rest = query.filter((x) => x !== q && (x.required || ids[x.name])).map(validPair);
        for (const v of [...HOSTILE_TEXT, otherPatient, ...(i === 0 ? HOSTILE_ONCE : [])]) {
          cases.push({ url: `${base}?${[...rest, `${q.name}=${enc(v)}`].join('&')}` });
        }
        cases.push({ url: `${base}?${validQuery.join('&')}&${q.name}=a&${q.name}=b` });
      }
      if (bodySchema && method !== 'get') {
        for (const body of mutations(bodies[`${method} ${path}`] ?? sample(bodySchema)))
          cases.push({ url: base, body });
      }
      // A password is hashed slowly on purpose: those operations get their first cases only.
      const slow = /\/auth\/(sign-in|password|accept-invitation)|\/operator\/workspaces/.test(path);
      for (const c of slow ? cases.slice(0, 16) : cases) {
        requests++;
        const res = await t.app.inject({
          method: method.toUpperCase() as 'GET',
          url: c.url,
          headers: {
            authorization: `Bearer ${path.startsWith('/api/v1/operator/') ? t.config.operatorToken : ws.admin.token}`,
            'content-type': 'application/json',
          },
          ...(c.body !== undefined ? { payload: JSON.stringify(c.body) } : {}),
        });
        if (res.statusCode < 300) reached.add(`${method} ${path}`);
        const type = String(res.headers['content-type'] ?? '');
        // Our API refuses with problem+json; an emulator answers in its provider's own error shape.
        const ours = path.startsWith('/api/');
        if (res.statusCode >= 500 || (ours && res.statusCode >= 400 && !type.includes('application/problem+json'))) {
          failures.push(
            `${method.toUpperCase()} ${path} → ${res.statusCode} ${type}: ${c.url.slice(0, 120)} ` +
              `${JSON.stringify(c.body)?.slice(0, 160) ?? ''} :: ${res.body.slice(0, 200)}`,
          );
        }
      }
    }
    expect(failures, failures.slice(0, 40).join('\n')).toEqual([]);
    // The fuzz stays deep: most operations took their well-formed request, so the hostile ones
    // reached the handlers and the database, not only the schema check.
    expect(reached.size, [...reached].join(', ')).toBeGreaterThanOrEqual(100);
    expect(requests).toBeGreaterThan(2000);
  }, 120_000);
});
