// The OpenAPI document says what the service really sends and takes beyond the route schemas:
// Idempotency-Key on exactly the operations that honour it, X-Request-Id on every response,
// Retry-After wherever it is sent, the raw request bodies of the webhook and mail receivers, and the
// channel emulators' sent lists (contract §11). Clients are generated from the document.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { connectChannel, deliver, senderId } from '../../../test/helpers/channels.js';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/factories.js';
import { assertMatchesOpenApi } from '../../../test/helpers/openapi-check.js';
import { authModeOf } from '../auth/authenticate.js';
import { honoursIdempotencyKey } from '../idempotency.js';

interface Header {
  $ref?: string;
  required?: boolean;
  description?: string;
  schema?: { pattern?: string };
}
interface Response {
  headers?: Record<string, Header>;
  content?: Record<string, { schema?: object }>;
}
interface Operation {
  parameters?: {
    $ref?: string;
    name: string;
    in: string;
    required?: boolean;
    description?: string;
    schema?: { pattern?: string };
  }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: { type?: string } }> };
  responses?: Record<string, Response>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: {
    headers?: Record<string, Header>;
    schemas?: Record<string, object>;
    parameters?: Record<string, { name: string; in: string; required?: boolean; description?: string }>;
  };
}

let t: TestApp;
let ws: TestWorkspace;
let doc: Doc;

beforeAll(async () => {
  t = await createTestApp();
  ws = await createWorkspace(t, { tier: 'standard' });
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(async () => t?.close());

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op, key: `${method} ${path}` })),
  );
const header = (h: Header | undefined): Header | undefined =>
  h?.$ref ? doc.components.headers?.[h.$ref.split('/').at(-1)!] : h;
const idempotencyParameter = (op: Operation) =>
  op.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');

describe('Idempotency-Key', () => {
  it('is declared on exactly the operations whose route honours it', () => {
    const documented = operations()
      .filter(({ op }) => idempotencyParameter(op))
      .map(({ key }) => key)
      .sort();
    // From the route table, by the predicate the runtime asks (platform/idempotency.ts).
    const honouring = t.app.atrium.routes
      .filter((r) => honoursIdempotencyKey({ auth: r.auth, idempotent: r.idempotent }, r.url))
      .map((r) => `${r.method.toLowerCase()} ${r.url.replace(/:(\w+)/g, '{$1}')}`)
      .sort();
    expect(documented).toEqual(honouring);
    expect(documented).toEqual(
      [
        'post /api/v1/admin/webhooks',
        'post /api/v1/calendar/events',
        'post /api/v1/calendar/sessions/from-authorization',
        'post /api/v1/direct-messages',
        'post /api/v1/direct-messages/{threadId}',
        'post /api/v1/patients',
        'post /api/v1/tasks',
      ].sort(),
    );
    const parameter = idempotencyParameter(doc.paths['/api/v1/patients'].post)!;
    expect(parameter.name).toBe('Idempotency-Key');
    expect(parameter.required).toBe(false);
    expect(parameter.description).toMatch(/same key and the same body within 24 h/);
    expect(parameter.description).toMatch(/422 `idempotency_key_reused`/);
    expect(new RegExp(parameter.schema!.pattern!).test('key-1')).toBe(true);
    expect(new RegExp(parameter.schema!.pattern!).test('a key')).toBe(false);
    // A replay says so.
    const created = doc.paths['/api/v1/patients'].post.responses!['201'];
    expect(header(created.headers?.['Idempotent-Replayed'])?.description).toMatch(/stored answer/);
    expect(doc.paths['/api/v1/patients'].get.responses!['200'].headers?.['Idempotent-Replayed']).toBeUndefined();
  });

  it('is honoured where declared and ignored where not, and a replay is as documented', async () => {
    const patient = { givenName: 'Ada', familyName: 'Lovelace' };
    const post = (url: string, payload: object, key: string) =>
      t.request({ method: 'POST', url, token: ws.admin.token, payload, headers: { 'idempotency-key': key } });
    const refused = await post('/api/v1/patients', patient, 'not a key');
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([{ path: 'headers.idempotency-key', message: 'Invalid key' }]);
    const first = await post('/api/v1/patients', patient, 'doc-key-1');
    const again = await post('/api/v1/patients', patient, 'doc-key-1');
    expect(again.statusCode).toBe(201);
    expect(again.json().id).toBe(first.json().id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await post('/api/v1/patients', { ...patient, givenName: 'Bea' }, 'doc-key-1')).json().code).toBe(
      'idempotency_key_reused',
    );
    // An operation without the parameter does not read the header at all.
    expect(idempotencyParameter(doc.paths['/api/v1/auth/tokens'].post)).toBeUndefined();
    expect((await post('/api/v1/auth/tokens', { name: 'doc' }, 'not a key')).statusCode).toBe(201);
  });
});

