// Calendar: connections to Google and Microsoft calendars, and one events API over all of them (contract §5).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx, signedInUserId } from '../../platform/auth/authenticate.js';
import { AppError } from '../../platform/errors.js';
import { idParams, noContent, problemResponses } from '../../platform/http-schemas.js';
import { calendarCapabilities } from './capabilities.js';
import * as connections from './connections.js';
import * as events from './events.js';
import { matchProviders } from './scheduling.js';
import {
  calendarSchema,
  callbackQuery,
  capabilitiesSchema,
  connectBody,
  connectionSchema,
  createEventBody,
  eventQuery,
  eventSchema,
  listEventsQuery,
  matchQuery,
  matchSchema,
  patchEventBody,
  sessionsBody,
  sessionsResult,
  sessionUsageQuery,
  sessionUsageSchema,
  warningSchema,
  writeResult,
} from './schema.js';
import { bookSessions, sessionUsage } from './sessions.js';

const missingEvent = () =>
  new AppError('validation_failed', 400, 'Name the event (body member `event` or query `?event=`)', {
    errors: [{ path: 'event', message: 'Required' }],
  });

export async function calendarRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['calendar'];

  app.post(
    '/calendar/connections',
    {
      schema: {
        tags,
        summary: 'Start connecting a Google or Microsoft account (OAuth 2.0 code flow with PKCE)',
        description:
          'Answers the consent URL to open. The signed `state` expires after 10 minutes. Free: one connection per workspace (reconnecting one that needs it is allowed).',
        body: connectBody,
        response: { 201: z.object({ authorizeUrl: z.string() }), ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(
        await connections.startConnection(deps, requireCtx(request), request.body.provider, {
          connectionId: request.body.connectionId,
          loginHint: request.body.loginHint,
        }),
      ),
  );

  app.get(
    '/calendar/oauth/:provider/callback',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: "The provider's redirect back: stores the tokens, then 302 to /calendar?connected=<provider>",
        description:
          'Public: the signed, expiring `state` carries the workspace, the user and the PKCE verifier. Bad or expired ' +
          'state, or a browser signed in as another user than the one who started → 400 `invalid_state`; a code ' +
          'already used (a replayed callback) → 400 `authorization_failed`; a second connection on Free (connections ' +
          'started side by side) → 403 `tier_required`, nothing stored.',
        params: z.object({ provider: z.enum(['google', 'microsoft']) }),
        querystring: callbackQuery,
        response: { 302: z.null().describe('Redirect to /calendar?connected=<provider>'), ...problemResponses },
      },
    },
    async (request, reply) => {
      const done = await connections.finishConnection(deps, request.params.provider, request.query, {
        signedInUserId: await signedInUserId(request),
        requestId: request.id,
        log: request.log,
      });
      // Back where connecting started, saying what was connected (the page confirms it and clears it).
      const back = new URL(done.returnTo ?? '/calendar', 'http://atrium.invalid');
      back.searchParams.set('connected', request.params.provider);
      return reply.redirect(`${back.pathname}${back.search}`, 302);
    },
  );

  app.get(
    '/calendar/connections',
    {
      schema: {
        tags,
        summary: 'Connected accounts: your own, or all of the workspace for admins',
        response: { 200: z.object({ items: z.array(connectionSchema), nextCursor: z.null() }), ...problemResponses },
      },
    },
    async (request) => ({
      items: await connections.listCalendarConnections(deps, requireCtx(request)),
      nextCursor: null,
    }),
  );

  app.delete(
    '/calendar/connections/:id',
    {
      schema: {
        tags,
        summary: 'Disconnect: tokens destroyed and revoked at the provider',
        params: idParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await connections.removeConnection(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/calendar/calendars',
    {
      schema: {
        tags,
        summary: "Every calendar of the workspace's connections",
        response: { 200: z.object({ items: z.array(calendarSchema), nextCursor: z.null() }), ...problemResponses },
      },
    },
    async (request) => ({ items: await connections.listCalendars(deps, requireCtx(request)), nextCursor: null }),
  );

  app.get(
    '/calendar/capabilities',
    {
      schema: {
        tags,
        summary: "What the workspace's tier allows (conferencing, recurrence, scheduling), and the whole matrix",
        response: { 200: capabilitiesSchema, ...problemResponses },
      },
    },
    async (request) => calendarCapabilities(requireCtx(request).tier),
  );

  app.get(
    '/calendar/events',
    {
      schema: {
        tags,
        summary: 'Events of a window (≤ 62 days) over all connected calendars, recurring series expanded',
        description:
          'A provider that fails contributes no items and a warning `{provider, calendar, code}`; the answer is still 200.',
        querystring: listEventsQuery,
        response: {
          200: z.object({ items: z.array(eventSchema), nextCursor: z.null(), warnings: z.array(warningSchema) }),
          ...problemResponses,
        },
      },
    },
    async (request) => ({ ...(await events.listEvents(deps, requireCtx(request), request.query)), nextCursor: null }),
  );

  app.post(
    '/calendar/events',
    {
      config: { idempotent: true },
      schema: {
        tags,
        summary: 'Create an event (conferencing, recurrence, patient); emits appointment.created with a patient',
        description:
          'Failures answer a write-result code: invalid_draft 422, calendar_not_found 404, provider_forbidden 403, tier_required 403, conference_unavailable 422, provider_conflict / reauth_required 409, rate_limited 429 (Retry-After passed on), provider_unavailable 502, provider_timeout 504. Accepts Idempotency-Key.',
        body: createEventBody,
        response: { 201: writeResult, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await events.createEvent(deps, requireCtx(request), request.body)),
  );

  app.patch(
    '/calendar/events',
    {
      schema: {
        tags,
        summary: 'Change an event: an instance id changes that occurrence only, a series id the whole series',
        description: '`status: "completed"` emits appointment.completed; `status: "cancelled"` cancels like DELETE.',
        querystring: eventQuery,
        body: patchEventBody,
        response: { 200: writeResult, ...problemResponses },
      },
    },
    async (request) => {
      const id = request.body.event ?? request.query.event;
      if (!id) throw missingEvent();
      return events.patchEvent(deps, requireCtx(request), id, request.body.draft);
    },
  );

  app.delete(
    '/calendar/events',
    {
      schema: {
        tags,
        summary: 'Delete an event (an instance id cancels that occurrence only); already deleted is success',
        querystring: eventQuery,
        response: { 200: z.object({ ok: z.literal(true) }), ...problemResponses },
      },
    },
    async (request) => {
      if (!request.query.event) throw missingEvent();
      return events.deleteEvent(deps, requireCtx(request), request.query.event);
    },
  );

  app.post(
    '/calendar/sessions/from-authorization',
    {
      config: { idempotent: true },
      schema: {
        tags,
        summary: "Book a patient's sessions from an authorization's remaining units as one recurring series",
        description:
          "As many sessions as the remaining units allow (`unitsPerSession` × the unit length each), never past the authorization's end. Concurrent requests cannot overbook. 409 `units_exhausted`; 422 `authorization_expired`. Cancelling a future session gives its units back.",
        body: sessionsBody,
        response: { 201: sessionsResult, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await bookSessions(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/calendar/sessions',
    {
      schema: {
        tags,
        summary: "A patient's authorizations with units booked and remaining, and the booked sessions",
        querystring: sessionUsageQuery,
        response: { 200: sessionUsageSchema, ...problemResponses },
      },
    },
    async (request) => ({
      ...(await sessionUsage(deps, requireCtx(request), request.query.patientId)),
      nextCursor: null,
    }),
  );

  app.get(
    '/calendar/providers/match',
    {
      schema: {
        tags,
        summary: 'Providers for a slot, free and preferred first (Advanced+)',
        description:
          "Free/busy from each provider's connected calendars (read in parallel) and the patient's preferred provider. The slot may span at most 62 days (422 invalid_window).",
        querystring: matchQuery,
        response: { 200: matchSchema, ...problemResponses },
      },
    },
    async (request) => ({ ...(await matchProviders(deps, requireCtx(request), request.query)), nextCursor: null }),
  );
}
