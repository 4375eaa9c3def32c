import { z } from 'zod';
import { alsoDocumentedAs, EVENT_STREAM_MEDIA_TYPE } from '../../platform/http/openapi-media.js';
import { scopeSchema, slugSchema, toolSchema } from '../marketplace/index.js';

export const contentQuery = z.object({ slug: slugSchema.optional() });

export const contentResponse = z.object({
  items: z.array(z.object({ slug: z.string(), version: z.string(), content: z.string(), tools: z.array(toolSchema) })),
  nextCursor: z.null(),
});

export const routingResponse = z.object({
  items: z.array(
    z.object({ slug: z.string(), skillId: z.string(), triggers: z.array(z.string()), tools: z.array(toolSchema) }),
  ),
  nextCursor: z.null(),
});

export const invokeBody = z.object({
  slug: slugSchema,
  tool: z.string().min(1).max(64),
  input: z.unknown().default({}),
});

export const invokeResponse = z.object({ result: z.unknown(), invocationId: z.string() });

export const chatBody = z.object({
  messages: z
    .array(z.object({ role: z.enum(['user', 'assistant']), content: z.string().min(1).max(10_000) }))
    .min(1)
    .max(50),
});

export const chatResponse = z.object({
  message: z.object({ role: z.literal('assistant'), content: z.string() }),
  toolCalls: z.array(
    z.object({
      slug: z.string(),
      tool: z.string(),
      input: z.unknown(),
      outcome: z.enum(['ok', 'denied', 'error']),
      result: z.unknown().optional(),
      error: z.object({ code: z.string(), detail: z.string() }).optional(),
      label: z.string().describe('What the call did, in plain words (for a card; no tool names)'),
      summary: z.string().describe('Its outcome in plain words, without internal ids'),
    }),
  ),
  model: z.object({ provider: z.string(), name: z.string(), offline: z.boolean() }),
  provider: z.string().describe('The model provider that answered (contract §9): after a failure, the fallback’s name'),
  fallbacks: z.array(z.object({ provider: z.string(), error: z.string() })).optional(),
});

const toolCard = z.object({ label: z.string(), summary: z.string(), outcome: z.string() });

export const conversationBody = z.object({ content: z.string().trim().min(1).max(10_000) }).strict();
export const conversationParams = z.object({ id: z.string().min(1).max(100) });
export const conversationSummary = z.object({
  id: z.string(),
  title: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const conversationList = z.object({ items: z.array(conversationSummary), nextCursor: z.null() });
export const conversationDetail = conversationSummary.extend({
  messages: z.array(
    z.object({
      id: z.string(),
      role: z.enum(['user', 'assistant']),
      content: z.string(),
      toolCalls: z.array(toolCard).describe('The cards of an assistant turn: what was done and the outcome'),
      offline: z
        .boolean()
        .describe("An assistant turn answered by the emulators' offline model (always false on a person's turn)"),
      createdAt: z.string(),
    }),
  ),
});
export const conversationTurn = chatResponse.extend({
  conversation: z.object({ id: z.string(), title: z.string() }),
});

export const conversationTurnOrStream = alsoDocumentedAs(
  conversationTurn,
  EVENT_STREAM_MEDIA_TYPE,
  'With `Accept: text/event-stream`: events `tool` ({slug, tool, label, summary, outcome}), `delta` ({text}), ' +
    '`done` (this JSON), or `error` (a problem).',
);

export { scopeSchema };