describe('X-Atrium-Workspace', () => {
  const refs = (op: Operation) => (op.parameters ?? []).flatMap((p) => (p.$ref ? [p.$ref] : []));

  it('is one shared parameter, on every operation whose authentication compares it', () => {
    const shared = doc.components.parameters?.Workspace;
    expect(shared).toMatchObject({ name: 'X-Atrium-Workspace', in: 'header', required: false });
    expect(shared?.description).toMatch(/409 `workspace_changed`/);
    expect(shared?.description).toMatch(/Without it a request acts on the current workspace/);
    const documented = operations()
      .filter(({ op }) => refs(op).includes('#/components/parameters/Workspace'))
      .map(({ key }) => key)
      .sort();
    // Every signed-in route of the route table, but switching workspace and signing out (they act on none).
    const inDocument = new Set(operations().map(({ key }) => key));
    const checked = t.app.atrium.routes
      .filter((r) => ['user', 'admin'].includes(authModeOf(r.auth, r.url)))
      .map((r) => `${r.method.toLowerCase()} ${r.url.replace(/:(\w+)/g, '{$1}')}`)
      .filter((key) => inDocument.has(key))
      .filter((key) => !['post /api/v1/auth/switch-workspace', 'post /api/v1/auth/sign-out'].includes(key))
      .sort();
    expect(documented).toEqual(checked);
    expect(documented.length).toBeGreaterThan(100);
    expect(documented).not.toContain('post /api/v1/auth/sign-in');
    // Not a header an operation declares by itself as well.
    for (const { key, op } of operations()) {
      expect(op.parameters?.some((p) => p.name?.toLowerCase() === 'x-atrium-workspace') ?? false, key).toBe(false);
    }
  });

  it('event streams take it as the query parameter `workspace` too (EventSource sends no headers)', () => {
    expect(doc.components.parameters?.WorkspaceQuery).toMatchObject({ name: 'workspace', in: 'query' });
    const streams = operations()
      .filter(({ op }) => refs(op).includes('#/components/parameters/WorkspaceQuery'))
      .map(({ key }) => key)
      .sort();
    expect(streams).toEqual(['get /api/v1/channels/events', 'get /api/v1/direct-messages/{threadId}/events']);
  });
});

