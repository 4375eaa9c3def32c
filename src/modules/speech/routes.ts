// Speech: text read aloud (the assistant's answers, reminders), from the primary voice provider or,
// when it fails, the fallback; the answer says which (`x-voice-provider`).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCtx } from '../../platform/auth/authenticate.js';
import { AppError } from '../../platform/errors.js';
import { sentAs } from '../../platform/http/openapi-media.js';
import { problemResponses } from '../../platform/http-schemas.js';
import { resolveVoices, VoiceFailed } from './voices.js';

export async function speechRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const deps = fastify.atrium;
  app.post(
    '/speech',
    {
      schema: {
        tags: ['speech'],
        summary: 'Read text aloud: audio/wav from the primary voice provider, or its fallback when it fails',
        description:
          'The `x-voice-provider` header says which provider answered (`primary` or `fallback`). 503 `unavailable` ' +
          'when no voice provider is configured; 502 `upstream_failed` when every provider failed.',
        body: z.object({
          text: z
            .string()
            .trim()
            .min(1)
            .max(4000)
            .refine((s) => !s.includes('\u0000'), 'Must not contain NUL'),
        }),
        response: { 200: sentAs(z.string().describe('WAV audio'), 'audio/wav'), ...problemResponses },
      },
    },
    async (request, reply) => {
      const ctx = requireCtx(request);
      const chain = resolveVoices(deps);
      if (chain.length === 0) throw new AppError('unavailable', 503, 'No voice provider is configured');
      const failures: string[] = [];
      for (const voice of chain) {
        try {
          const audio = await voice.synthesize(request.body.text, ctx.requestId);
          // Raw audio bytes: the JSON schema above documents the media type only.
          return reply
            .header('x-voice-provider', voice.name)
            .type('audio/wav')
            .send(audio as never);
        } catch (err) {
          if (!(err instanceof VoiceFailed)) throw err;
          failures.push(err.message);
        }
      }
      throw new AppError('upstream_failed', 502, 'Every voice provider failed', { failures });
    },
  );
}
