import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '../../test/helpers/db.js';
import { buildApp } from '../app.js';
import { loadTestConfig } from '../config.js';
import { writeAudit } from './audit/audit.js';
import { requireCtx } from './auth/authenticate.js';
import { sha256Hex } from './crypto.js';
import { queryRows, withSystem, withTenant } from './db/tenant.js';

let testDb: TestDatabase;
let app: FastifyInstance;
let token: string;
let calls = 0;
/** Requests to /test-stalls that saved (or only read) and now hang, as a process does when it is killed. */
const stalled: (() => void)[] = [];
/** Requests to /test-db-dies holding their transaction's backend (pid) until `go` lets them run their next statement. */
const dying: { pid: number; go: () => void }[] = [];
let dies = true;
/** On PGlite: the error its next statement fails with instead (a terminated backend's, on the server). */
let dieWith: Error | undefined;
/** Runs of /test-saves-then-drops: it saves its outcome, and its first run then loses the connection. */
let savesRuns = 0;
/**
 * /test-fails-then-stalls: `failNext` set, it calls it and answers 500; else it is held until released, then saves its
 * outcome when the body says `write`.
 */
let failNext: (() => void) | undefined;
const held: (() => void)[] = [];
let relayRuns = 0;
let relayInFlight = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  testDb = await createTestDatabase();
  const config = loadTestConfig();
  app = await buildApp({ config, database: testDb.database });
  // A route of our own with the shared option, so the mechanism is tested apart from any module.
  app.post('/api/v1/test-idempotent', { config: { idempotent: true } }, async (request, reply) => {
    requireCtx(request);
    calls++;
    const body = request.body as { fail?: boolean; status?: number };
    if (body.fail) return reply.status(500).send({ n: calls });
    if (body.status) return reply.status(body.status).send({ n: calls });
    return reply.status(201).send({ n: calls });
  });
  app.post('/api/v1/test-echo-key/:id', { config: { idempotent: true } }, async (request, reply) =>
    reply.status(201).send({ key: requireCtx(request).idempotencyKey ?? null }),
  );
  app.post('/api/v1/test-stalls', { config: { idempotent: true } }, async (request, reply) => {
    const ctx = requireCtx(request);
    const body = request.body as { write: boolean; aside?: boolean };
    calls++;
    await withTenant(
      app.atrium.db,
      ctx,
      async (tx) => {
        if (body.write) await writeAudit(tx, ctx, 'admin_action', { action: 'test.stall' });
        else await tx.execute(sql`SELECT 1`);
      },
      { outcome: !body.aside },
    );
    await new Promise<void>((resolve) => stalled.push(resolve));
    return reply.status(201).send({ n: calls });
  });
  app.post('/api/v1/test-db-dies', { config: { idempotent: true } }, async (request, reply) => {
    const ctx = requireCtx(request);
    if (dies) {
      await withTenant(
        app.atrium.db,
        ctx,
        async (tx) => {
          const [{ pid }] = await queryRows<{ pid: number }>(tx, sql`SELECT pg_backend_pid() AS pid`);
          await new Promise<void>((go) => dying.push({ pid, go }));
          if (dieWith) throw dieWith;
          await tx.execute(sql`SELECT 1`);
        },
        { outcome: false },
      );
    }
    return reply.status(201).send({ ok: true });
  });
  app.post('/api/v1/test-saves-then-drops', { config: { idempotent: true } }, async (request, reply) => {
    const ctx = requireCtx(request);
    savesRuns++;
    await withTenant(app.atrium.db, ctx, (tx) => writeAudit(tx, ctx, 'admin_action', { action: 'test.saved' }));
    // As when the connection drops at COMMIT: the work is saved, the request answers 503.
    if (savesRuns === 1) throw new Error('Connection terminated unexpectedly');
    return reply.status(201).send({ n: savesRuns });
  });
  app.post('/api/v1/test-fails-then-stalls', { config: { idempotent: true } }, async (request, reply) => {
    const ctx = requireCtx(request);
    const n = ++relayRuns;
    const fail = failNext;
    failNext = undefined;
    if (fail) {
      fail();
      return reply.status(500).send({ n });
    }
    relayInFlight++;
    await new Promise<void>((resolve) => held.push(resolve));
    relayInFlight--;
    if ((request.body as { write?: boolean }).write) {
      await withTenant(app.atrium.db, ctx, (tx) => writeAudit(tx, ctx, 'admin_action', { action: 'test.relay' }));
    }
    return reply.status(201).send({ n });
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
  for (const release of [...stalled, ...held]) release();
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

  // The request's connection dropped mid-request (a failover, pg_terminate_backend): it answers 503, and freeing its
  // key (onSend) may land on a connection dropped in the same moment. Once, it left the claim pending and the retry
  // was 409 "still in progress" for a minute.
  it.each([
    { failures: 1, retryAfterMs: 0, when: 'the first try to free it fails too: freed before the answer' },
    { failures: 3, retryAfterMs: 1300, when: 'the database stays away a second: freed after the answer' },
  ])('a 503 from a lost database connection frees the key when $when', async ({ failures, retryAfterMs }) => {
    const db = app.atrium.db;
    const dropped = () => new Error('Connection terminated unexpectedly'); // node-postgres' own message
    const admin = TEST_SERVER_URL ? new pg.Client({ connectionString: testDb.url }) : undefined;
    await admin?.connect();
    const key = `key-db-died-${failures}`;
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/test-db-dies',
        payload: {},
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
      });
    try {
      const first = send();
      while (dying.length === 0) await new Promise((r) => setTimeout(r, 5));
      const request = dying.shift()!;
      // On the server a real termination of the request's backend; on PGlite (one in-process connection) its error.
      if (admin) await admin.query('SELECT pg_terminate_backend($1)', [request.pid]);
      else dieWith = dropped();
      // The next transactions, those that free the key, meet a dropped connection `failures` times.
      let left = failures;
      db.transaction = (async () => {
        if (--left === 0) delete (db as { transaction?: unknown }).transaction;
        throw dropped();
      }) as typeof db.transaction;
      request.go();
      const failed = await first;
      expect({ status: failed.statusCode, code: failed.json().code }).toEqual({ status: 503, code: 'unavailable' });
      expect(left).toBe(0);
      dies = false;
      await new Promise((r) => setTimeout(r, retryAfterMs));
      const retried = await send();
      expect({ status: retried.statusCode, code: retried.statusCode === 201 ? null : retried.json().code }).toEqual({
        status: 201,
        code: null,
      });
    } finally {
      delete (db as { transaction?: unknown }).transaction;
      dies = true;
      dieWith = undefined;
      await admin?.end();
    }
  });

  // Review finding: the 5xx path deleted the claim whatever its state, so a request whose outcome committed (the
  // connection lost at COMMIT: saved, answered 503) had its key freed and the retry did the work a second time.
  it('a 5xx after the work was saved keeps the key: the retry is told the outcome is unknown, not run again', async () => {
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/test-saves-then-drops',
        payload: {},
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'key-saved-then-503' },
      });
    const saved = async () =>
      (
        await withSystem(testDb.database.db, (tx) =>
          queryRows<{ n: number }>(
            tx,
            sql`SELECT count(*)::int AS n FROM audit_log WHERE kind = 'admin_action' AND data->>'action' = 'test.saved'`,
          ),
        )
      )[0].n;
    const first = await send();
    expect({ status: first.statusCode, code: first.json().code }).toEqual({ status: 503, code: 'unavailable' });
    const retry = await send();
    expect({ status: retry.statusCode, code: retry.json().code, runs: savesRuns, saved: await saved() }).toEqual({
      status: 409,
      code: 'idempotency_outcome_unknown',
      runs: 1,
      saved: 1,
    });
  });

  // Review finding: freeing a key was matched by the key alone. Its first try committed but the acknowledgement was
  // lost, the client's retry claimed the key afresh, and the freeing tried again in the background deleted that claim:
  // a third request with the key ran while the second still did.
  it("freeing a 5xx's key, tried again after a lost acknowledgement, leaves a later request's claim alone", async () => {
    const db = app.atrium.db;
    const original = db.transaction;
    const dropped = () => new Error('Connection terminated unexpectedly');
    /** The transactions after the failures (a later request's, the freeing tried again in the background). */
    const later: Promise<unknown>[] = [];
    let answeredAt = 0;
    failNext = () => {
      // The freeing's first transaction commits and its acknowledgement is lost; the two quick retries and the first
      // try after the answer fail too, so it is tried again 1 s later, after the client's retry claimed the key.
      let call = 0;
      db.transaction = ((...args: Parameters<typeof original>) => {
        call++;
        if (call === 1)
          return original.apply(db, args).then(() => {
            throw dropped();
          });
        if (call <= 4) return Promise.reject(dropped());
        const run = original.apply(db, args);
        later.push(run.catch(() => undefined));
        return run;
      }) as typeof db.transaction;
    };
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/test-fails-then-stalls',
        payload: {},
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'key-lost-ack' },
      });
    let third: ReturnType<typeof send> | undefined;
    try {
      const first = await send();
      answeredAt = Date.now();
      expect(first.statusCode).toBe(500);
      // The client's retry (Retry-After: 1) claims the key afresh and runs.
      const second = send();
      await expect.poll(() => held.length).toBe(1);
      // The freeing tried again in the background (1 s after the quick retries) has run.
      await sleep(Math.max(0, answeredAt + 1200 - Date.now()));
      await Promise.all(later);
      third = send();
      const outcome = await Promise.race([
        third.then((res) => `${res.statusCode} ${res.json().code}`),
        (async () => {
          while (relayInFlight < 2) await sleep(5);
          return 'a second handler runs at once';
        })(),
      ]);
      expect(outcome).toBe('409 conflict');
      held.shift()!();
      const done = await second;
      expect(done.statusCode).toBe(201);
      const replay = await send();
      expect({
        status: replay.statusCode,
        replayed: replay.headers['idempotent-replayed'],
        body: replay.json(),
      }).toEqual({ status: 201, replayed: 'true', body: done.json() });
    } finally {
      delete (db as { transaction?: unknown }).transaction;
      failNext = undefined;
      for (const release of held.splice(0)) release();
      await third;
    }
  });

  // The same hole with the takeover of a stale claim: the request that was presumed dead, when it ends, must not
  // record its answer over (or free) the claim that took over.
  it('a request whose stale claim was taken over does not mark or record its answer over the claim that took over', async () => {
    const send = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/test-fails-then-stalls',
        payload: { write: true },
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'key-taken-over' },
      });
    const first = send();
    await expect.poll(() => held.length).toBe(1);
    await withSystem(testDb.database.db, (tx) =>
      tx.execute(
        sql`UPDATE idempotency_keys SET created_at = now() - interval '10 minutes' WHERE key = 'key-taken-over'`,
      ),
    );
    const second = send();
    await expect.poll(() => held.length).toBe(2);
    held.shift()!();
    expect((await first).statusCode).toBe(201);
    // Its work committed with the claim that took over, still running, untouched (not marked committed).
    const [row] = await withSystem(testDb.database.db, (tx) =>
      queryRows<{ state: string }>(tx, sql`SELECT state FROM idempotency_keys WHERE key = 'key-taken-over'`),
    );
    expect(row.state).toBe('pending');
    const third = await send();
    expect({ status: third.statusCode, code: third.json().code }).toEqual({ status: 409, code: 'conflict' });
    held.shift()!();
    const done = await second;
    const replay = await send();
    expect({ replayed: replay.headers['idempotent-replayed'], body: replay.json() }).toEqual({
      replayed: 'true',
      body: done.json(),
    });
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

  it('a request killed after its work committed is never done twice: a retry is told the outcome is unknown', async () => {
    const me = await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } });
    const stall = (write: boolean, key: string) =>
      void app.inject({
        method: 'POST',
        url: '/api/v1/test-stalls',
        payload: { write },
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
      });
    const stateOf = async (key: string) =>
      (
        await withSystem(testDb.database.db, (tx) =>
          queryRows<{ state: string }>(tx, sql`SELECT state FROM idempotency_keys WHERE key = ${key}`),
        )
      )[0]?.state;
    // As if the process died a minute ago, after the request's transaction and before its answer was recorded.
    const age = (key: string) =>
      withSystem(testDb.database.db, (tx) =>
        tx.execute(sql`UPDATE idempotency_keys SET created_at = now() - interval '10 minutes' WHERE key = ${key}`),
      );
    const before = calls;
    stall(true, 'key-wrote');
    await expect.poll(() => stateOf('key-wrote')).toBe('committed');
    await age('key-wrote');
    const retry = await app.inject({
      method: 'POST',
      url: '/api/v1/test-stalls',
      payload: { write: true },
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'key-wrote' },
    });
    expect(retry.statusCode).toBe(409);
    expect(retry.json().code).toBe('idempotency_outcome_unknown');
    expect(calls).toBe(before + 1);
    // A request that had only read when it died changed nothing: a retry does the work.
    stall(false, 'key-read');
    await expect.poll(() => calls).toBe(before + 2);
    expect(await stateOf('key-read')).toBe('pending');
    await age('key-read');
    stall(false, 'key-read');
    await expect.poll(() => calls).toBe(before + 3);
    expect(me.statusCode).toBe(200);
  });

  it('a write that is not the outcome (withTenant {outcome: false}, e.g. a token audit row) leaves the claim to a retry', async () => {
    const stall = () =>
      void app.inject({
        method: 'POST',
        url: '/api/v1/test-stalls',
        payload: { write: true, aside: true },
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'key-aside' },
      });
    const rows = () =>
      withSystem(testDb.database.db, (tx) =>
        queryRows<{ state: string }>(tx, sql`SELECT state FROM idempotency_keys WHERE key = 'key-aside'`),
      );
    const audited = async () =>
      (
        await withSystem(testDb.database.db, (tx) =>
          queryRows<{ n: number }>(
            tx,
            sql`SELECT count(*)::int AS n FROM audit_log WHERE kind = 'admin_action' AND data->>'action' = 'test.stall'`,
          ),
        )
      )[0].n;
    const before = calls;
    const auditedBefore = await audited();
    stall();
    await expect.poll(audited).toBe(auditedBefore + 1);
    expect((await rows())[0].state).toBe('pending');
    await withSystem(testDb.database.db, (tx) =>
      tx.execute(sql`UPDATE idempotency_keys SET created_at = now() - interval '10 minutes' WHERE key = 'key-aside'`),
    );
    stall();
    await expect.poll(() => calls).toBe(before + 2);
  });

  it('a 429 or 409 is not replayed: the same key may succeed later', async () => {
    const before = calls;
    expect((await post({ status: 429 }, 'key-wait')).statusCode).toBe(429);
    const again = await post({ status: 429 }, 'key-wait');
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect((await post({ status: 409 }, 'key-state')).statusCode).toBe(409);
    expect((await post({ status: 409 }, 'key-state')).headers['idempotent-replayed']).toBeUndefined();
    expect(calls).toBe(before + 4);
    // A refusal that will not change (422) is replayed.
    await post({ status: 422 }, 'key-bad');
    expect((await post({ status: 422 }, 'key-bad')).headers['idempotent-replayed']).toBe('true');
  });

  it('keys belong to the route reached, not the URL as written', async () => {
    const first = await post({ c: 1 }, 'key-path');
    const spelled = await app.inject({
      method: 'POST',
      url: '/%61pi/v1/test-idempotent',
      payload: { c: 1 },
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'key-path' },
    });
    expect(spelled.statusCode).toBe(201);
    expect(spelled.headers['idempotent-replayed']).toBe('true');
    expect(spelled.json()).toEqual(first.json());
  });

  it('hands the claimed key to the work with its route, so what is derived from it differs between routes', async () => {
    const echo = (id: string, key?: string) =>
      app.inject({
        method: 'POST',
        url: `/api/v1/test-echo-key/${id}`,
        payload: {},
        headers: { authorization: `Bearer ${token}`, ...(key ? { 'idempotency-key': key } : {}) },
      });
    expect((await echo('a', 'same-key')).json().key).toBe('POST /api/v1/test-echo-key/a|same-key');
    expect((await echo('b', 'same-key')).json().key).toBe('POST /api/v1/test-echo-key/b|same-key');
    expect((await echo('c')).json().key).toBeNull();
  });

  it('rejects a malformed key', async () => {
    const res = await post({ a: 1 }, 'x'.repeat(300));
    expect(res.statusCode).toBe(400);
  });
});
