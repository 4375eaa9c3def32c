// The one way to call customer-supplied URLs (webhooks, custom skills): checks the URL, then
// connects only to the addresses it checked (no second DNS lookup an attacker could rebind),
// never follows redirects, bounds time and response size.
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { checkOutboundUrl, type HostResolver, UnsafeUrlError } from './url-guard.js';

export type OutboundErrorKind = 'timeout' | 'connection' | 'tls' | 'other';

/** A transport failure (the URL itself was acceptable). */
export class OutboundError extends Error {
  override readonly name = 'OutboundError';

  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface SafeRequestInit {
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Total budget: DNS, connect, TLS, headers and body. */
  timeoutMs: number;
  allowCidrs: string[];
  resolve?: HostResolver;
}

export interface SafeResponse {
  status: number;
  headers: Record<string, string>;
  /** The first MAX_RESPONSE_BYTES of the body, decoded as UTF-8. */
  body: string;
  durationMs: number;
}

export const MAX_RESPONSE_BYTES = 64 * 1024;
// Past the cap we keep reading (and discarding) up to this much so the keep-alive socket can be
// reused; a bigger body is cheaper to cut off by dropping the connection.
const MAX_DRAIN_BYTES = 1024 * 1024;
const MAX_POOLS = 512;
const CONNECTIONS_PER_POOL = 64;

// One undici Pool per (origin, checked address set): its lookup can only ever return those
// addresses, so a pooled keep-alive socket is always to an address some check passed.
const pools = new Map<string, Pool>();

/**
 * Checks `raw` (throws UnsafeUrlError), sends the request pinned to the checked addresses and
 * returns any HTTP status as-is, 3xx included. Throws OutboundError on transport failures.
 */
export async function safeRequest(raw: string, init: SafeRequestInit): Promise<SafeResponse> {
  const started = performance.now();
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), init.timeoutMs);
  try {
    const { url, addresses } = await beforeDeadline(
      checkOutboundUrl(raw, { allowCidrs: init.allowCidrs, resolve: init.resolve }),
      deadline.signal,
      init.timeoutMs,
    );
    // No await between choosing the pool and dispatching: an eviction cannot close it in between.
    const response = await poolFor(url, addresses).request({
      path: `${url.pathname}${url.search}`,
      method: init.method ?? 'POST',
      headers: init.headers,
      body: init.body,
      signal: deadline.signal,
    });
    const body = await readCapped(response.body);
    return {
      status: response.statusCode,
      headers: flattenHeaders(response.headers),
      body,
      durationMs: Math.round(performance.now() - started),
    };
  } catch (err) {
    if (err instanceof UnsafeUrlError || err instanceof OutboundError) throw err;
    throw toOutboundError(err, deadline.signal.aborted, init.timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}

/** Closes every pooled connection (shutdown, tests). In-flight requests finish first. */
export async function closeSafeClient(): Promise<void> {
  const closing = [...pools.values()].map((pool) => pool.close().catch(() => undefined));
  pools.clear();
  await Promise.all(closing);
}

function poolFor(url: URL, addresses: string[]): Pool {
  const key = `${url.origin}|${[...addresses].sort().join(',')}`;
  const existing = pools.get(key);
  if (existing) {
    // Map order doubles as LRU order.
    pools.delete(key);
    pools.set(key, existing);
    return existing;
  }
  const pool = new Pool(url.origin, {
    connections: CONNECTIONS_PER_POOL,
    // Only the lookup is replaced: the TLS servername stays the URL's host name and the CA
    // store stays Node's default (so NODE_EXTRA_CA_CERTS applies).
    connect: { lookup: pinnedLookup(addresses) },
  });
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldestKey, oldest] = pools.entries().next().value as [string, Pool];
    pools.delete(oldestKey);
    void oldest.close().catch(() => undefined);
  }
  return pool;
}

/** A lookup that answers with the checked addresses only, whatever DNS says now. */
function pinnedLookup(addresses: string[]): LookupFunction {
  const records: LookupAddress[] = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = family === 0 ? records : records.filter((record) => record.family === family);
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = new Error('No checked address for the requested family');
      err.code = 'ENOTFOUND';
      callback(err, '');
    } else if (options.all) {
      // Node asks for all addresses when happy-eyeballs (autoSelectFamily) is on.
      callback(null, usable);
    } else {
      callback(null, usable[0].address, usable[0].family);
    }
  };
}

function beforeDeadline<T>(work: Promise<T>, signal: AbortSignal, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new OutboundError('timeout', `Timed out after ${timeoutMs} ms`));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function readCapped(body: AsyncIterable<Buffer>): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let seenBytes = 0;
  for await (const chunk of body) {
    if (keptBytes < MAX_RESPONSE_BYTES) {
      const part = chunk.subarray(0, MAX_RESPONSE_BYTES - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    seenBytes += chunk.length;
    // Leaving the loop destroys the body stream and with it the socket.
    if (seenBytes > MAX_DRAIN_BYTES) break;
  }
  return Buffer.concat(kept, keptBytes).toString('utf8');
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'EPIPE',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
// Node TLS codes and OpenSSL verification codes (UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED, …).
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_)|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|^EPROTO$/;

function toOutboundError(err: unknown, timedOut: boolean, timeoutMs: number): OutboundError {
  if (timedOut) return new OutboundError('timeout', `Timed out after ${timeoutMs} ms`, { cause: err });
  const codes = errorCodes(err);
  const timeout = codes.find((code) => TIMEOUT_CODES.has(code));
  if (timeout) return new OutboundError('timeout', `Timed out (${timeout})`, { cause: err });
  const tls = codes.find((code) => TLS_CODE.test(code));
  if (tls) return new OutboundError('tls', `TLS failure (${tls})`, { cause: err });
  const connection = codes.find((code) => CONNECTION_CODES.has(code));
  if (connection) return new OutboundError('connection', `Connection failed (${connection})`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new OutboundError('other', `Request failed: ${message.slice(0, 200)}`, { cause: err });
}

/** Error codes along the cause chain, including each attempt of a happy-eyeballs AggregateError. */
function errorCodes(err: unknown, depth = 0): string[] {
  if (depth > 4 || typeof err !== 'object' || err === null) return [];
  const { code, cause, errors } = err as { code?: unknown; cause?: unknown; errors?: unknown };
  const codes = typeof code === 'string' ? [code] : [];
  codes.push(...errorCodes(cause, depth + 1));
  if (Array.isArray(errors)) for (const inner of errors) codes.push(...errorCodes(inner, depth + 1));
  return codes;
}
