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
  status: z.enum(['pending', 'warm', 'live', 'ended']),
  joinUrl: z.string().nullable(),
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
        summary: 'A video room: pending (being prepared), warm, live or ended',
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
        summary: 'Start the visit (emits meeting.started); 409 room_not_ready while the room is being prepared',
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
