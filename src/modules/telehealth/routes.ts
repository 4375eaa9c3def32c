// Telehealth: a pre-warmed video room per calendar event with conferencing, started and ended by the clinician.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { idParams, problemResponses } from '../../platform/http-schemas.js';
import * as service from './service.js';

const roomSchema = z.object({
  id: z.string(),
  eventId: z.string(),
  status: z
    .enum(['pending', 'warm', 'live', 'ended', 'failed'])
    .describe(
      'pending: being made at the video provider (retried through outages until the visit no longer needs it); ' +
        'failed: it could not be made by then (see failureReason)',
    ),
  joinUrl: z.string().nullable(),
  failureReason: z.string().nullable().describe("Why a failed room could not be made (the provider's last error)"),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
});

export async function telehealthRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['telehealth'];

  app.get(
    '/telehealth/rooms/:id',
    {
      schema: {
        tags,
        summary: 'A video room: pending (being prepared), warm, live, ended, or failed (could not be made)',
        params: idParams,
        response: { 200: roomSchema, ...problemResponses },
      },
    },
    async (request) => service.getRoom(deps, requireCtx(request), request.params.id),
  );

  app.post(
    '/telehealth/rooms/:id/start',
    {
      schema: {
        tags,
        summary:
          'Start the visit (emits meeting.started); 409 room_not_ready while the room is being prepared, ' +
          '409 room_failed (with reason) when it could not be made',
        params: idParams,
        response: { 200: roomSchema, ...problemResponses },
      },
    },
    async (request) => service.startRoom(deps, requireCtx(request), request.params.id),
  );

  app.post(
    '/telehealth/rooms/:id/end',
    {
      schema: {
        tags,
        summary: 'End the visit (emits meeting.ended) and close the room',
        params: idParams,
        response: { 200: roomSchema, ...problemResponses },
      },
    },
    async (request) => service.endRoom(deps, requireCtx(request), request.params.id),
  );
}
