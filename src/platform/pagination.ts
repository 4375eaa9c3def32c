import { z } from 'zod';
import { AppError } from './errors.js';

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
