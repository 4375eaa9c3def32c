import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, TEST_SERVER_URL, type TestDatabase } from '../../../test/helpers/db.js';
import { queryRows, withSystem } from '../db/tenant.js';
import { incrementCount, pruneRateLimits, takeBackoffSlot } from './rate-limit.js';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase();
});
afterAll(async () => testDb?.drop());

const db = () => testDb.database.db;
const age = (key: string, seconds: number) =>
  withSystem(db(), (tx) =>
    tx.execute(
      sql`UPDATE rate_limits SET window_start = now() - make_interval(secs => ${seconds}::float8) WHERE key = ${key}`,
    ),
  );

describe('takeBackoffSlot', () => {
  const rule = { threshold: 2, baseDelayMs: 10_000, windowMs: 600_000 };

  it('lets the threshold through, then makes each attempt wait twice as long as the one before', async () => {
    expect((await takeBackoffSlot(db(), 'b1', rule)).allowed).toBe(true);
    expect((await takeBackoffSlot(db(), 'b1', rule)).allowed).toBe(true);
    const refused = await takeBackoffSlot(db(), 'b1', rule);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(9_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);
    await age('b1', 11); // the 10 s wait is over
    expect((await takeBackoffSlot(db(), 'b1', rule)).allowed).toBe(true);
    const longer = await takeBackoffSlot(db(), 'b1', rule);
    expect(longer.allowed).toBe(false);
    expect(longer.retryAfterMs).toBeGreaterThan(19_000); // 20 s now
    await age('b1', 21);
    expect((await takeBackoffSlot(db(), 'b1', rule)).allowed).toBe(true);
    expect((await takeBackoffSlot(db(), 'b1', rule)).retryAfterMs).toBeGreaterThan(39_000); // 40 s
  });

  it('refuses an attempt made in the same millisecond as the last counted one', async () => {
    // The embedded database's clock moves in milliseconds: back-to-back attempts often share now(). The third of
    // each burst must be refused however fast it comes (it read as counted when its time equalled the second's).
    // With the clock held still (the embedded database reads it from the process; the server's moves on its own,
    // in microseconds), the attempts of a burst share one now() for sure.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      for (let burst = 0; burst < 5; burst++) {
        const key = `burst-${burst}-${Math.random()}`;
        await takeBackoffSlot(db(), key, rule);
        await takeBackoffSlot(db(), key, rule);
        expect((await takeBackoffSlot(db(), key, rule)).allowed, `burst ${burst}`).toBe(false);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it.skipIf(!TEST_SERVER_URL)(
    'an attempt whose row is deleted while it waits for it (a sign-in succeeding in another tab) starts it anew',
    async () => {
      const key = `deleted-${Math.random()}`;
      await takeBackoffSlot(db(), key, rule);
      const other = new pg.Client({ connectionString: testDb.url });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT 1 FROM rate_limits WHERE key = $1 FOR UPDATE', [key]);
        const attempt = takeBackoffSlot(db(), key, rule);
        await new Promise((resolve) => setTimeout(resolve, 300)); // the attempt now waits for the row
        await other.query('DELETE FROM rate_limits WHERE key = $1', [key]);
        await other.query('COMMIT');
        expect(await attempt).toEqual({ allowed: true, retryAfterMs: 0 });
      } finally {
        await other.end();
      }
    },
  );

  it('caps the wait at the window and starts over after a quiet window', async () => {
    for (let i = 0; i < 2; i++) await takeBackoffSlot(db(), 'b2', rule);
    await withSystem(db(), (tx) => tx.execute(sql`UPDATE rate_limits SET count = 500 WHERE key = 'b2'`));
    const capped = await takeBackoffSlot(db(), 'b2', rule);
    expect(capped.allowed).toBe(false);
    expect(capped.retryAfterMs).toBeLessThanOrEqual(600_000);
    await age('b2', 601);
    expect((await takeBackoffSlot(db(), 'b2', rule)).allowed).toBe(true);
    expect((await takeBackoffSlot(db(), 'b2', rule)).allowed).toBe(true);
  });
});

describe('pruneRateLimits', () => {
  it('deletes only counters idle for longer than the window', async () => {
    await incrementCount(db(), 'p-old', 60_000);
    await incrementCount(db(), 'p-new', 60_000);
    await age('p-old', 61);
    expect(await pruneRateLimits(db(), 60_000)).toBeGreaterThanOrEqual(1);
    const keys = await withSystem(db(), (tx) =>
      queryRows<{ key: string }>(tx, sql`SELECT key FROM rate_limits WHERE key LIKE 'p-%'`),
    );
    expect(keys.map((k) => k.key)).toEqual(['p-new']);
  });
});