describe('response headers', () => {
  it('X-Request-Id is declared, required, on every response of every operation', async () => {
    expect(header({ $ref: '#/components/headers/RequestId' })?.required).toBe(true);
    let responses = 0;
    for (const { key, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        responses++;
        const requestId = header(response.headers?.['X-Request-Id']);
        expect(requestId?.required, `${key} ${status}`).toBe(true);
      }
    }
    expect(responses).toBeGreaterThan(400);
    // The pattern is the one a sent id is echoed by.
    const pattern = new RegExp(header({ $ref: '#/components/headers/RequestId' })!.schema!.pattern!);
    const echoed = await t.request({
      method: 'GET',
      url: '/api/v1/me',
      token: ws.admin.token,
      headers: { 'x-request-id': 'trace.42:a-b_c' },
    });
    expect(echoed.headers['x-request-id']).toBe('trace.42:a-b_c');
    const generated = await t.request({
      method: 'GET',
      url: '/api/v1/me',
      token: ws.admin.token,
      headers: { 'x-request-id': 'no spaces' },
    });
    expect(generated.headers['x-request-id']).toMatch(/^req_/);
    expect(pattern.test(String(generated.headers['x-request-id']))).toBe(true);
    expect(pattern.test('no spaces')).toBe(false);
  });

  it('Retry-After is declared wherever the API may send it: every answer that may be a 429, and 502/503', () => {
    let limited = 0;
    for (const { path, key, op } of operations()) {
      if (!path.startsWith('/api/')) continue;
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const retryAfter = header(response.headers?.['Retry-After']);
        if (status === '429') expect(retryAfter?.required, `${key} ${status}`).toBe(true);
        if (status === '4XX') {
          limited++;
          expect(retryAfter?.description, `${key} ${status}`).toMatch(/429 `rate_limited`/);
        }
        if (status === '5XX') expect(retryAfter?.description, `${key} ${status}`).toMatch(/503 `unavailable`/);
        // The cron health checks' failing report (health+json) comes without one.
        if (status === '503' && response.content?.['application/health+json']) expect(retryAfter).toBeUndefined();
      }
    }
    expect(limited).toBeGreaterThan(100);
  });

  it('the response check every integration test runs refuses a response without a required header', async () => {
    const me = await t.request({ method: 'GET', url: '/api/v1/me', token: ws.admin.token });
    expect(() => assertMatchesOpenApi(t.app, 'GET', '/api/v1/me', me)).not.toThrow();
    const { 'x-request-id': _dropped, ...rest } = me.headers;
    const without = { statusCode: me.statusCode, headers: rest, body: me.body } as never;
    expect(() => assertMatchesOpenApi(t.app, 'GET', '/api/v1/me', without)).toThrow(/X-Request-Id is missing/);
  });
});

describe('raw request bodies', () => {
  it('are declared with the media types the receivers take', () => {
    const bodyTypes = (path: string) => {
      const body = doc.paths[path].post.requestBody;
      expect(body?.required, path).toBe(true);
      return Object.keys(body?.content ?? {});
    };
    expect(bodyTypes('/api/v1/mail/inbound')).toEqual(['message/rfc822']);
    expect(bodyTypes('/_emulators/mail/messages')).toEqual(['message/rfc822']);
    for (const channel of ['telegram', 'whatsapp', 'messenger', 'instagram', 'viber']) {
      expect(bodyTypes(`/api/v1/${channel}/webhook`)).toEqual(['application/json']);
    }
    expect(bodyTypes('/api/v1/sms/webhook')).toEqual(['application/x-www-form-urlencoded']);
    // The markers the document is built from are gone.
    expect(JSON.stringify(doc)).not.toMatch(/x-reads-body|x-idempotent/);
  });

  it('are not validated: the bytes reach the receivers as sent', async () => {
    // Not JSON, not a form, no signature: the receiver's own verdict (401), not a schema's (400/415).
    for (const [url, type] of [
      ['/api/v1/telegram/webhook?connection=chc_x', 'application/json'],
      ['/api/v1/viber/webhook?connection=chc_x', 'text/plain'],
      ['/api/v1/sms/webhook?connection=chc_x', 'application/x-www-form-urlencoded'],
    ]) {
      const res = await t.request({ method: 'POST', url, headers: { 'content-type': type }, payload: '{not json' });
      expect(res.statusCode, url).toBe(401);
      expect(res.json().code).toBe('unauthenticated');
    }
    // JSON sent to the mail receiver is not checked against the message/rfc822 schema: the route refuses it.
    const json = await t.request({
      method: 'POST',
      url: '/api/v1/mail/inbound',
      token: t.config.operatorToken,
      payload: { raw: 'x' },
    });
    expect(json.statusCode).toBe(415);
    expect(json.json().detail).toMatch(/message\/rfc822/);
    // Signed deliveries, verified over their exact bytes (Viber's token is a bare number past 2^53).
    for (const channel of ['viber', 'sms'] as const) {
      const connection = await connectChannel(t, ws.admin.token, channel);
      const id = channel === 'viber' ? '5000000000000000123' : `SM${'ab'.repeat(16)}`;
      const res = await deliver(t, connection, { id, from: senderId(channel), text: 'Hello there' });
      expect(res.statusCode, `${channel}: ${res.body}`).toBe(200);
    }
  });
});

