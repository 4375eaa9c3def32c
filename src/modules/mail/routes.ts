// Mail: the workspace's inbound address, receiving raw messages (iMIP replies update calendar guests), the inbox.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { countAccepted, countRefused } from '../../platform/acceptance.js';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { safeEqual } from '../../platform/crypto.js';
import { AppError } from '../../platform/errors.js';
import { readsBody } from '../../platform/http/openapi-media.js';
import { idParams, problemResponses } from '../../platform/http-schemas.js';
import { listOf, pageQuery } from '../../platform/pagination.js';
import * as service from './service.js';

const INBOUND_LIMIT = 25 * 1024 * 1024;
const RFC822 = 'message/rfc822';

const messageSchema = z.object({
  id: z.string(),
  from: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  text: z.string(),
  calendarMethod: z.string().nullable(),
  spam: z
    .object({ label: z.enum(['spam', 'ham']), probability: z.number() })
    .nullable()
    .describe('The spam skill’s label, when the workspace has it installed (null until classified)'),
  receivedAt: z.string(),
});

export async function mailRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['mail'];
  fastify.addContentTypeParser(RFC822, { parseAs: 'buffer', bodyLimit: INBOUND_LIMIT }, (_req, body, done) =>
    done(null, body),
  );

  /** The inbound credential: ATRIUM_INBOUND_MAIL_SECRET or the operator token. */
  const authorizeInbound = (request: FastifyRequest) => {
    const token = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
    const { inboundMailSecret, operatorToken } = deps.config;
    const ok =
      token &&
      (safeEqual(token, operatorToken) || (inboundMailSecret !== undefined && safeEqual(token, inboundMailSecret)));
    if (!ok) throw new AppError('unauthenticated', 401, 'Send the inbound mail secret as a bearer token');
  };

  app.post(
    '/mail/inbound',
    {
      config: { auth: 'public' },
      bodyLimit: INBOUND_LIMIT,
      schema: {
        tags,
        summary: 'Receive one raw RFC 5322 message (message/rfc822, up to 25 MiB) for the workspace it is addressed to',
        description:
          'Authenticated by `Authorization: Bearer $ATRIUM_INBOUND_MAIL_SECRET` (or the operator token). Emits mail.received. An iMIP REPLY from an invited guest updates their responseStatus on the event. 422 `malformed_message` / `unknown_recipient`; nothing is stored then.',
        // The message's bytes as the relay received them (read as they came, never validated as JSON).
        ...readsBody({
          [RFC822]: {
            description: 'One raw RFC 5322 message, headers and body, up to 25 MiB',
            schema: { type: 'string', contentMediaType: RFC822 },
          },
        }),
        response: {
          201: messageSchema.extend({ workspaceId: z.string(), replyMatched: z.boolean() }),
          ...problemResponses,
        },
      },
    },
    async (request, reply) => {
      // A call with no credential at all is anyone's, not a sign of trouble at the mail relay; a wrong
      // credential (a secret out of step) and a refused message from the relay are.
      const presented = /^Bearer \S/i.test(request.headers.authorization ?? '');
      try {
        authorizeInbound(request);
        if (!Buffer.isBuffer(request.body)) {
          throw new AppError('unsupported_media_type', 415, 'Send the message as Content-Type: message/rfc822');
        }
        const received = await service.receiveMail(deps, request.body, request.id);
        countAccepted(deps, service.INBOUND_SOURCE);
        return reply.status(201).send(received);
      } catch (err) {
        if (presented && err instanceof AppError && err.status < 500)
          countRefused(deps, service.INBOUND_SOURCE, request.ip);
        throw err;
      }
    },
  );

  app.get(
    '/mail/address',
    {
      schema: {
        tags,
        summary: "The workspace's inbound address",
        response: { 200: z.object({ address: z.string() }), ...problemResponses },
      },
    },
    async (request) => ({ address: service.addressOf(deps, requireCtx(request).workspaceId) }),
  );

  app.get(
    '/mail/messages',
    {
      schema: {
        tags,
        summary: 'Mail received, newest first',
        querystring: pageQuery,
        response: { 200: listOf(messageSchema), ...problemResponses },
      },
    },
    async (request) => service.listMail(deps, requireCtx(request), request.query),
  );

  app.get(
    '/mail/messages/:id',
    {
      schema: {
        tags,
        summary: 'One received message',
        params: idParams,
        response: { 200: messageSchema, ...problemResponses },
      },
    },
    async (request) => service.getMail(deps, requireCtx(request), request.params.id),
  );
}
