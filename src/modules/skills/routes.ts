// Skill runtime: instructions and routing of installed skills, the dispatcher, and the assistant chat.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { runChat } from './chat/chat-service.js';
import { invokeTool } from './dispatcher.js';
import {
  chatBody,
  chatResponse,
  contentQuery,
  contentResponse,
  invokeBody,
  invokeResponse,
  routingResponse,
} from './schema.js';
import * as service from './service.js';

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
}
