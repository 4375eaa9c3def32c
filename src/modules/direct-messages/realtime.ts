import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { watchCredential } from '../../platform/auth/credential-watch.js';
import type { RequestContext } from '../../platform/context.js';
import type { Database } from '../../platform/db/client.js';
import type { AppDeps } from '../../platform/types.js';
import { DM_CHANNEL, type DmNotification } from './repository.js';
import * as service from './service.js';

const HEARTBEAT_MS = 15_000;
const CATCH_UP_BATCH = 200;

type Handler = (notice: DmNotification) => void;

/**
 * One per app instance: a single LISTEN on the DM channel (in-process on PGlite) fanned out to
 * the SSE streams of this instance, keyed by workspace and thread. Notices carry ids only;
 * each stream loads what it may see through withTenant with its own caller's context.
 */
export class DmRealtimeHub {
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly streams = new Set<ServerResponse>();
  private listening: Promise<() => Promise<void>> | undefined;

  constructor(
    private readonly database: Database,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Starts listening once; a failed attempt is retried by the next caller. */
  async ensureListening(): Promise<void> {
    this.listening ??= this.database.listen(DM_CHANNEL, (payload) => this.dispatch(payload));
    try {
      await this.listening;
    } catch (err) {
      this.listening = undefined;
      throw err;
    }
  }

  private dispatch(payload: string): void {
    let notice: DmNotification;
    try {
      notice = JSON.parse(payload) as DmNotification;
    } catch {
      return;
    }
    for (const handler of this.handlers.get(`${notice.w}/${notice.t}`) ?? []) {
      try {
        handler(notice);
      } catch (err) {
        this.log.warn({ err }, 'direct-messages realtime handler failed');
      }
    }
  }

  subscribe(workspaceId: string, threadId: string, handler: Handler): () => void {
    const key = `${workspaceId}/${threadId}`;
    let set = this.handlers.get(key);
    if (!set) {
      set = new Set();
      this.handlers.set(key, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(key) === set) this.handlers.delete(key);
    };
  }

  track(stream: ServerResponse): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Ends every open stream, so closing the server is not held up by them. */
  endStreams(): void {
    for (const stream of this.streams) stream.end();
    this.streams.clear();
  }

  async close(): Promise<void> {
    this.endStreams();
    const unlisten = this.listening ? await this.listening.catch(() => undefined) : undefined;
    this.listening = undefined;
    await unlisten?.();
  }
}

function sseEvent(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Serves `GET /direct-messages/:threadId/events`. Participation is checked before the response
 * is hijacked, so a stranger gets an ordinary 404 problem. Message events carry the message id
 * as `id:`, so `Last-Event-ID` resumes after it; receipt events carry no id (they are state, and
 * every (re)connection starts with a snapshot of all receipts).
 */
export async function streamThreadEvents(
  deps: AppDeps,
  hub: DmRealtimeHub,
  ctx: RequestContext,
  threadId: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const header = request.headers['last-event-id'];
  const lastEventId = (Array.isArray(header) ? header[0] : header)?.trim() || undefined;
  let lastSeq = await service.openStream(deps, ctx, threadId, lastEventId);
  await hub.ensureListening();

  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-content-type-options': 'nosniff',
    'x-request-id': String(request.id),
  });
  res.flushHeaders();

  let closed = false;
  const write = (chunk: string) => {
    if (!closed && !res.writableEnded) res.write(chunk);
  };
  // Contract §6: once the credential is revoked (token deleted, signed out, membership ended) the
  // stream delivers nothing more and ends; every write below first asks the watch.
  const watch = watchCredential(deps, request, () => res.end());

  // Serialised catch-up: any number of notices while a load runs cause exactly one more load.
  let running = false;
  let again = false;
  const catchUp = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const batch = await service.messagesSince(deps, ctx, threadId, lastSeq, CATCH_UP_BATCH);
        if (batch === null) {
          res.end();
          return;
        }
        if (!(await watch.stillValid())) return;
        for (const { seq, message } of batch) {
          write(sseEvent('message.created', message, message.id));
          lastSeq = seq;
        }
        if (batch.length === CATCH_UP_BATCH) again = true;
      } while (again && !closed);
    } catch (err) {
      request.log.warn({ err }, 'direct-messages stream catch-up failed');
    } finally {
      running = false;
    }
  };
  const sendReceipts = async (userId?: string) => {
    try {
      const receipts = await service.receiptsOf(deps, ctx, threadId, userId);
      if (!(await watch.stillValid())) return;
      for (const receipt of receipts) write(sseEvent('receipt.updated', receipt));
    } catch (err) {
      request.log.warn({ err }, 'direct-messages stream receipt load failed');
    }
  };

  const unsubscribe = hub.subscribe(ctx.workspaceId, threadId, (notice) => {
    if (notice.k === 'm') void catchUp();
    else if (notice.k === 'r' && notice.u) void sendReceipts(notice.u);
  });
  const untrack = hub.track(res);
  const heartbeat = setInterval(() => write(`: heartbeat ${new Date().toISOString()}\n\n`), HEARTBEAT_MS);
  heartbeat.unref();
  const cleanUp = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    watch.stop();
    unsubscribe();
    untrack();
  };
  // The response's close (not the request's) is what fires when the client goes away.
  res.on('close', cleanUp);

  write('retry: 3000\n: connected\n\n');
  await sendReceipts();
  // Anything committed after openStream read the position (and before we subscribed) arrives here.
  await catchUp();
}
