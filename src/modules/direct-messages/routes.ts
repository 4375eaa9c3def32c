// Direct messages: 1:1 and group threads, read receipts, realtime (SSE over LISTEN/NOTIFY), @patient mentions with PHI audit, admin search.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { listOf } from '../../platform/pagination.js';
import { DmRealtimeHub, streamThreadEvents } from './realtime.js';
import {
  historyQuery,
  historyResponse,
  listThreadsQuery,
  markReadBody,
  receiptSchema,
  searchQuery,
  searchResponse,
  sendBody,
  sendInThreadBody,
  sendInThreadResponse,
  sendResponse,
  threadListItem,
  threadParams,
} from './schema.js';
import * as service from './service.js';

export async function directMessageRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['direct-messages'];
  const hub = new DmRealtimeHub(deps.database, fastify.log);
  // Open event streams would otherwise keep app.close() waiting: end them before the server closes.
  fastify.addHook('preClose', async () => hub.endStreams());
  fastify.addHook('onClose', async () => hub.close());

  app.get(
    '/direct-messages',
    {
      schema: {
        tags,
        summary: "The caller's threads, most recently active first, with the last message and unread count",
        description:
          'Participants removed from the workspace stay in their threads, marked `former: true` under their name; ' +
          'a title made of names follows theirs with "(no longer a member)".',
        querystring: listThreadsQuery,
        response: { 200: listOf(threadListItem), ...problemResponses },
      },
    },
    async (request) => service.listThreads(deps, requireCtx(request), request.query),
  );

  app.post(
    '/direct-messages',
    {
      config: { idempotent: true },
      schema: {
        tags,
        summary: 'Send a message: to recipients (their 1:1 or group thread is reused) or into a thread',
        description:
          'Either `{recipients, body, title?}` or `{threadId, body}`. One recipient means the 1:1 thread of the pair; ' +
          'several mean the group thread of exactly that member set (created on first use, `title` applies then only). ' +
          'Recipients must be workspace members (422 `unknown_recipient`); duplicates and the sender are ignored. ' +
          '`@patient:<id>` mentions must name patients of the workspace (422 `unknown_patient`). Into a thread whose ' +
          'other participants are all no longer members: 409 `recipients_left` naming them (`formerParticipants: ' +
          '[{userId, name}]`, and in `detail`). Free tier: 403 ' +
          '`tier_required`. Accepts `Idempotency-Key`.',
        body: sendBody,
        response: { 201: sendResponse, ...problemResponses },
      },
    },
    async (request, reply) => reply.status(201).send(await service.send(deps, requireCtx(request), request.body)),
  );

  app.get(
    '/direct-messages/search',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Full-text search over every message of the workspace (admins; audited)',
        description:
          '`q` uses web-search syntax (`"exact phrase"`, `or`, `-exclude`), English stemming. Ranked by relevance. ' +
          "A patient mention (`@patient:<id>` in a body) is searched as the patient's name: `Vance` finds the messages " +
          "mentioning Eleanor Vance (a patient of this workspace), and the token's own text (`patient`, the id) matches " +
          'nothing. ' +
          '`userId` limits to threads that user takes part in; `senderId` to messages that user sent. ' +
          "Each hit has a `snippet`: excerpts of the body as people read it (a mention as `@` and the patient's name), " +
          'HTML-escaped (`&amp;` `&lt;` `&gt;` `&quot;` `&#39;`), with ' +
          'the matches in `<mark>…</mark>` and no other markup; text that looks like markup in a message is kept, escaped. ' +
          'Each search writes an `admin_action` audit row.',
        querystring: searchQuery,
        response: { 200: searchResponse, ...problemResponses },
      },
    },
    async (request) => service.search(deps, requireCtx(request), request.query),
  );

  app.get(
    '/direct-messages/:threadId',
    {
      schema: {
        tags,
        summary: 'Thread history, newest first, with read receipts (participants only)',
        params: threadParams,
        querystring: historyQuery,
        response: { 200: historyResponse, ...problemResponses },
      },
    },
    async (request) => service.getHistory(deps, requireCtx(request), request.params.threadId, request.query),
  );

  app.post(
    '/direct-messages/:threadId',
    {
      config: { idempotent: true },
      schema: {
        tags,
        summary: 'Send a message into a thread (participants only; Free tier: 403)',
        description:
          'Not a participant → 404. When no other participant is a member of the workspace any more (all of ' +
          'them were removed) → 409 `recipients_left`, nothing stored, naming them (`formerParticipants: ' +
          '[{userId, name}]`, and in `detail`); a thread with someone still a member works for them.',
        params: threadParams,
        body: sendInThreadBody,
        response: { 201: sendInThreadResponse, ...problemResponses },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(await service.sendInThread(deps, requireCtx(request), request.params.threadId, request.body.body)),
  );

  app.patch(
    '/direct-messages/:threadId',
    {
      schema: {
        tags,
        summary: 'Mark the thread read (up to lastReadMessageId, default the latest); receipts never move back',
        params: threadParams,
        body: markReadBody,
        response: { 200: z.object({ receipt: receiptSchema }), ...problemResponses },
      },
    },
    async (request) => service.markRead(deps, requireCtx(request), request.params.threadId, request.body),
  );

  app.get(
    '/direct-messages/:threadId/events',
    {
      schema: {
        tags,
        summary: 'Server-Sent Events: message.created (id = message id), receipt.updated; resumes with Last-Event-ID',
        description:
          'text/event-stream. Each connection starts with a `receipt.updated` per participant, then streams new ' +
          'messages and receipt changes from any server instance. A comment line is sent every 15 s as heartbeat. ' +
          'Once its credential is revoked (token deleted, session signed out, membership ended) the stream sends ' +
          'nothing more and ends within 5 s.',
        params: threadParams,
        response: { 200: z.string().describe('text/event-stream'), ...problemResponses },
      },
    },
    async (request, reply) =>
      streamThreadEvents(deps, hub, requireCtx(request), request.params.threadId, request, reply),
  );
}
