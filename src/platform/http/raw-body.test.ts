import { createHmac } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/helpers/app.js';
import { createWorkspace } from '../../../test/helpers/factories.js';
import { installErrorHandling } from '../errors.js';
import { parseFormBody, registerBodyParsers } from './raw-body.js';

const KEY = 'whsec_test';
const sign = (bytes: Buffer | string) => createHmac('sha256', KEY).update(bytes).digest('hex');

// Routes cannot be added to the built app once it listens, so these run on a Fastify instance with
// the app's own body limit, parsers and error handling; the last test checks the wiring in app.ts.
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify({ bodyLimit: 1024 * 1024 });
  registerBodyParsers(app);
  installErrorHandling(app);
  const describeBody = (request: { body: unknown; rawBody?: Buffer; headers: Record<string, unknown> }) => ({
    body: request.body ?? null,
    hasRawBody: request.rawBody !== undefined,
    signatureMatches: request.rawBody ? sign(request.rawBody) === request.headers['x-signature'] : null,
  });
  app.post('/signed', { config: { rawBody: true } }, async (request) => describeBody(request));
  app.post('/plain', async (request) => describeBody(request));
  app.post('/form', { config: { formBody: true, rawBody: true } }, async (request) => describeBody(request));
  app.post('/form-only', { config: { formBody: true } }, async (request) => describeBody(request));
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

describe('raw request bodies', () => {
  it('keeps the exact bytes the sender signed on routes that ask for them', async () => {
    // Whitespace, key order, escapes and a BOM-less UTF-8 é: JSON.parse + stringify changes all of these.
    const sent = Buffer.from('{ "name" : "Caf\\u00e9 \\/ Ren\u00e9e",\n\t"n": 1.50, "nested": {"a":[1, 2 ]} }\r\n');
    const res = await app.inject({
      method: 'POST',
      url: '/signed',
      payload: sent,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-signature': sign(sent) },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      body: { name: 'Café / Renée', n: 1.5, nested: { a: [1, 2] } },
      hasRawBody: true,
      signatureMatches: true,
    });
    // The signature over the re-serialised body would not match: raw bytes are needed.
    expect(sign(JSON.stringify(res.json().body))).not.toBe(sign(sent));
  });

  it('does not keep them on routes that do not ask', async () => {
    const res = await app.inject({ method: 'POST', url: '/plain', payload: { a: 1 } });
    expect(res.json()).toEqual({ body: { a: 1 }, hasRawBody: false, signatureMatches: null });
  });

  it('keeps the JSON rules: an empty body is no body, malformed JSON is a 400 problem', async () => {
    const empty = await app.inject({
      method: 'POST',
      url: '/signed',
      payload: '  ',
      headers: { 'content-type': 'application/json', 'x-signature': sign('  ') },
    });
    expect(empty.json()).toEqual({ body: null, hasRawBody: true, signatureMatches: true });
    const bad = await app.inject({
      method: 'POST',
      url: '/signed',
      payload: '{"a":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(bad.json().code).toBe('validation_failed');
    const poisoned = await app.inject({
      method: 'POST',
      url: '/plain',
      payload: '{"__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(poisoned.statusCode).toBe(400);
  });

  it('refuses JSON declared in a charset other than UTF-8 (415), raw-body routes included', async () => {
    for (const type of [
      'application/json; charset=latin1',
      'application/json; charset=ISO-8859-1',
      'application/json;charset="ebcdic"',
      'application/json; charset=utf-16',
      'application/json; charset=utf-8; charset=latin1',
    ]) {
      for (const url of ['/plain', '/signed']) {
        // Bytes that are UTF-8 too: the declared charset alone decides (a Latin-1 'é' would be read as 'Ã©').
        const res = await app.inject({
          method: 'POST',
          url,
          payload: '{"a":"\u00c3\u00a9"}',
          headers: { 'content-type': type },
        });
        expect(res.statusCode, `${url} ${type}`).toBe(415);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.json()).toMatchObject({ code: 'unsupported_media_type', detail: expect.stringMatching(/UTF-8/) });
      }
    }
    // A Latin-1 body (not UTF-8 bytes) is the same 415, not a 400 about its bytes.
    const latin1 = await app.inject({
      method: 'POST',
      url: '/plain',
      payload: Buffer.from('{"a":"Ren\u00e9e"}', 'latin1'),
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(latin1.statusCode).toBe(415);
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json;charset="utf-8"',
      'application/json; charset=utf8',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/plain',
        payload: '{"a":"é"}',
        headers: { 'content-type': type },
      });
      expect(res.statusCode, type).toBe(200);
      expect(res.json().body).toEqual({ a: 'é' });
    }
  });

  it('applies the body limit to raw and form bodies (413 problem)', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 'a');
    for (const [url, type] of [
      ['/signed', 'application/json'],
      ['/form', 'application/x-www-form-urlencoded'],
    ]) {
      const res = await app.inject({ method: 'POST', url, payload: big, headers: { 'content-type': type } });
      expect(res.statusCode, url).toBe(413);
      expect(res.json().code).toBe('payload_too_large');
    }
  });
});

