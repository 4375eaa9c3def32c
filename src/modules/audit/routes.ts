// Audit: the append-only trail of sensitive actions, readable by workspace admins.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AUDIT_KINDS, listAudit } from '../../platform/audit/audit.js';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { withTenant } from '../../platform/db/tenant.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { pageQuery } from '../../platform/pagination.js';

const auditEntry = z.looseObject({
  id: z.string(),
  kind: z.enum(AUDIT_KINDS),
  at: z.string(),
  actorUserId: z.string().nullable(),
});

export async function auditRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/audit',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['audit'],
        summary: 'Audit rows of the workspace, newest first (admins)',
        querystring: pageQuery.extend({ kind: z.enum(AUDIT_KINDS).optional() }),
        response: {
          200: z.object({ items: z.array(auditEntry), nextCursor: z.string().nullable() }),
          ...problemResponses,
        },
      },
    },
    async (request) => {
      const ctx = requireCtx(request);
      return withTenant(fastify.atrium.db, ctx, (tx) => listAudit(tx, ctx.workspaceId, request.query));
    },
  );
}
