// AI emulator: two OpenAI-compatible chat-completions endpoints served by the deterministic offline
// model (model.ts), so the assistant's fallback chain has a real second provider offline: the primary
// `POST /v1/chat/completions` (fault operation `chat.completions`, model `atrium-offline-1`) and the
// fallback `POST /fallback/v1/chat/completions` (fault operation `fallback.chat.completions`, model
// `atrium-offline-fallback-1`). A fault on one never touches the other.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';
import { complete, type EmuMessage, type EmuTool } from './model.js';

const body = z.looseObject({
  model: z.string().optional(),
  messages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant', 'tool']) })).min(1),
  tools: z
    .array(z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }))
    .optional(),
});

export async function aiEmulator(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  let completions = 0;

  const endpoint = (path: string, operation: string, defaultModel: string, summary: string) =>
    app.post(
      path,
      { bodyLimit: 4 * 1024 * 1024, schema: { tags: ['emulators'], summary, body } },
      async (request, reply) => {
        const fault = await applyFault(faults, operation);
        if (fault)
          return reply.status(fault.status!).send({ error: { message: 'injected fault', type: 'server_error' } });
        const n = ++completions;
        let calls = 0;
        const messages = request.body.messages as unknown as EmuMessage[];
        const tools = (request.body.tools ?? []) as unknown as EmuTool[];
        const answer = complete(messages, tools, () => `call_${n}_${++calls}`);
        return {
          id: `chatcmpl-emu-${n}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: request.body.model ?? defaultModel,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: answer.content,
                ...(answer.tool_calls ? { tool_calls: answer.tool_calls } : {}),
              },
              finish_reason: answer.tool_calls ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        };
      },
    );

  endpoint(
    '/v1/chat/completions',
    'chat.completions',
    'atrium-offline-1',
    'OpenAI-compatible chat completion (offline model)',
  );
  endpoint(
    '/fallback/v1/chat/completions',
    'fallback.chat.completions',
    'atrium-offline-fallback-1',
    'OpenAI-compatible chat completion (offline fallback model)',
  );
}
