// Health: liveness, readiness and Prometheus metrics (outside /api/v1, unauthenticated).

import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import client from 'prom-client';

export const metricsRegistry = new client.Registry();
client.collectDefaultMetrics({ register: metricsRegistry });

export const httpDuration = new client.Histogram({
  name: 'atrium_http_request_duration_seconds',
  help: 'HTTP request duration by route and status',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

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

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    httpDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
}
