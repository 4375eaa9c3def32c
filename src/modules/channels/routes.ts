// Inbound messaging channels (contract §8): connections (admins), the inbox, replies, contact ↔
// patient links, a live event stream, and the six provider webhooks (raw bytes, verified first).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { readsBody, sentAs } from '../../platform/http/openapi-media.js';
import { idParams, noContent, problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import { openSseStream, RealtimeHub, sseEvent } from '../../platform/realtime/sse.js';
import { requireFeature } from '../../platform/tiers.js';
import { ADAPTERS } from './providers/index.js';
import { CHANNELS, type ChannelName } from './providers/types.js';
import {
  connectBody,
  connectionSchema,
  conversationSchema,
  conversationsQuery,
  handshakeQuery,
  linkBody,
  messageSchema,
  messagesQuery,
  replyBody,
  unreadSchema,
  webhookQuery,
} from './schema.js';
import * as service from './service.js';

const WEBHOOK_LIMIT = 2 * 1024 * 1024;
const META: ChannelName[] = ['whatsapp', 'messenger', 'instagram'];

export async function channelRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['channels'];
  const hub = new RealtimeHub<service.ChannelNotice>(
    fastify.atrium.database,
    fastify.log,
    service.CHANNELS_NOTIFY,
    (n) => n.w,
  );
  fastify.addHook('preClose', async () => hub.endStreams());
  fastify.addHook('onClose', async () => hub.close());

  app.post(
    '/channels',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Connect a channel (admins, Standard+)',
        description:
          'Credentials per channel: telegram `{botToken, secretToken}`; whatsapp `{appSecret, verifyToken, accessToken, phoneNumberId}`; ' +
          'messenger / instagram `{appSecret, verifyToken, accessToken, pageId}`; viber `{authToken}`; sms (Twilio) ' +
          '`{accountSid, authToken, phoneNumber}`. Stored encrypted, never returned. Telegram’s webhook is registered ' +
          'with the bot at once (`setWebhook` with the secret token); a refusal is 502 `provider_refused` and nothing is stored.',
        body: connectBody,
        response: { 201: connectionSchema, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await service.connect(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/channels',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Connected channels (no secrets)',
        response: { 200: listOf(connectionSchema), ...problemResponses },
      },
    },
    async (request) => ({ ...(await service.listConnections(deps, requireCtx(request))), nextCursor: null }),
  );

  app.delete(
    '/channels/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Disconnect a channel: its webhooks answer 401 from now on; conversations stay',
        params: idParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.disconnect(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/channels/conversations',
    {
      schema: {
        tags,
        summary: 'The inbox: conversations, most recent first, with unread counts',
        querystring: conversationsQuery,
        response: { 200: listOf(conversationSchema), ...problemResponses },
      },
    },
    async (request) => service.listConversations(deps, requireCtx(request), request.query),
  );

  app.get(
    '/channels/conversations/:id',
    {
      schema: {
        tags,
        summary: 'One conversation, as the inbox lists it (a link to one not among the pages loaded)',
        description: 'A linked patient’s conversation writes a `phi_access` row (`channels.conversation`).',
        params: idParams,
        response: { 200: conversationSchema, ...problemResponses },
      },
    },
    async (request) => service.getConversation(deps, requireCtx(request), request.params.id),
  );

  app.get(
    '/channels/unread',
    {
      schema: {
        tags,
        summary: 'Unread counts of the inbox (no names, no text): the navigation badge on every page',
        description:
          'Counts only, so it writes no `phi_access` row; listing the conversations (names, last words) does.',
        response: { 200: unreadSchema, ...problemResponses },
      },
    },
    async (request) => ({ ...(await service.unreadCounts(deps, requireCtx(request))), nextCursor: null }),
  );

  app.get(
    '/channels/messages',
    {
      schema: {
        tags,
        summary: 'Messages, newest first (of one conversation, one channel, or the whole inbox)',
        querystring: messagesQuery,
        response: { 200: listOf(messageSchema), ...problemResponses },
      },
    },
    async (request) => service.listMessages(deps, requireCtx(request), request.query),
  );

  app.post(
    '/channels/conversations/:id/messages',
    {
      schema: {
        tags,
        summary: 'Reply through the provider’s send API: 201 with status `sent`, or `failed` with the provider’s words',
        params: idParams,
        body: replyBody,
        response: { 201: messageSchema, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.reply(deps, requireCtx(request), request.params.id, request.body.text)),
  );

  app.post(
    '/channels/conversations/:id/read',
    {
      schema: {
        tags,
        summary: 'Mark a conversation read (its unread count becomes 0)',
        params: idParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await service.markRead(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.put(
    '/channels/contacts/:id/patient',
    {
      schema: {
        tags,
        summary: 'Link a contact to a patient (or unlink with null); writes a phi_access audit row',
        params: idParams,
        body: linkBody,
        response: { 200: z.object({ id: z.string(), patientId: z.string().nullable() }), ...problemResponses },
      },
    },
    async (request) => service.linkContact(deps, requireCtx(request), request.params.id, request.body.patientId),
  );

  app.get(
    '/channels/events',
    {
      schema: {
        tags,
        summary: 'Live inbox updates (text/event-stream): `conversation.updated {conversationId}` on every change',
        description:
          'New messages, statuses, replies, reads and links. Reload the conversation (and its messages) on each event. ' +
          'Heartbeat every 15 s; ends when the credential is revoked.',
        response: { 200: z.string().describe('text/event-stream'), ...problemResponses },
      },
    },
    async (request, reply) => {
      const ctx = requireCtx(request);
      // The tier check answers a problem before the stream starts.
      requireFeature(ctx, 'inbound_channels');
      await hub.ensureListening();
      const stream = openSseStream(deps, hub, request, reply);
      stream.onClose(
        hub.subscribe(ctx.workspaceId, (notice) => {
          void stream.stillValid().then((ok) => {
            if (ok) stream.write(sseEvent('conversation.updated', { conversationId: notice.c }));
          });
        }),
      );
    },
  );

  // ---------------------------------------------------------------- provider webhooks
  await fastify.register(async (hooks) => {
    // Here every body is kept as the exact bytes received: signatures are checked over them
    // before anything is parsed (JSON with large integers intact, or Twilio's form).
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    const hookApp = hooks.withTypeProvider<ZodTypeProvider>();
    for (const channel of CHANNELS) {
      hookApp.post(
        `/${channel}/webhook`,
        {
          config: { auth: 'public' },
          bodyLimit: WEBHOOK_LIMIT,
          schema: {
            tags,
            summary: `${channel} webhook (the provider calls this; verified by its signature)`,
            description:
              'Unauthenticated except for the provider’s own verification, on the raw body in constant time. 401 ' +
              '`unauthenticated` (unsigned, tampered, unknown or disconnected connection), 400 `malformed_payload` and ' +
              '403 `tier_required` (verified, but the workspace is no longer on Standard or above) store nothing. A ' +
              'provider’s retry of a message already stored is acknowledged (200) and not stored again. Bodies up to ' +
              '2 MiB (above §1’s 1 MiB: a provider may batch many events into one notification); larger is 413.',
            querystring: webhookQuery,
            // The provider's body as it sends it: documented only, never validated or parsed before `verify`.
            ...readsBody({
              [ADAPTERS[channel].webhookBody.mediaType]: {
                description: ADAPTERS[channel].webhookBody.description,
                schema:
                  ADAPTERS[channel].webhookBody.mediaType === 'application/json'
                    ? { type: 'object' }
                    : { type: 'object', additionalProperties: { type: 'string' } },
              },
            }),
            response: {
              200:
                channel === 'sms'
                  ? sentAs(z.string().describe('An empty TwiML <Response> (nothing is sent back)'), 'text/xml')
                  : z.object({
                      ok: z.boolean(),
                      stored: z.number().int(),
                      statuses: z.number().int(),
                      skipped: z
                        .number()
                        .int()
                        .describe('Parts acknowledged but not handled (kinds not stored, items in an unknown shape)'),
                    }),
              ...problemResponses,
            },
          },
        },
        async (request, reply) => {
          const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          const result = await service.receiveWebhook(
            deps,
            channel,
            request.query.connection,
            {
              raw,
              headers: request.headers,
              url: `${deps.selfUrl()}${request.url}`,
              contentType: String(request.headers['content-type'] ?? '').toLowerCase(),
            },
            { messageId: request.query.message, from: request.ip },
          );
          // What was acknowledged but not handled, by kind only (no words, no ids): a provider's new kind of
          // event, or an item not in the shape we know, shows up here rather than as lost notifications.
          const skipped = Object.values(result.skipped).reduce((n, k) => n + k, 0);
          if (skipped > 0) request.log.info({ channel, skipped: result.skipped }, 'webhook items not handled');
          // Twilio reads the answer as TwiML: an empty <Response> sends nothing back to the texter.
          if (channel === 'sms')
            return reply.type('text/xml').send('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
          return reply.send({ ok: true, stored: result.stored, statuses: result.statuses, skipped });
        },
      );
    }
    for (const channel of META) {
      hookApp.get(
        `/${channel}/webhook`,
        {
          config: { auth: 'public' },
          schema: {
            tags,
            summary: `${channel} subscription handshake (Meta): echoes hub.challenge when the verify token matches`,
            querystring: handshakeQuery,
            response: { 200: sentAs(z.string().describe('hub.challenge, echoed'), 'text/plain'), ...problemResponses },
          },
        },
        async (request, reply) => {
          const challenge = await service.metaHandshake(deps, channel, request.query);
          return reply.type('text/plain').send(challenge);
        },
      );
    }
  });
}
