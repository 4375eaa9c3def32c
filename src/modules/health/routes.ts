// Health: liveness, readiness and Prometheus metrics (outside /api/v1, unauthenticated).

import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { sendProblem } from '../../platform/errors.js';
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
      schema: {
        tags: ['health'],
        summary: 'Readiness: the database answers and every module probe passes (503 problem otherwise)',
      },
    },
    async (request, reply) => {
      let failing = 'database';
      try {
        await app.atrium.db.execute(sql`SELECT 1`);
        for (const probe of app.atrium.probes) {
          failing = probe.name;
          await probe.check(app.atrium);
        }
        return { status: 'pass' };
      } catch (err) {
        request.log.warn({ err, probe: failing }, 'readiness check failed');
        const detail = failing === 'database' ? 'The database is not reachable' : `The ${failing} probe fails`;
        return sendProblem(request, reply, 503, 'unavailable', detail);
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
