// Health: liveness, readiness and Prometheus metrics (outside /api/v1; metrics behind ATRIUM_METRICS_TOKEN when set).

import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { safeEqual } from '../../platform/crypto.js';
import { sendProblem } from '../../platform/errors.js';
import { sentAs } from '../../platform/http/openapi-media.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { metricsRegistry } from '../../platform/metrics.js';

/**
 * How long /readyz waits for the database's SELECT 1 (and then for each module probe) before it answers 503: a
 * database that accepts no connection, or a pool whose connections are all held, must read as not ready rather than
 * hang the probe (a probe that never answers leaves the instance in rotation with some load balancers).
 */
export const READINESS_TIMEOUT_MS = 2000;

/** `promise`, or a rejection once `ms` have passed (the promise runs on; its late outcome is ignored). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

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
        summary:
          'Readiness: the database answers and every module probe passes, each within 2 s (503 problem otherwise)',
        response: { 200: z.object({ status: z.literal('pass') }), ...problemResponses },
      },
    },
    async (request, reply) => {
      let failing = 'database';
      try {
        await within(app.atrium.db.execute(sql`SELECT 1`), READINESS_TIMEOUT_MS, 'The database');
        for (const probe of app.atrium.probes) {
          failing = probe.name;
          await within(probe.check(app.atrium), READINESS_TIMEOUT_MS, `The ${probe.name} probe`);
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
      schema: {
        tags: ['health'],
        summary: 'Prometheus metrics (text exposition format)',
        description:
          'Open unless `ATRIUM_METRICS_TOKEN` is set; then `Authorization: Bearer` with it or the operator token (401 otherwise).',
        response: { 200: sentAs(z.string(), 'text/plain'), ...problemResponses },
      },
    },
    async (request, reply) => {
      const { metricsToken, operatorToken } = app.atrium.config;
      if (metricsToken) {
        const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
        if (!safeEqual(given, metricsToken) && !safeEqual(given, operatorToken)) {
          return sendProblem(request, reply, 401, 'unauthenticated', 'The metrics need the metrics token');
        }
      }
      reply.header('content-type', metricsRegistry.contentType);
      return metricsRegistry.metrics();
    },
  );
}
