// Request-level hardening every route gets: problem+json for errors raised before a route runs,
// refusal of hostile text, no caching of API responses, one log line and one metric per request.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  errorCodes,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { problemBody, sendProblem, validationFailed } from '../errors.js';
import { newId } from '../ids.js';
import { httpDuration } from '../metrics.js';

/**
 * A request id a caller may choose (`X-Request-Id`, echoed back); any other is replaced by a generated
 * `req_…` id, which has the same form. The OpenAPI document declares the response header with it.
 */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** NUL or an unpaired UTF-16 surrogate: text PostgreSQL cannot store faithfully (or at all). */
export function isHostileText(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

/**
 * The path of the first string (or key) in `value` that is hostile text, or undefined. Walks with its
 * own stack, so no nesting depth hides anything (the body limit bounds the work).
 */
export function findHostileText(value: unknown, path: string): string | undefined {
  return findRefused(value, path, Number.POSITIVE_INFINITY)?.path;
}

/** How deep a request's JSON may nest: no API body comes near it; far deeper, serialising it again overflows. */
export const MAX_JSON_DEPTH = 64;

/**
 * The first thing in `value` a request may not carry: hostile text (a string or key), or an array or object nested
 * more than `maxDepth` levels (`[[[…]]]` ten thousand deep parses, and then overflows the stack of whatever
 * serialises or copies it recursively: a skill's call, a log line). One walk with its own stack for both.
 */
export function findRefused(
  value: unknown,
  path: string,
  maxDepth = MAX_JSON_DEPTH,
): { path: string; message: string } | undefined {
  const stack: [unknown, string, number][] = [[value, path, 0]];
  while (stack.length > 0) {
    const [item, at, depth] = stack.pop()!;
    if (typeof item === 'string') {
      if (isHostileText(item)) return { path: at, message: MESSAGE };
      continue;
    }
    if (item === null || typeof item !== 'object' || Buffer.isBuffer(item)) continue;
    if (depth >= maxDepth) return { path: at, message: DEPTH_MESSAGE };
    // Pushed in reverse, so the first hostile text in document order is the one reported.
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${at}.${i}`, depth + 1]);
      continue;
    }
    const entries = Object.entries(item);
    for (const [key] of entries) if (isHostileText(key)) return { path: at, message: MESSAGE };
    for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], `${at}.${entries[i][0]}`, depth + 1]);
  }
  return undefined;
}

const DEPTH_MESSAGE = `Arrays and objects may not be nested more than ${MAX_JSON_DEPTH} levels deep`;
const MESSAGE = 'Text may not contain NUL characters or unpaired UTF-16 surrogates';

/** The router answers these before any hook runs: the headers the onSend hooks would add are set here. */
function sendEarlyProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
): void {
  reply.header('x-request-id', String(request.id)).header('cache-control', 'no-store');
  sendProblem(request, reply, status, code, detail);
  // No onResponse hook runs for these: their one log line and their sample are written here.
  recordRequest(request, reply);
}

const RECORDED = Symbol('atrium.request-recorded');

/** One log line and one latency sample per request, by route pattern (never the query string). */
function recordRequest(request: FastifyRequest, reply: FastifyReply): void {
  const marked = request as FastifyRequest & { [RECORDED]?: boolean };
  if (marked[RECORDED]) return;
  marked[RECORDED] = true;
  const route = request.is404 ? undefined : request.routeOptions?.url;
  const ms = reply.elapsedTime;
  httpDuration.observe(
    { method: request.method, route: route ?? 'unmatched', status: String(reply.statusCode) },
    ms / 1000,
  );
  request.log.info(
    {
      method: request.method,
      route: route ?? undefined,
      path: route ? undefined : loggablePath(request.url),
      status: reply.statusCode,
      ms: Math.round(ms * 10) / 10,
    },
    'request',
  );
}

/**
 * Errors Node's HTTP parser raises before there is a request (headers too large, a broken request
 * line or chunk): answered as problem+json with a request id, and logged, like every other error.
 */
export function clientErrorHandler(log: FastifyBaseLogger) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    // A client that hung up is no refusal (Node sends its socket error here too): nothing to answer or count.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, code, detail] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? ([431, 'headers_too_large', 'The request headers (or the URL) are too large'] as const)
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? ([408, 'request_timeout', 'The request did not arrive in time'] as const)
          : ([400, 'bad_request', 'The request could not be read as HTTP'] as const);
    const id = newId('req');
    log.info({ reqId: id, status, code: error.code }, 'request refused by the HTTP parser');
    httpDuration.observe({ method: 'unknown', route: 'unparsed', status: String(status) }, 0);
    // Never a raw answer in the middle of a response already being sent on this connection.
    const sending = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (!socket.writable || sending) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(problemBody({ id }, status, code, detail));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nCache-Control: no-store\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}

/**
 * Fastify's `frameworkErrors`: the router's own refusals (bad percent-encoding, an over-long path
 * parameter) become problem+json with a request id like every other error. The router checks only the
 * path's percent-encoding; the first onRequest hook sends a query string's through here too
 * (`hasBadQueryEncoding`).
 */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, request, reply) => {
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendEarlyProblem(request, reply, 414, 'uri_too_long', 'A path segment of the URL is too long');
    return;
  }
  if (code === 'FST_ERR_BAD_URL') {
    sendEarlyProblem(request, reply, 400, 'validation_failed', 'The URL is not valid (bad percent-encoding)');
    return;
  }
  sendEarlyProblem(request, reply, 400, 'validation_failed', 'The request could not be routed');
};

/**
 * True when the URL's query string has a `%` not followed by two hex digits, or escapes that do not decode to
 * UTF-8 (what decodeURIComponent refuses). Fastify's query parser keeps such text as sent (`%zz`, `%C3%28`), so
 * `?q=%zz` would search for the literal text and `?%zz=1` pass as an unknown key; the router refuses the same
 * bytes in the path.
 */
export function hasBadQueryEncoding(url: string): boolean {
  const q = url.indexOf('?');
  if (q === -1 || url.indexOf('%', q) === -1) return false;
  try {
    decodeURIComponent(url.slice(q + 1));
    return false;
  } catch {
    return true;
  }
}

/** The static words of every route the app has (`api`, `v1`, `patients`, …), for logging paths no route matched. */
const ROUTE_WORDS = new Set<string>();
const LOGGED_SEGMENTS = 8;

/**
 * A path no route matched, as a log line may carry it: the app's own route words stay, every other segment
 * is `:x` (`/api/v1/patients/Maria-Lopez/x` → `/api/v1/patients/:x/:x`), since an unmatched path is whatever
 * the sender wrote, a name or a record number included; no query string; at most eight segments.
 */
export function loggablePath(url: string): string {
  let path = pathOnly(url);
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      return ':x';
    }
  }
  const segments = path.split('/').slice(1);
  const shown = segments
    .slice(0, LOGGED_SEGMENTS)
    .map((segment) => (segment === '' || ROUTE_WORDS.has(segment) ? segment : ':x'));
  return `/${shown.join('/')}${segments.length > LOGGED_SEGMENTS ? '/…' : ''}`;
}

/** Path without the query string: what metrics and decisions may use (the query can hold names). */
export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The path the router acted on, for deciding what a request is (API or not, which auth): the matched
 * route's pattern, else the request path decoded as the router decodes it, with an absolute-form
 * request line (`GET http://host/api/…`) reduced to its path. Never `request.url` as sent: `/%61pi/v1/…`
 * reaches the `/api/v1/…` routes.
 */
export function routedPath(request: FastifyRequest): string {
  const pattern = request.routeOptions?.url;
  if (pattern && !request.is404) return pattern;
  let path = pathOnly(request.url);
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      return path;
    }
  }
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export function registerRequestHardening(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    for (const segment of route.url.split('/')) {
      if (segment && !/[:*?()]/.test(segment)) ROUTE_WORDS.add(segment);
    }
  });

  // Bad percent-encoding in the query string is refused as the router refuses it in the path (contract §1),
  // on every route and before authentication or any other hook does work.
  app.addHook('onRequest', async (request, reply) => {
    if (!hasBadQueryEncoding(request.url)) return;
    frameworkErrors(new errorCodes.FST_ERR_BAD_URL(pathOnly(request.url)), request, reply);
    return reply;
  });

  // Hostile text anywhere in the parsed request, or JSON nested absurdly deep, is refused before any handler or
  // schema sees it.
  app.addHook('preValidation', async (request) => {
    const refused =
      findRefused(request.params, 'params') ?? findRefused(request.query, 'query') ?? findRefused(request.body, 'body');
    if (refused) throw validationFailed([refused], refused.message);
  });

  // API responses carry tenant data (patients, messages, audit rows, credentials): never cached.
  app.addHook('onSend', async (request, reply, payload) => {
    if (!reply.hasHeader('cache-control') && (routedPath(request).startsWith('/api/') || reply.statusCode >= 400)) {
      reply.header('cache-control', 'no-store');
    }
    return payload;
  });

  // One log line and one latency sample per request, by route pattern; never the query string.
  app.addHook('onResponse', async (request, reply) => recordRequest(request, reply));
}
