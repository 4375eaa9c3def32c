import { type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { queryRows, withSystem } from '../db/tenant.js';

/* Fixed-window counters in the database, shared by every instance. */

/** Counts one attempt and returns the new count: check-and-count in one statement, so parallel requests can't slip through. */
export async function incrementCount(
  db: Db,
  key: string,
  windowMs: number,
): Promise<{ count: number; resetInMs: number }> {
  const secs = windowMs / 1000;
  const rows = await withSystem(db, (tx) =>
    queryRows<{ count: number; reset_ms: number }>(
      tx,
      sql`
      INSERT INTO rate_limits (key, window_start, count) VALUES (${key}, now(), 1)
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN rate_limits.window_start > now() - make_interval(secs => ${secs})
                     THEN rate_limits.count + 1 ELSE 1 END,
        window_start = CASE WHEN rate_limits.window_start > now() - make_interval(secs => ${secs})
                     THEN rate_limits.window_start ELSE now() END
      RETURNING count,
        GREATEST(0, EXTRACT(EPOCH FROM (window_start + make_interval(secs => ${secs}) - now())) * 1000)::float8 AS reset_ms`,
    ),
  );
  return { count: Number(rows[0].count), resetInMs: Number(rows[0].reset_ms) };
}

/**
 * Marks (with `seen`) or asks whether a key was marked within `windowMs`: a fact that lasts longer than the
 * counters' windows (an address a user signed in from). Marks live under `mark:` and are pruned by their own age.
 */
export async function markKey(db: Db, key: string): Promise<void> {
  await withSystem(db, (tx) =>
    tx.execute(sql`INSERT INTO rate_limits (key, window_start, count) VALUES (${`mark:${key}`}, now(), 1)
                   ON CONFLICT (key) DO UPDATE SET window_start = now()`),
  );
}
export async function isMarked(db: Db, key: string, windowMs: number): Promise<boolean> {
  const rows = await withSystem(db, (tx) =>
    queryRows<{ key: string }>(
      tx,
      sql`SELECT key FROM rate_limits WHERE key = ${`mark:${key}`}
            AND window_start > now() - make_interval(secs => ${windowMs / 1000}::float8)`,
    ),
  );
  return rows.length > 0;
}

/** Takes one attempt back (a successful sign-in does not count against its address). */
export async function decrementCount(db: Db, key: string): Promise<void> {
  await withSystem(db, (tx) =>
    tx.execute(sql`UPDATE rate_limits SET count = GREATEST(0, count - 1) WHERE key = ${key}`),
  );
}

export async function resetCount(db: Db, key: string): Promise<void> {
  await withSystem(db, (tx) => tx.execute(sql`DELETE FROM rate_limits WHERE key = ${key}`));
}

export interface BackoffRule {
  /** Failures allowed freely within the window. */
  threshold: number;
  /** Wait after the threshold-th failure; doubles with each further failure. */
  baseDelayMs: number;
  /** Longest wait, and how long without an attempt before the counter starts over. */
  windowMs: number;
}

/**
 * Exponential backoff per key: the first `threshold` attempts go through; after that each attempt
 * must wait `baseDelayMs · 2^(count − threshold)` (capped at the window) since the previous one.
 * Check-and-count on the locked row (parallel attempts each see the previous one's count). A row's
 * `window_start` is the time of its last counted attempt; a refused attempt changes nothing.
 */
export async function takeBackoffSlot(
  db: Db,
  key: string,
  rule: BackoffRule,
): Promise<{ allowed: boolean; retryAfterMs: number }> {
  const windowSecs = rule.windowMs / 1000;
  const baseSecs = rule.baseDelayMs / 1000;
  // The wait a row with `count` failures imposes (exponent capped: power() overflows past ~1000).
  const waitFor = (count: SQL) => sql`make_interval(secs => LEAST(${windowSecs}::float8,
    ${baseSecs}::float8 * power(2, LEAST(30, GREATEST(0, ${count} - ${rule.threshold})))))`;
  // The row first (a new key starts at 0 failures), then one statement that locks it, decides, writes, and says
  // what it decided. Said outright rather than read back as "window_start = now()": the embedded database's clock
  // has millisecond steps, so a refused attempt in the same millisecond as the last counted one read as counted.
  const rows = await withSystem(db, async (tx) => {
    // DO UPDATE (a no-op) rather than DO NOTHING: it locks the row until commit, so a delete meanwhile (a sign-in
    // succeeding in another tab resets the pair's counter; the prune schedule) waits, or went first and the row is
    // inserted anew. With DO NOTHING the locking read below could find the row gone.
    await tx.execute(sql`
      INSERT INTO rate_limits AS rate_limits (key, window_start, count) VALUES (${key}, now(), 0)
      ON CONFLICT (key) DO UPDATE SET count = rate_limits.count`);
    return queryRows<{ counted: boolean; retry_ms: number }>(
      tx,
      sql`
      WITH cur AS (
        SELECT key, count, window_start FROM rate_limits WHERE key = ${key} FOR UPDATE
      ), decided AS (
        SELECT key, CASE
          WHEN window_start <= now() - make_interval(secs => ${windowSecs}) THEN 'reset'
          WHEN count >= ${rule.threshold} AND now() < window_start + ${waitFor(sql`count`)} THEN 'refused'
          ELSE 'counted' END AS outcome
        FROM cur
      )
      UPDATE rate_limits SET
        count = CASE decided.outcome WHEN 'reset' THEN 1 WHEN 'refused' THEN rate_limits.count
                ELSE rate_limits.count + 1 END,
        window_start = CASE decided.outcome WHEN 'refused' THEN rate_limits.window_start ELSE now() END
      FROM decided
      WHERE rate_limits.key = decided.key
      RETURNING decided.outcome <> 'refused' AS counted,
        GREATEST(0, EXTRACT(EPOCH FROM (rate_limits.window_start + ${waitFor(sql`rate_limits.count`)} - now())) * 1000)::float8
          AS retry_ms`,
    );
  });
  const row = rows[0];
  return { allowed: Boolean(row.counted), retryAfterMs: row.counted ? 0 : Number(row.retry_ms) };
}

/** Deletes counters idle for longer than `windowMs` (they would start over anyway); a schedule runs it. */
export async function pruneRateLimits(db: Db, windowMs: number, markWindowMs = MARK_WINDOW_MS): Promise<number> {
  const rows = await withSystem(db, (tx) =>
    queryRows<{ key: string }>(
      tx,
      sql`DELETE FROM rate_limits
           WHERE (key NOT LIKE 'mark:%' AND window_start < now() - make_interval(secs => ${windowMs / 1000}::float8))
              OR (key LIKE 'mark:%' AND window_start < now() - make_interval(secs => ${markWindowMs / 1000}::float8))
          RETURNING key`,
    ),
  );
  return rows.length;
}

/** How long a mark lasts (an address a user signed in from stays familiar this long after the last time). */
export const MARK_WINDOW_MS = 90 * 24 * 3600_000;
