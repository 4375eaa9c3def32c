import { z } from 'zod';

/** RFC 9457 problem document; extension members pass through. */
export const problemSchema = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string(),
  requestId: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** Spread into a route's `response` so OpenAPI documents the problem+json errors. */
export const problemResponses = { '4xx': problemSchema, '5xx': problemSchema } as const;

export const idParams = z.object({ id: z.string().min(1).max(100) });
export const noContent = z.null().describe('No content');

// Times and days a request may carry: what RFC 3339 allows, within what PostgreSQL stores (it has no
// year 0, which a JavaScript date reaching it as `0000-…` would be) — so a far-off value is a 400,
// never a database error.
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');
const storable = (text: string) => {
  const at = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  return at >= EARLIEST && at <= LATEST;
};
const YEARS = 'Use a year from 0001 to 9999';

/** An RFC 3339 instant with an offset (2026-11-21T09:00:00Z), years 0001–9999 in UTC. */
export const instantSchema = z.iso.datetime({ offset: true }).refine(storable, { error: YEARS });
/** A calendar day (2026-11-21), years 0001–9999. */
export const daySchema = z.iso.date().refine(storable, { error: YEARS });