describe('the channel emulators (contract §11)', () => {
  it("document GET /sent, which answers as documented, like the other emulators' testing routes", async () => {
    expect(doc.paths['/_emulators/mail/messages'].get).toBeDefined();
    for (const emulator of ['telegram', 'meta', 'viber', 'twilio']) {
      expect(doc.paths[`/_emulators/${emulator}/sent`]?.get, emulator).toBeDefined();
      expect(doc.paths[`/_emulators/${emulator}/sent`]?.delete, emulator).toBeDefined();
      expect(doc.paths[`/_emulators/${emulator}/faults`]?.post, emulator).toBeDefined();
    }
    const connection = await connectChannel(t, ws.admin.token, 'telegram');
    const from = senderId('telegram');
    expect((await deliver(t, connection, { id: '7001', from, text: 'Hi' })).statusCode).toBe(200);
    const conversations = await t.request({
      method: 'GET',
      url: '/api/v1/channels/conversations',
      token: ws.admin.token,
    });
    const conversation = conversations.json().items.find((c: { channel: string }) => c.channel === 'telegram');
    const reply = await t.request({
      method: 'POST',
      url: `/api/v1/channels/conversations/${conversation.id}/messages`,
      token: ws.admin.token,
      payload: { text: 'Thanks, see you Tuesday' },
    });
    expect(reply.statusCode, reply.body).toBeLessThan(300);
    const sent = await t.app.inject({ method: 'GET', url: `/_emulators/telegram/sent?to=${from}` });
    expect(sent.statusCode).toBe(200);
    expect(sent.json().items).toEqual([expect.objectContaining({ to: from, text: 'Thanks, see you Tuesday' })]);
    const schema = doc.paths['/_emulators/telegram/sent'].get.responses!['200'].content!['application/json'].schema!;
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(schema);
    expect(validate(sent.json()), ajv.errorsText(validate.errors)).toBe(true);
  });
});

describe('Lists', () => {
  it('every list an operation answers has one shape: items and nextCursor (README: unpaginated lists say null)', () => {
    const resolve = (schema: { $ref?: string } | undefined): Record<string, unknown> | undefined =>
      schema?.$ref ? (doc.components.schemas?.[schema.$ref.split('/').at(-1)!] as Record<string, unknown>) : schema;
    const lists = operations().flatMap(({ path, op, key }) => {
      if (!path.startsWith('/api/v1/')) return [];
      const schema = resolve(op.responses?.['200']?.content?.['application/json']?.schema) as
        | { properties?: Record<string, { type?: string }>; required?: string[] }
        | undefined;
      return schema?.properties?.items?.type === 'array' ? [{ key, schema }] : [];
    });
    expect(lists.length).toBeGreaterThan(30);
    const without = lists.filter(
      ({ schema }) => !schema.properties?.nextCursor || !schema.required?.includes('nextCursor'),
    );
    expect(without.map((l) => l.key)).toEqual([]);
  });

  it('an unpaginated list answers nextCursor null', async () => {
    for (const url of [
      '/api/v1/calendar/connections',
      '/api/v1/calendar/calendars',
      '/api/v1/health/banners',
      '/api/v1/chat/conversations',
    ]) {
      const res = await t.request({ method: 'GET', url, token: ws.admin.token });
      expect(res.statusCode, url).toBe(200);
      expect(res.json(), url).toMatchObject({ items: expect.any(Array), nextCursor: null });
    }
  });
});
