// A conversation turn as Server-Sent Events (`Accept: text/event-stream`): a `tool` event as each
// tool call finishes (the card: what was done and the outcome, in plain words), then the answer as
// `delta` text chunks, then `done` with the same JSON the plain request answers. Anything failing
// once the stream is open arrives as an `error` event carrying the problem; checks that can fail
// before (validation, someone else's conversation) are ordinary problem+json responses.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, problemBody } from '../../../platform/errors.js';
import type { ChatHooks, ChatToolCall } from './chat-service.js';

export function wantsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return /(^|[\s,])text\/event-stream\b/i.test(Array.isArray(accept) ? accept.join(',') : (accept ?? ''));
}

export function sseEvent(event: string, data: unknown): string {
  // JSON never holds a raw newline, so one `data:` line carries it.
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The answer in chunks of a few words (whitespace kept, so the chunks join back to the text). */
export function textChunks(text: string, wordsPerChunk = 4): string[] {
  const pieces = text.match(/\S+\s*/g) ?? [];
  const lead = /^\s+/.exec(text)?.[0] ?? '';
  const out: string[] = [];
  for (let i = 0; i < pieces.length; i += wordsPerChunk) out.push(pieces.slice(i, i + wordsPerChunk).join(''));
  if (lead && out.length) out[0] = lead + out[0];
  return out;
}

/** The card a tool event carries: no inputs or raw results (those are in `done`). */
export function toolEvent(call: ChatToolCall) {
  return { slug: call.slug, tool: call.tool, label: call.label, summary: call.summary, outcome: call.outcome };
}

export async function streamTurn<T extends { message: { content: string } }>(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  run: (hooks: ChatHooks) => Promise<T>,
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(status, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-content-type-options': 'nosniff',
    'x-request-id': String(request.id),
  });
  res.flushHeaders();
  // A client that goes away does not stop the turn: it is stored and shows up when it reloads.
  const write = (event: string, data: unknown) => {
    if (!res.writableEnded && !res.destroyed) res.write(sseEvent(event, data));
  };
  try {
    const result = await run({ onToolCall: (call) => write('tool', toolEvent(call)) });
    for (const text of textChunks(result.message.content)) write('delta', { text });
    write('done', result);
  } catch (err) {
    if (err instanceof AppError) {
      if (err.status >= 500) request.log.warn({ err }, 'assistant turn failed');
      write('error', problemBody(request, err.status, err.code, err.message, err.extras));
    } else {
      request.log.error({ err }, 'assistant turn failed');
      write('error', problemBody(request, 500, 'internal_error', 'An unexpected error occurred'));
    }
  } finally {
    res.end();
  }
}
