import { z } from 'zod';
import { AUDIT_KINDS } from '../../platform/audit/audit.js';
import { alsoDocumentedAs, CSV_MEDIA_TYPE } from '../../platform/http/openapi-media.js';
import { daySchema, instantSchema } from '../../platform/http-schemas.js';
import { pageQuery } from '../../platform/pagination.js';

/** A calendar day or an RFC 3339 instant with an offset. */
const instantOrDay = z.union([instantSchema, daySchema], {
  error: 'Use an RFC 3339 time with an offset (2026-11-21T09:00:00Z) or a date (2026-11-21)',
});

export const auditQuery = pageQuery
  .extend({
    kind: z.enum(AUDIT_KINDS).optional(),
    actorUserId: z.string().trim().min(1).max(100).optional(),
    patientId: z.string().trim().min(1).max(100).optional(),
    from: instantOrDay.optional().describe('Rows at or after this time (a date means its start, UTC)'),
    to: instantOrDay.optional().describe('Rows before this time (a date includes that whole day, UTC)'),
    format: z.enum(['json', 'csv']).optional().describe('csv: the same filter as a CSV download (as Accept: text/csv)'),
  })
  .refine((q) => !q.from || !q.to || toRange(q).from! < toRange(q).to!, {
    error: '`to` must be after `from`',
    path: ['to'],
  });
export type AuditQuery = z.infer<typeof auditQuery>;

/** The filter's time range as instants: `from` inclusive, `to` exclusive (a date `to` covers its day). */
export function toRange(q: { from?: string; to?: string }): { from?: Date; to?: Date } {
  const day = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s);
  return {
    from: q.from ? new Date(day(q.from) ? `${q.from}T00:00:00Z` : q.from) : undefined,
    to: q.to ? new Date(day(q.to) ? Date.parse(`${q.to}T00:00:00Z`) + 86_400_000 : Date.parse(q.to)) : undefined,
  };
}

export const auditEntry = z.looseObject({
  id: z.string(),
  kind: z.enum(AUDIT_KINDS),
  at: z.string(),
  actorUserId: z.string().nullable(),
  requestId: z.string().nullable(),
});

export const auditPage = alsoDocumentedAs(
  z.object({ items: z.array(auditEntry), nextCursor: z.string().nullable() }),
  CSV_MEDIA_TYPE,
  'With `Accept: text/csv` or `format=csv`: every row matching the filters, newest first, as an RFC 4180 ' +
    'CSV attachment with a header row (cells starting with = + - @ are prefixed with a single quote).',
);
