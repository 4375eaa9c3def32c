// Speech emulator (contract §11 `tts`): two voice providers with their own wire protocols, so the
// fallback is a real second adapter. Primary: OpenAI-style `POST /v1/audio/speech {model, input,
// voice, response_format}` with a bearer key. Fallback: ElevenLabs-style `POST /fallback/v1/
// text-to-speech/:voiceId {text}` with `xi-api-key`. Both answer audio/wav (a short tone whose length
// follows the text). Fault operations `speech` (primary) and `fallback.speech`.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';

/** 16-bit mono PCM at 8 kHz: ~60 ms of a 440 Hz tone per word, at most 10 s. */
function toneWav(text: string): Buffer {
  const rate = 8000;
  const words = Math.max(1, text.trim().split(/\s+/).length);
  const samples = Math.min(rate * 10, Math.round(words * 0.06 * rate));
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 8000), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export async function ttsEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  const audio = (reply: FastifyReply, text: string) => reply.type('audio/wav').send(toneWav(text));

  fastify.post('/v1/audio/speech', { schema: { hide: true } }, async (request, reply) => {
    if (!/^Bearer \S{8,}/.test(request.headers.authorization ?? '')) {
      return reply
        .status(401)
        .send({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
    }
    const f = await applyFault(faults, 'speech');
    if (f)
      return reply
        .status(f.status!)
        .send(f.body ?? { error: { message: 'The server is overloaded', type: 'server_error' } });
    const body = (request.body ?? {}) as { input?: unknown; model?: unknown };
    if (typeof body.input !== 'string' || !body.input.trim() || body.input.length > 4096) {
      return reply
        .status(400)
        .send({ error: { message: "'input' is required (at most 4096 characters)", type: 'invalid_request_error' } });
    }
    return audio(reply, body.input);
  });

  fastify.post('/fallback/v1/text-to-speech/:voiceId', { schema: { hide: true } }, async (request, reply) => {
    if (typeof request.headers['xi-api-key'] !== 'string' || request.headers['xi-api-key'].length < 8) {
      return reply.status(401).send({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    }
    const f = await applyFault(faults, 'fallback.speech');
    if (f) return reply.status(f.status!).send(f.body ?? { detail: { status: 'system_busy', message: 'Busy' } });
    const body = (request.body ?? {}) as { text?: unknown };
    if (typeof body.text !== 'string' || !body.text.trim() || body.text.length > 5000) {
      return reply.status(422).send({ detail: { status: 'invalid_text', message: 'text is required' } });
    }
    return audio(reply, body.text);
  });
}
