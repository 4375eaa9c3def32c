// Skill runtime: instructions and routing of installed skills, the dispatcher, and the assistant chat.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { noContent, problemResponses } from '../../platform/http-schemas.js';
import { runChat } from './chat/chat-service.js';
import {
  checkConversation,
  continueConversation,
  deleteConversation,
  getConversation,
  listConversations,
  startConversation,
} from './chat/conversations.js';
import { streamTurn, wantsEventStream } from './chat/stream.js';
import { invokeTool } from './dispatcher.js';
import {
  chatBody,
  chatResponse,
  contentQuery,
  contentResponse,
  conversationBody,
  conversationDetail,
  conversationList,
  conversationParams,
  conversationTurnOrStream,
  invokeBody,
  invokeResponse,
  routingResponse,
} from './schema.js';
import * as service from './service.js';

const STREAM_DESCRIPTION =
  'With `Accept: text/event-stream` the turn streams as Server-Sent Events while it runs: `event: tool` as each ' +
  'tool call finishes (`{slug, tool, label, summary, outcome}`: the card, in plain words), then `event: delta` ' +
  'chunks of the answer (`{text}`, joined in order they are the answer), then `event: done` with the same JSON as ' +
  'the plain response; a failure once the stream is open is `event: error` with the problem. Validation errors and ' +
  'a conversation that is not yours are ordinary problem+json responses.';

export async function skillRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  const tags = ['skills'];

  app.get(
    '/skills/content',
    {
      schema: {
        tags,
        summary: 'Markdown instructions and granted tools of installed skills (404 for a skill not installed)',
        querystring: contentQuery,
        response: { 200: contentResponse, ...problemResponses },
      },
    },
    async (request) => service.skillContent(deps, requireCtx(request), request.query.slug),
  );

  app.get(
    '/skills/routing',
    {
      schema: {
        tags,
        summary: 'Routing rules: triggers and the tools whose required scopes are all granted',
        response: { 200: routingResponse, ...problemResponses },
      },
    },
    async (request) => service.routing(deps, requireCtx(request)),
  );

  app.post(
    '/skills/invoke',
    {
      schema: {
        tags,
        summary: 'Run one tool through the dispatcher (audited as skill_invocation)',
        description:
          'Skill not installed or unknown tool → 404; tool needing an ungranted scope → 403 scope_denied with ' +
          '`requiredScopes` and `grantedScopes`; input failing the tool’s inputSchema → 422 invalid_input; tool ' +
          'failures → problem+json (502/504 for upstream trouble, 500 tool_failed otherwise).',
        body: invokeBody,
        response: { 200: invokeResponse, ...problemResponses },
      },
    },
    async (request) => {
      const { slug, tool, input } = request.body;
      return invokeTool(deps, requireCtx(request), { slug, tool, input }, 'api');
    },
  );

  app.post(
    '/chat',
    {
      schema: {
        tags,
        summary: 'The assistant: offers only granted tools of installed skills; every call goes through the dispatcher',
        description:
          'Model providers are tried in order: the configured OpenAI-compatible provider (ATRIUM_AI_BASE_URL), then ' +
          'the offline model emulator. `model.offline` marks answers from the offline model.',
        body: chatBody,
        response: { 200: chatResponse, ...problemResponses },
      },
    },
    async (request) => runChat(deps, requireCtx(request), request.body.messages),
  );

  app.get(
    '/chat/conversations',
    {
      schema: {
        tags,
        summary: "The caller's assistant conversations, most recent first",
        response: { 200: conversationList, ...problemResponses },
      },
    },
    async (request) => ({ ...(await listConversations(deps, requireCtx(request))), nextCursor: null }),
  );

  app.post(
    '/chat/conversations',
    {
      schema: {
        tags,
        summary: 'Start a conversation with a first message; answers like POST /chat and keeps both turns',
        description: STREAM_DESCRIPTION,
        body: conversationBody,
        response: { 201: conversationTurnOrStream, ...problemResponses },
      },
    },
    async (request, reply) => {
      const ctx = requireCtx(request);
      const { content } = request.body;
      if (wantsEventStream(request)) {
        await checkConversation(deps, ctx);
        return streamTurn(request, reply, 201, (hooks) => startConversation(deps, ctx, content, hooks));
      }
      reply.code(201);
      return startConversation(deps, ctx, content);
    },
  );

  app.get(
    '/chat/conversations/:id',
    {
      schema: {
        tags,
        summary: "One of the caller's conversations with its turns (anyone else's: 404)",
        params: conversationParams,
        response: { 200: conversationDetail, ...problemResponses },
      },
    },
    async (request) => getConversation(deps, requireCtx(request), request.params.id),
  );

  app.post(
    '/chat/conversations/:id/messages',
    {
      schema: {
        tags,
        summary: 'Continue a conversation: the stored turns are the context',
        description: STREAM_DESCRIPTION,
        params: conversationParams,
        body: conversationBody,
        response: { 200: conversationTurnOrStream, ...problemResponses },
      },
    },
    async (request, reply) => {
      const ctx = requireCtx(request);
      const { id } = request.params;
      const { content } = request.body;
      if (wantsEventStream(request)) {
        await checkConversation(deps, ctx, id);
        return streamTurn(request, reply, 200, (hooks) => continueConversation(deps, ctx, id, content, hooks));
      }
      return continueConversation(deps, ctx, id, content);
    },
  );

  app.delete(
    '/chat/conversations/:id',
    {
      schema: {
        tags,
        summary: "Delete one of the caller's conversations",
        params: conversationParams,
        response: { 204: noContent, ...problemResponses },
      },
    },
    async (request, reply) => {
      await deleteConversation(deps, requireCtx(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
