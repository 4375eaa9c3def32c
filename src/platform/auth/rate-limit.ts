import { sql } from 'drizzle-orm';
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

/** Takes one attempt back (a successful sign-in does not count against its address). */
export async function decrementCount(db: Db, key: string): Promise<void> {
  await withSystem(db, (tx) =>
    tx.execute(sql`UPDATE rate_limits SET count = GREATEST(0, count - 1) WHERE key = ${key}`),
  );
}

export async function resetCount(db: Db, key: string): Promise<void> {
  await withSystem(db, (tx) => tx.execute(sql`DELETE FROM rate_limits WHERE key = ${key}`));
}
