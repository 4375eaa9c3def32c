import { type AnyColumn, type SQL, sql } from 'drizzle-orm';

/**
 * `column IN (values)` with the whole list as one JSON parameter: a list of hundreds of ids (every
 * event of a week view) costs one bound value instead of one each, on the server and on PGlite.
 */
export function inList(column: AnyColumn, values: readonly string[]): SQL {
  return sql`${column} IN (SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;
}

/**
 * A PostgreSQL text[] literal for `= ANY(${textArray(ids)}::text[])`: one parameter whatever the
 * number of values (so the statement's text stays the same), each value quoted and escaped.
 */
export function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}
