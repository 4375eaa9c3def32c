// A connection the server drops while a request holds it (a failover, pg_terminate_backend, a network cut) fails
// that request's next query; it must never take the process down. node-postgres emits 'error' on a checked-out
// client, and an 'error' event nobody listens to is thrown: every request in flight died with the process.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '../../../test/helpers/db.js';
import { isDatabaseUnavailable } from '../errors.js';
import { createAppPool } from './client.js';

describe.skipIf(!TEST_SERVER_URL)('the request pool when the server drops a connection', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase();
  });
  afterAll(async () => testDb?.drop());

  it('fails the query of the request that held it, and serves the next one', async () => {
    const pool = createAppPool(testDb.url!, 2);
    const admin = new pg.Client({ connectionString: testDb.url });
    await admin.connect();
    try {
      const held = await pool.connect();
      // Idle in a transaction, between two statements of a request: no query to hand the error to.
      await held.query('BEGIN');
      const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const ended = new Promise<void>((resolve) => held.once('end', () => resolve()));
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      await ended;
      const failed = await held.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => err,
      );
      // Answered 503 unavailable with Retry-After (errors.ts), not 500: the request was fine, the database went away.
      expect(isDatabaseUnavailable(failed)).toBe(true);
      expect(isDatabaseUnavailable(new Error('wrapped', { cause: failed }))).toBe(true);
      held.release(true);
      const next = await pool.query<{ ok: number }>('SELECT 1 AS ok');
      expect(next.rows[0].ok).toBe(1);
    } finally {
      await admin.end();
      await pool.end();
    }
  });

  it('reads a refused or terminated connection as the database being unavailable, and nothing else', async () => {
    const refused = await new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/none' }).connect().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isDatabaseUnavailable(new Error('query failed', { cause: refused }))).toBe(true);
    const admin = new pg.Client({ connectionString: testDb.url });
    await admin.connect();
    try {
      const terminated = await admin.query('SELECT pg_terminate_backend(pg_backend_pid())').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isDatabaseUnavailable(terminated)).toBe(true);
    } finally {
      await admin.end().catch(() => undefined);
    }
    // A wrong query is the request's fault: still a 500 (or whatever maps it), never "try again".
    const pool = createAppPool(testDb.url!, 1);
    try {
      const wrong = await pool.query('SELECT * FROM no_such_table').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isDatabaseUnavailable(wrong)).toBe(false);
    } finally {
      await pool.end();
    }
  });
});
