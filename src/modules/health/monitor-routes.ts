// Health monitoring routes (contract §9): the cron endpoints (health+json, cron secret or operator
// token, 503 when failing) and the admins' dashboard.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { safeEqual } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import { sentAs } from '../../platform/http/openapi-media.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { banners, dashboard, healthJson, latestRuns, publicStatus, recordRun, runProbes } from './monitor.js';

const HEALTH_JSON = 'application/health+json';
const status = z.enum(['pass', 'warn', 'fail']);
const checkSchema = z.object({
  componentId: z.string(),
  status,
  observedValue: z.union([z.number(), z.string(), z.boolean()]),
  observedUnit: z.string(),
  time: z.string(),
  output: z.string().optional(),
});
const healthSchema = z.object({ status, checks: z.record(z.string(), z.array(checkSchema)) });

const dashboardSchema = z.object({
  status,
  components: z.array(
    z.object({
      name: z.string(),
      feature: z.string(),
      status,
      since: z.string().nullable(),
      slo: z.string(),
      observed: z.string().nullable(),
      output: z.string().nullable(),
      checkedAt: z.string().nullable(),
      history: z.array(z.object({ at: z.string(), status, value: z.number().nullable() })),
      unit: z.string().nullable(),
    }),
  ),
  incidents: z.array(
    z.object({
      id: z.string(),
      component: z.string(),
      status: z.enum(['open', 'closed']),
      summary: z.string(),
      openedAt: z.string(),
      closedAt: z.string().nullable(),
    }),
  ),
});

export async function monitorRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;

  const authorizeCron = (request: FastifyRequest) => {
    const token = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
    const ok =
      token &&
      (safeEqual(token, deps.config.operatorToken) ||
        (deps.config.cronSecret !== undefined && safeEqual(token, deps.config.cronSecret)));
    if (!ok)
      throw new AppError('unauthenticated', 401, 'Send ATRIUM_CRON_SECRET (or the operator token) as a bearer token');
  };

  const cron = (path: string, summary: string, select: (id: string) => boolean, deep: boolean) =>
    app.get(
      path,
      {
        config: { auth: 'public' },
        schema: {
          tags: ['health'],
          summary,
          description:
            '`Authorization: Bearer $ATRIUM_CRON_SECRET` or the operator token (401 otherwise). Runs the probes now, ' +
            'records the run (incidents move as for a scheduled run) and answers application/health+json with every ' +
            'check (those it did not run as last recorded, with their time); 503 when any check fails.',
          response: {
            200: sentAs(healthSchema, HEALTH_JSON),
            503: sentAs(healthSchema, HEALTH_JSON),
            ...problemResponses,
          },
        },
      },
      async (request, reply: FastifyReply) => {
        authorizeCron(request);
        const runs = await runProbes(
          deps,
          deps.monitors.filter((p) => select(p.id)),
          deep,
        );
        await recordRun(deps, runs);
        // Every check in the answer (§9): the others as last recorded.
        const others = await latestRuns(
          deps,
          deps.monitors.filter((p) => !select(p.id)),
        );
        const body = healthJson([...runs, ...others]);
        return reply
          .status(body.status === 'fail' ? 503 : 200)
          .header('cache-control', 'no-store')
          .type(HEALTH_JSON)
          .send(body);
      },
    );

  cron('/cron/services-health', 'Run every dependency probe now (health+json)', () => true, false);
  cron('/cron/tts-health', 'Run the speech-synthesis probes now (health+json)', (id) => id.startsWith('tts:'), false);
  cron('/cron/chain-health-nightly', 'The nightly deeper run of every probe (health+json)', () => true, true);

  app.get(
    '/integrations/chain-health',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['health'],
        summary:
          'The health dashboard (workspace admins): each component with its SLO, last value and 24 h history, and incidents',
        response: { 200: dashboardSchema, ...problemResponses },
      },
    },
    async () => dashboard(deps),
  );

  app.get(
    '/health/banners',
    {
      schema: {
        tags: ['health'],
        summary: 'Banners for the signed-in user: open incidents of the features that touch their workspace',
        response: {
          200: z.object({
            items: z.array(
              z.object({
                feature: z.string(),
                status: z.enum(['degraded', 'down']),
                message: z.string(),
                since: z.string(),
              }),
            ),
            nextCursor: z.null(),
          }),
          ...problemResponses,
        },
      },
    },
    async (request) => ({ ...(await banners(deps, requireCtx(request))), nextCursor: null }),
  );

  app.get(
    '/status',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        summary:
          'The public status page’s data (no sign-in, no tenant data): each feature now and 90 days of daily uptime',
        description:
          'Daily uptime is the share of probe runs not failing per UTC day (`day`: YYYY-MM-DD), oldest first, from a ' +
          'rollup kept 90 days whatever ATRIUM_HEALTH_TTL. Each instance answers from a cache of up to 30 s.',
        response: {
          200: z.object({
            status: z.enum(['operational', 'degraded']),
            features: z.array(
              z.object({
                feature: z.string(),
                status: z.enum(['operational', 'down']),
                since: z.string().nullable(),
                uptime: z.array(z.object({ day: z.string(), percent: z.number() })),
              }),
            ),
          }),
          ...problemResponses,
        },
      },
    },
    async () => publicStatus(deps),
  );
}
