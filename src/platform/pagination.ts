import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { AppError } from './errors.js';
import { instantSchema } from './http-schemas.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/** Query members every list endpoint accepts. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT),
  cursor: z.string().max(500).optional(),
});

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Cursors are opaque to clients: base64url JSON of the last row's sort key. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor<T>(cursor: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (!cursor) return undefined;
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new AppError('validation_failed', 400, 'The cursor is invalid', {
      errors: [{ path: 'query.cursor', message: 'Invalid cursor' }],
    });
  }
}

/** Given limit+1 rows, returns the page and the cursor to the next one. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => unknown): Page<T> {
  const items = rows.slice(0, limit);
  const next = rows.length > limit ? encodeCursor(keyOf(items[items.length - 1])) : null;
  return { items, nextCursor: next };
}

export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

// Keyset paging on (time, id), newest first. PostgreSQL keeps timestamps to the microsecond and a
// JavaScript Date to the millisecond, so a cursor made from a Date would skip the rows of its
// millisecond that sort after it (every row written in one transaction shares `now()`). The
// cursor's time is therefore read from the database as text, exact to the microsecond.

/** Selects a timestamp column as `2026-11-26T09:00:00.123456Z`, exact, for a cursor. */
export const exactTime = (column: AnyPgColumn): SQL<string> =>
  sql<string>`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** A (time, id) cursor as `exactTime` wrote it; anything else is a 400 `validation_failed`. */
export const timeIdCursor = z.tuple([
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    .pipe(instantSchema),
  z.string().min(1).max(100),
]);
export type TimeIdCursor = z.infer<typeof timeIdCursor>;

/** Rows after the cursor in (time desc, id desc) order. */
export const olderThanCursor = (time: AnyPgColumn, id: AnyPgColumn, after: TimeIdCursor | undefined) =>
  after ? sql`(${time}, ${id}) < (${after[0]}::timestamptz, ${after[1]})` : undefined;
