// A connection the server drops while a request holds it (a failover, pg_terminate_backend, a network cut) fails
// that request's next query; it must never take the process down. node-postgres emits 'error' on a checked-out
// client, and an 'error' event nobody listens to is thrown: every request in flight died with the process.
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '../../../test/helpers/db.js';
import { buildApp } from '../../app.js';
import { loadTestConfig } from '../../config.js';
import { isDatabaseUnavailable } from '../errors.js';
import { createAppDb, createAppPool, openDatabase, POOL_CONNECT_TIMEOUT_MS } from './client.js';
import { queryRows, withSystem } from './tenant.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves to what `promise` gives, or to 'timed out' after `ms`: a hang fails the test instead of the run. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> =>
  Promise.race([promise, sleep(ms).then(() => 'timed out' as const)]);

/** The URL with an application_name, so that a test terminates its own pool's backends and nobody else's. */
function named(url: string, applicationName: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', applicationName);
  return u.toString();
}

/** Terminates every backend named `applicationName` every 50 ms for `ms` (what a failover storm does). */
async function terminateRepeatedly(url: string, applicationName: string, ms: number): Promise<number> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  let terminated = 0;
  try {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
      const { rows } = await admin.query<{ n: number }>(
        'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
        [applicationName],
      );
      terminated += rows[0].n;
    }
  } finally {
    await admin.end();
  }
  return terminated;
}

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

  it('a burst of terminated connections under load leaks no connection: the pool serves every transaction after', async () => {
    // Drizzle 0.45 sent BEGIN before its try/finally: a BEGIN failing on a dropped connection never gave the
    // connection back, and once all of them were lost every transaction waited for one forever.
    const pool = createAppPool(named(testDb.url!, 'atrium_burst'), 4);
    const db = createAppDb(pool);
    let stop = false;
    let committed = 0;
    let failed = 0;
    const loop = async () => {
      while (!stop) {
        await db
          .transaction((tx) => tx.execute(sql`SELECT pg_sleep(0.005)`))
          .then(
            () => committed++,
            () => failed++,
          );
      }
    };
    const loops = Array.from({ length: 8 }, loop);
    try {
      const terminated = await terminateRepeatedly(testDb.url!, 'atrium_burst', 3000);
      stop = true;
      expect(terminated).toBeGreaterThan(0);
      expect(failed).toBeGreaterThan(0);
      expect(await within(Promise.all(loops), 5000)).not.toBe('timed out');
      expect({ waiting: pool.waitingCount, inUse: pool.totalCount - pool.idleCount }).toEqual({ waiting: 0, inUse: 0 });
      const after = await within(
        Promise.all(Array.from({ length: 8 }, () => db.transaction((tx) => tx.execute(sql`SELECT 1 AS ok`)))),
        5000,
      );
      expect(after).not.toBe('timed out');
      expect(committed).toBeGreaterThan(0);
    } finally {
      stop = true;
      await within(pool.end(), 2000);
    }
  });

  it('a transaction that fails gives its connection back; one with options is refused (it would lose the RLS scope)', async () => {
    const pool = createAppPool(testDb.url!, 1);
    const db = createAppDb(pool);
    try {
      const outcome = (run: Promise<unknown>) =>
        run.then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(await outcome(db.transaction((tx) => tx.execute(sql`SELECT * FROM no_such_table`)))).toBeInstanceOf(Error);
      // scoped-begin.ts adds the tenant's role and workspace to a bare BEGIN only.
      const withOptions = await outcome(
        db.transaction((tx) => queryRows(tx, sql`SELECT 1 AS one`), { isolationLevel: 'serializable' }),
      );
      expect(String(withOptions)).toMatch(/Transaction options are not supported/);
      // A statement that failed and was caught: COMMIT answers ROLLBACK, and the caller is told, not handed a result
      // as if the transaction's writes were saved.
      await db.execute(sql`CREATE TEMP TABLE IF NOT EXISTS commit_check (n int)`);
      const swallowed = await outcome(
        db.transaction(async (tx) => {
          await tx.execute(sql`INSERT INTO commit_check VALUES (1)`);
          await tx.execute(sql`SELECT 1 / 0`).catch(() => undefined);
          return 'saved?';
        }),
      );
      expect(String(swallowed)).toMatch(/rolled back/);
      expect(await queryRows(db, sql`SELECT count(*)::int AS n FROM commit_check`)).toEqual([{ n: 0 }]);
      expect({ total: pool.totalCount, idle: pool.idleCount }).toEqual({ total: 1, idle: 1 });
    } finally {
      await pool.end();
    }
  });

  it('the listening connection comes back by itself after the database refused connections for a while', async () => {
    const database = await openDatabase({ databaseUrl: testDb.url!, poolSize: 2 });
    const name = new URL(testDb.url!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: TEST_SERVER_URL });
    await admin.connect();
    const heard: string[] = [];
    try {
      await database.listen('atrium_listen_check', (payload) => heard.push(payload));
      const notify = (payload: string) =>
        withSystem(database.db, (tx) => tx.execute(sql`SELECT pg_notify('atrium_listen_check', ${payload})`));
      await notify('before');
      await expect.poll(() => heard).toContain('before');
      // The pool keeps its connection; the listening one is cut while no new connection is allowed (a failover).
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      const cut = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%'`,
        [name],
      );
      expect(cut.rowCount).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      // Before: one try 0.5 s after the loss, refused, and none after it: nothing was ever heard again.
      await expect
        .poll(
          async () => {
            await notify('after');
            return heard.includes('after');
          },
          { timeout: 15_000, interval: 500 },
        )
        .toBe(true);
    } finally {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.end();
      await database.close();
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

describe.skipIf(!TEST_SERVER_URL)('the app when the server drops its connections', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase();
  });
  afterAll(async () => testDb?.drop());

  async function startApp(applicationName: string, poolSize: number) {
    const database = await openDatabase({ databaseUrl: named(testDb.url!, applicationName), poolSize });
    const config = loadTestConfig();
    const app = await buildApp({ config, database });
    await app.ready();
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/operator/workspaces',
      headers: { authorization: `Bearer ${config.operatorToken}` },
      payload: { name: 'Pool', tier: 'standard', admin: { email: `${applicationName}@example.test`, name: 'P' } },
    });
    const token = res.json().admin.token as string;
    const me = () => app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } });
    const readyz = () => app.inject({ method: 'GET', url: '/readyz' });
    const close = async () => {
      await within(app.close(), 5000);
      await within(database.close(), 2000);
    };
    return { app, database, me, readyz, close };
  }

  it('serves requests and is ready again within seconds of a burst of terminations under concurrent requests', async () => {
    const t = await startApp('atrium_app_burst', 4);
    let stop = false;
    const statuses = new Map<number, number>();
    const loop = async (request: () => ReturnType<typeof t.me>) => {
      while (!stop) {
        const res = await request();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        await sleep(2); // else the loops hold the event loop and the terminations wait behind them
      }
    };
    const loops = [...Array.from({ length: 8 }, () => loop(t.me)), loop(t.readyz)];
    try {
      const terminated = await terminateRepeatedly(testDb.url!, 'atrium_app_burst', 3000);
      stop = true;
      expect(terminated).toBeGreaterThan(0);
      // Every request in flight during the burst was answered, and those the database failed were 503s.
      expect(await within(Promise.all(loops), 7000)).not.toBe('timed out');
      expect([...statuses.keys()].sort()).toEqual([200, 503]);
      const started = Date.now();
      const ready = await within(t.readyz(), 3000);
      expect(ready === 'timed out' ? ready : ready.statusCode).toBe(200);
      const after = await within(Promise.all(Array.from({ length: 8 }, t.me)), 3000);
      expect(after === 'timed out' ? after : after.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
      // All 4 of the pool's connections at once: none was lost in the burst.
      let open = 0;
      const together = await within(
        Promise.all(
          Array.from({ length: 4 }, () =>
            withSystem(t.database.db, async () => {
              open++;
              while (open < 4) await sleep(10);
            }),
          ),
        ),
        3000,
      );
      expect(together === 'timed out' ? `${together} with ${open} of 4 connections` : 'all 4').toBe('all 4');
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      stop = true;
      await t.close();
    }
  }, 30_000);

  it("answers 503 when no connection can be had: /readyz within seconds, a request after the pool's wait", async () => {
    const t = await startApp('atrium_app_held', 1);
    // The pool's one connection held by a statement that runs long: to a request it is a database that does not answer.
    const held = withSystem(t.database.db, (tx) => tx.execute(sql`SELECT pg_sleep(12)`)).catch(() => undefined);
    try {
      await sleep(100);
      let started = Date.now();
      const ready = await within(t.readyz(), 4000);
      expect(ready === 'timed out' ? ready : ready.statusCode).toBe(503);
      expect(Date.now() - started).toBeLessThan(3000);
      started = Date.now();
      const me = await within(t.me(), POOL_CONNECT_TIMEOUT_MS + 3000);
      expect(me === 'timed out' ? me : { status: me.statusCode, type: me.headers['content-type'] }).toEqual({
        status: 503,
        type: 'application/problem+json; charset=utf-8',
      });
      expect(me !== 'timed out' && me.json().code).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(POOL_CONNECT_TIMEOUT_MS + 2000);
    } finally {
      await admin(
        testDb.url!,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'atrium_app_held'",
      );
      await held;
      await t.close();
    }
  }, 30_000);
});

async function admin(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
