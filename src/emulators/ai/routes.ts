// AI emulator: an OpenAI-compatible chat-completions endpoint served by the deterministic offline
// model (model.ts). Fault operation: `chat.completions`.
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

  app.post(
    '/v1/chat/completions',
    {
      bodyLimit: 4 * 1024 * 1024,
      schema: { tags: ['emulators'], summary: 'OpenAI-compatible chat completion (offline model)', body },
    },
    async (request, reply) => {
      const fault = await applyFault(faults, 'chat.completions');
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
        model: request.body.model ?? 'atrium-offline-1',
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
}
