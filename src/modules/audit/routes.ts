// Audit: the append-only trail of sensitive actions, readable by workspace admins (JSON pages or a CSV download).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { auditPage, auditQuery } from './schema.js';
import * as service from './service.js';

/** Whether the client asked for CSV: `format=csv`, or `Accept` preferring text/csv over JSON. */
function wantsCsv(request: FastifyRequest, format: string | undefined): boolean {
  if (format) return format === 'csv';
  const ranked = String(request.headers.accept ?? '')
    .split(',')
    .map((part, order) => {
      const [type, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { type: type.trim(), q: q ? Number(q.slice(2)) : 1, order };
    })
    .filter((m) => (m.type === 'text/csv' || m.type === 'application/json') && m.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
  return ranked[0]?.type === 'text/csv';
}

export async function auditRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  app.get(
    '/audit',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['audit'],
        summary: 'Audit rows of the workspace, newest first (admins); JSON pages or a CSV download',
        description:
          'Filters combine: `kind`, `actorUserId`, `patientId` (rows whose members name that patient), ' +
          '`from` (inclusive) and `to` (exclusive; a date includes that day). JSON pages with `limit` and ' +
          '`cursor`; with `Accept: text/csv` or `format=csv`, every matching row as one CSV attachment.',
        querystring: auditQuery,
        response: { 200: auditPage, ...problemResponses },
      },
    },
    async (request, reply) => {
      const ctx = requireCtx(request);
      if (!wantsCsv(request, request.query.format)) return service.listAudit(deps, ctx, request.query);
      const day = new Date().toISOString().slice(0, 10);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="audit-${day}.csv"`)
        .send(
          // A stream of CSV text: the JSON schema above (and its serializer) is for the JSON answer only.
          Readable.from(await service.exportAuditCsv(deps, ctx, request.query)) as never,
        );
    },
  );
}
