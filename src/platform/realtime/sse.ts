// Realtime for the web app (direct messages, the channels inbox): one LISTEN per app instance on a
// NOTIFY channel, fanned out to this instance's Server-Sent Events streams by key, and the SSE
// response itself (headers, heartbeat, the credential watch of contract §6, clean-up on close).
// Notices carry ids only: each stream loads what its own caller may see.
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { type CredentialWatch, watchCredential } from '../auth/credential-watch.js';
import type { Database } from '../db/client.js';
import type { AppDeps } from '../types.js';

const HEARTBEAT_MS = 15_000;

type Handler<N> = (notice: N) => void;

export class RealtimeHub<N> {
  private readonly handlers = new Map<string, Set<Handler<N>>>();
  private readonly streams = new Set<ServerResponse>();
  private listening: Promise<() => Promise<void>> | undefined;

  constructor(
    private readonly database: Database,
    private readonly log: FastifyBaseLogger,
    /** The NOTIFY channel. */
    private readonly channel: string,
    /** Which subscribers a notice is for (undefined: nobody). */
    private readonly keyOf: (notice: N) => string | undefined,
  ) {}

  /** Starts listening once; a failed attempt is retried by the next caller. */
  async ensureListening(): Promise<void> {
    this.listening ??= this.database.listen(this.channel, (payload) => this.dispatch(payload));
    try {
      await this.listening;
    } catch (err) {
      this.listening = undefined;
      throw err;
    }
  }

  private dispatch(payload: string): void {
    let notice: N;
    try {
      notice = JSON.parse(payload) as N;
    } catch {
      return;
    }
    const key = this.keyOf(notice);
    for (const handler of (key && this.handlers.get(key)) || []) {
      try {
        handler(notice);
      } catch (err) {
        this.log.warn({ err, channel: this.channel }, 'realtime handler failed');
      }
    }
  }

  subscribe(key: string, handler: Handler<N>): () => void {
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

export function sseEvent(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface SseStream {
  /** Writes raw SSE text, unless the stream has ended. */
  write(chunk: string): void;
  /** Whether the client went away (or the stream was ended). */
  readonly closed: boolean;
  /** True while the credential that opened the stream is valid: ask before every delivery. */
  stillValid: CredentialWatch['stillValid'];
  end(): void;
  /** Runs when the stream closes (unsubscribe here). */
  onClose(fn: () => void): void;
}

/** Last-Event-ID of a reconnecting client, if any. */
export function lastEventId(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id'];
  return (Array.isArray(header) ? header[0] : header)?.trim() || undefined;
}

/**
 * Turns the reply into an event stream tracked by `hub`: SSE headers, `retry`, a heartbeat comment
 * every 15 s, and the credential watch (contract §6: once the token is revoked, the session signed
 * out or the membership ended, nothing more is delivered and the stream ends). Check access before
 * calling: after this the reply is hijacked and cannot carry a problem.
 */
export function openSseStream<N>(
  deps: AppDeps,
  hub: RealtimeHub<N>,
  request: FastifyRequest,
  reply: FastifyReply,
): SseStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    // Events carry messages and patient data: never stored (contract §1), nor transformed by a proxy.
    'cache-control': 'no-store, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-content-type-options': 'nosniff',
    'x-request-id': String(request.id),
  });
  res.flushHeaders();
  let closed = false;
  const closers: (() => void)[] = [];
  const write = (chunk: string) => {
    if (!closed && !res.writableEnded) res.write(chunk);
  };
  const watch = watchCredential(deps, request, () => res.end());
  const untrack = hub.track(res);
  const heartbeat = setInterval(() => write(`: heartbeat ${new Date().toISOString()}\n\n`), HEARTBEAT_MS);
  heartbeat.unref();
  // The response's close (not the request's) is what fires when the client goes away.
  res.on('close', () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    watch.stop();
    untrack();
    for (const fn of closers) fn();
  });
  write('retry: 3000\n: connected\n\n');
  return {
    write,
    get closed() {
      return closed;
    },
    stillValid: () => watch.stillValid(),
    end: () => res.end(),
    onClose: (fn) => {
      if (closed) fn();
      else closers.push(fn);
    },
  };
}
