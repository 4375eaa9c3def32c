import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { queryRows, withSystem } from '../db/tenant.js';

/** Fixed-window counters in the database, shared by every instance. */
export async function currentCount(
  db: Db,
  key: string,
  windowMs: number,
): Promise<{ count: number; resetInMs: number }> {
  const rows = await withSystem(db, (tx) =>
    queryRows<{ count: number; reset_ms: number }>(
      tx,
      sql`SELECT count, GREATEST(0, EXTRACT(EPOCH FROM (window_start + make_interval(secs => ${windowMs / 1000}) - now())) * 1000)::float8 AS reset_ms
            FROM rate_limits WHERE key = ${key} AND window_start > now() - make_interval(secs => ${windowMs / 1000})`,
    ),
  );
  return rows[0] ? { count: Number(rows[0].count), resetInMs: Number(rows[0].reset_ms) } : { count: 0, resetInMs: 0 };
}

export async function incrementCount(db: Db, key: string, windowMs: number): Promise<void> {
  await withSystem(db, (tx) =>
    tx.execute(sql`
      INSERT INTO rate_limits (key, window_start, count) VALUES (${key}, now(), 1)
      ON CONFLICT (key) DO UPDATE SET
        count = CASE WHEN rate_limits.window_start > now() - make_interval(secs => ${windowMs / 1000})
                     THEN rate_limits.count + 1 ELSE 1 END,
        window_start = CASE WHEN rate_limits.window_start > now() - make_interval(secs => ${windowMs / 1000})
                     THEN rate_limits.window_start ELSE now() END`),
  );
}

export async function resetCount(db: Db, key: string): Promise<void> {
  await withSystem(db, (tx) => tx.execute(sql`DELETE FROM rate_limits WHERE key = ${key}`));
}