describe('form bodies', () => {
  it('parses forms on routes that accept them, repeated keys as arrays, with the raw bytes', async () => {
    const sent = 'From=%2B15550001111&Body=Hi+there%21+caf%C3%A9&MediaUrl0=a&Tag=x&Tag=y&Tag=z&Empty=';
    const res = await app.inject({
      method: 'POST',
      url: '/form',
      payload: sent,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-signature': sign(sent) },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      body: { From: '+15550001111', Body: 'Hi there! café', MediaUrl0: 'a', Tag: ['x', 'y', 'z'], Empty: '' },
      hasRawBody: true,
      signatureMatches: true,
    });
    const noRaw = await app.inject({
      method: 'POST',
      url: '/form-only',
      payload: 'a=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    });
    expect(noRaw.json()).toEqual({ body: { a: '1' }, hasRawBody: false, signatureMatches: null });
  });

  it('treats __proto__ as a plain key', () => {
    const parsed = parseFormBody('__proto__=x&constructor=y');
    expect(Object.getPrototypeOf(parsed)).toBeNull();
    expect(Object.entries(parsed)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
  });

  it('answers 415 problem for a form posted to a JSON-only route', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/plain',
      payload: 'a=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(415);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().code).toBe('unsupported_media_type');
  });
});

describe('the built app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('refuses JSON in another charset with 415 and stores nothing', async () => {
    const ws = await createWorkspace(t, { tier: 'standard' });
    const list = async () =>
      (await t.request({ method: 'GET', url: '/api/v1/patients', token: ws.admin.token })).json().items.length;
    const before = await list();
    for (const charset of ['latin1', 'ebcdic']) {
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/patients',
        token: ws.admin.token,
        payload: '{"givenName":"Ann","familyName":"Lee"}',
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect(res.statusCode, charset).toBe(415);
      expect(res.json()).toMatchObject({ code: 'unsupported_media_type', requestId: expect.any(String) });
    }
    expect(await list()).toBe(before);
    const ok = await t.request({
      method: 'POST',
      url: '/api/v1/patients',
      token: ws.admin.token,
      payload: '{"givenName":"Ann","familyName":"Lee"}',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('uses these parsers: forms are 415 on JSON routes, an empty JSON body is no body', async () => {
    const form = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: 'email=a%40b.co&password=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.statusCode).toBe(415);
    expect(form.json()).toMatchObject({ code: 'unsupported_media_type', requestId: expect.any(String) });
    const empty = await t.request({
      method: 'POST',
      url: '/api/v1/auth/sign-in',
      payload: '',
      headers: { 'content-type': 'application/json' },
    });
    // No body → the route's schema reports the missing body (not a JSON syntax error).
    expect(empty.statusCode).toBe(400);
    expect(empty.json().detail).not.toMatch(/JSON/);
  });
});
