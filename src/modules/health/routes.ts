// Health: liveness, readiness and Prometheus metrics (outside /api/v1, unauthenticated).

import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { metricsRegistry } from '../../platform/metrics.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/livez',
    { config: { auth: 'public' }, schema: { tags: ['health'], summary: 'Liveness: the process is up' } },
    async () => ({
      status: 'pass',
    }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public' },
      schema: { tags: ['health'], summary: 'Readiness: the database answers (503 problem otherwise)' },
    },
    async (request, reply) => {
      try {
        await app.atrium.db.execute(sql`SELECT 1`);
        return { status: 'pass' };
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        return reply
          .status(503)
          .header('content-type', 'application/problem+json')
          .send({
            type: 'https://atrium.dev/problems/unavailable',
            title: 'Service Unavailable',
            status: 503,
            detail: 'The database is not reachable',
            code: 'unavailable',
            requestId: String(request.id),
          });
      }
    },
  );

  app.get(
    '/metrics',
    {
      config: { auth: 'public' },
      schema: { tags: ['health'], summary: 'Prometheus metrics (text exposition format)' },
    },
    async (_request, reply) => {
      reply.header('content-type', metricsRegistry.contentType);
      return metricsRegistry.metrics();
    },
  );
}
