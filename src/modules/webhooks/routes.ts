// Outbound webhooks: endpoint administration, delivery log, replay and the workspace inbox (admins, Advanced+).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { noContent, problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import {
  attemptSchema,
  createdEndpointSchema,
  createEndpointBody,
  deliveriesQuery,
  deliveryDetailSchema,
  deliveryParams,
  endpointParams,
  endpointSchema,
  inboxItemParams,
  inboxItemSchema,
  inboxQuery,
  patchEndpointBody,
  replayParams,
  replayResponse,
  rotatedSecretSchema,
  testEventResponse,
} from './schema.js';
import * as service from './service.js';

export async function webhookRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['webhooks'];
  const admin = { auth: 'admin' as const };

  app.post(
    '/admin/webhooks',
    {
      config: { ...admin, idempotent: true },
      schema: {
        tags,
        summary: 'Create an endpoint; the URL is checked at once and the secret is shown only here',
        body: createEndpointBody,
        response: { 201: createdEndpointSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.createEndpoint(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/admin/webhooks',
    {
      config: admin,
      schema: {
        tags,
        summary: 'List endpoints (without secrets)',
        response: { 200: listOf(endpointSchema), ...problemResponses },
      },
    },
    async (request) => service.listEndpoints(deps, requireCtx(request)),
  );

  app.get(
    '/admin/webhooks/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'One endpoint',
        params: endpointParams,
        response: { 200: endpointSchema, ...problemResponses },
      },
    },
    async (request) => service.getEndpoint(deps, requireCtx(request), request.params.id),
  );

  app.patch(
    '/admin/webhooks/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Change URL, event filter, description, or enable/disable',
        params: endpointParams,
        body: patchEndpointBody,
        response: { 200: endpointSchema, ...problemResponses },
      },
    },
    async (request) => service.patchEndpoint(deps, requireCtx(request), request.params.id, request.body),
  );

  app.delete(
    '/admin/webhooks/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete an endpoint; its pending deliveries are cancelled',
        params: endpointParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.deleteEndpoint(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/admin/webhooks/:id/rotate-secret',
    {
      config: admin,
      schema: {
        tags,
        summary: 'New secret (shown once); the previous one keeps signing for 24 h',
        params: endpointParams,
        response: { 200: rotatedSecretSchema, ...problemResponses },
      },
    },
    async (request) => service.rotateSecret(deps, requireCtx(request), request.params.id),
  );

  app.get(
    '/admin/webhooks/:id/deliveries',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delivery attempts to this endpoint, newest first',
        params: endpointParams,
        querystring: deliveriesQuery,
        response: { 200: listOf(attemptSchema), ...problemResponses },
      },
    },
    async (request) => service.listDeliveries(deps, requireCtx(request), request.params.id, request.query),
  );

  app.get(
    '/admin/webhooks/:id/deliveries/:deliveryId',
    {
      config: admin,
      schema: {
        tags,
        summary: 'One attempt with the exact request sent (signature headers, never the secret) and the response',
        params: deliveryParams,
        response: { 200: deliveryDetailSchema, ...problemResponses },
      },
    },
    async (request) =>
      service.getDeliveryDetail(deps, requireCtx(request), request.params.id, request.params.deliveryId),
  );

  app.post(
    '/admin/webhooks/:id/test',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Send a webhook.test event to this endpoint only, whatever its filter',
        params: endpointParams,
        response: { 202: testEventResponse, ...problemResponses },
      },
    },
    async (request, reply) => {
      reply.code(202);
      return service.sendTestEvent(deps, requireCtx(request), request.params.id);
    },
  );

  app.post(
    '/admin/webhooks/:id/replay/:event_id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Queue an event again for this endpoint with a fresh retry budget',
        params: replayParams,
        response: { 202: replayResponse, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(await service.replayEvent(deps, requireCtx(request), request.params.id, request.params.event_id)),
  );

  app.get(
    '/inbox',
    {
      config: admin,
      schema: {
        tags: ['inbox'],
        summary: 'The workspace inbox: what the platform gave up on, newest first',
        description:
          'Admins. Each item has a `kind`: `webhook.dead_lettered` (a delivery that failed every retry: endpointId, eventId, ' +
          'lastStatus), `mail.undeliverable` (a mail the relay refused for 3 days: the job, the recipient count and ' +
          'the last error, never the subject or addresses), `telehealth.room_failed` (a video room the provider could ' +
          'not make before the visit ended: eventId, the reason), `health.incident_opened` / `health.incident_resolved`. ' +
          '`lastError` holds the words. Each item is `open` until an admin handles it: a replay of its event to its ' +
          'endpoint marks it `replayed`, POST /inbox/:id/resolve marks it `resolved` (both with `handledAt` and ' +
          '`handledBy`). `state=open` lists what still needs a look, `state=handled` the rest; without it, every item.',
        querystring: inboxQuery,
        response: { 200: listOf(inboxItemSchema), ...problemResponses },
      },
    },
    async (request) => service.listInbox(deps, requireCtx(request), request.query),
  );

  app.post(
    '/inbox/:id/resolve',
    {
      config: admin,
      schema: {
        tags: ['inbox'],
        summary: 'Dismiss an open inbox item without a replay (resolved, with when and by whom; audited)',
        description:
          'For an item that needs no replay, or was dealt with otherwise. 409 `conflict` (with its `state`) when it ' +
          'was already replayed or resolved; nothing changes then.',
        params: inboxItemParams,
        response: { 200: inboxItemSchema, ...problemResponses },
      },
    },
    async (request) => service.resolveInboxItem(deps, requireCtx(request), request.params.id),
  );

  app.post(
    '/inbox/:id/reopen',
    {
      config: admin,
      schema: {
        tags: ['inbox'],
        summary: 'Open a resolved inbox item again (its handling cleared; audited)',
        description:
          'For an item resolved by mistake, or whose trouble came back. 409 `conflict` (with its `state`) when it is ' +
          'open already or was replayed (a replayed event that fails again brings a new item); nothing changes then.',
        params: inboxItemParams,
        response: { 200: inboxItemSchema, ...problemResponses },
      },
    },
    async (request) => service.reopenInboxItem(deps, requireCtx(request), request.params.id),
  );
}
