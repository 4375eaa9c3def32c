import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.js';
import { buildApp } from '../app.js';
import { loadTestConfig } from '../config.js';
import { requireCtx } from './auth/authenticate.js';
import { sha256Hex } from './crypto.js';
import { queryRows, withSystem } from './db/tenant.js';

let testDb: TestDatabase;
let app: FastifyInstance;
let token: string;
let calls = 0;

beforeAll(async () => {
  testDb = await createTestDatabase();
  const config = loadTestConfig();
  app = await buildApp({ config, database: testDb.database });
  // A route of our own with the shared option, so the mechanism is tested apart from any module.
  app.post('/api/v1/test-idempotent', { config: { idempotent: true } }, async (request, reply) => {
    requireCtx(request);
    calls++;
    const body = request.body as { fail?: boolean };
    if (body.fail) return reply.status(500).send({ n: calls });
    return reply.status(201).send({ n: calls });
  });
  await app.ready();
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/operator/workspaces',
    headers: { authorization: `Bearer ${config.operatorToken}` },
    payload: { name: 'Idem', tier: 'standard', admin: { email: 'idem@example.test', name: 'I' } },
  });
  token = res.json().admin.token;
});
afterAll(async () => {
  await app?.close();
  await testDb?.drop();
});

const post = (payload: object, key?: string, who = token) =>
  app.inject({
    method: 'POST',
    url: '/api/v1/test-idempotent',
    payload,
    headers: { authorization: `Bearer ${who}`, ...(key ? { 'idempotency-key': key } : {}) },
  });

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body, and does the work once', async () => {
    const first = await post({ a: 1 }, 'key-1');
    const again = await post({ a: 1 }, 'key-1');
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(calls).toBe(1);
  });

  it('refuses the same key with a different body (422 idempotency_key_reused)', async () => {
    await post({ a: 1 }, 'key-2');
    const reused = await post({ a: 2 }, 'key-2');
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('idempotency_key_reused');
  });

  it('without a key every request runs; a 5xx frees the key for a retry', async () => {
    const before = calls;
    await post({ a: 3 });
    await post({ a: 3 });
    expect(calls).toBe(before + 2);
    const failed = await post({ fail: true }, 'key-3');
    expect(failed.statusCode).toBe(500);
    const retried = await post({ fail: true }, 'key-3');
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keys are scoped to the caller', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/operator/workspaces',
      headers: { authorization: `Bearer ${loadTestConfig().operatorToken}` },
      payload: { name: 'Other', tier: 'standard', admin: { email: 'other@example.test', name: 'O' } },
    });
    const otherToken = res.json().admin.token;
    await post({ a: 9 }, 'shared-key');
    const theirs = await post({ a: 10 }, 'shared-key', otherToken);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('stores the recorded response encrypted (it may hold a secret shown once)', async () => {
    const first = await post({ secretish: 1 }, 'key-enc');
    const rows = await withSystem(testDb.database.db, (tx) =>
      queryRows<{ response_body: string }>(tx, sql`SELECT response_body FROM idempotency_keys WHERE key = 'key-enc'`),
    );
    expect(rows[0].response_body.startsWith('v1.')).toBe(true);
    expect(rows[0].response_body).not.toContain('"n":');
    expect((await post({ secretish: 1 }, 'key-enc')).json()).toEqual(first.json());
  });

  it('a fresh pending claim is 409; one left by a dead request is taken over', async () => {
    const hash = sha256Hex(JSON.stringify({ b: 1 }));
    const me = await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } });
    const { user, workspace } = me.json();
    const insert = (key: string, age: string) =>
      withSystem(testDb.database.db, (tx) =>
        tx.execute(sql`INSERT INTO idempotency_keys (workspace_id, user_id, key, route, request_hash, state, created_at)
                       VALUES (${workspace.id}, ${user.id}, ${key}, 'POST /api/v1/test-idempotent', ${hash}, 'pending',
                               now() - ${age}::interval)`),
      );
    await insert('key-busy', '1 second');
    expect((await post({ b: 1 }, 'key-busy')).statusCode).toBe(409);
    await insert('key-dead', '10 minutes');
    const retried = await post({ b: 1 }, 'key-dead');
    expect(retried.statusCode).toBe(201);
    expect((await post({ b: 1 }, 'key-dead')).headers['idempotent-replayed']).toBe('true');
  });

  it('rejects a malformed key', async () => {
    const res = await post({ a: 1 }, 'x'.repeat(300));
    expect(res.statusCode).toBe(400);
  });
});
