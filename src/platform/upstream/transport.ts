// One attempt of an outbound HTTP call over undici: keep-alive pools per (upstream, origin),
// optionally pinned to addresses a URL check passed (customer URLs), a total deadline covering
// DNS/connect/TLS/headers/body, a capped body read, and transport errors classified.
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Pool } from 'undici';
import { UnsafeUrlError } from '../http/url-guard.js';
import { UpstreamError } from './errors.js';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** Where an attempt goes: a URL, and for customer URLs the only addresses it may connect to. */
export interface AttemptTarget {
  url: URL;
  /** Checked addresses: the connection's DNS lookup answers with these only. */
  pinnedAddresses?: string[];
}

export interface AttemptInit {
  upstream: string;
  method: HttpMethod;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Total budget of this attempt, including `prepare` (e.g. the SSRF check's DNS lookup). */
  timeoutMs: number;
  /** Optional tighter limits for the headers / for gaps between body chunks. */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxResponseBytes: number;
  /** `error`: throw body_too_large past the cap; `truncate`: keep the first bytes (webhooks). */
  oversize: 'error' | 'truncate';
  connections: number;
  signal?: AbortSignal;
}

export interface AttemptResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
}

// Past the cap in `truncate` mode we keep reading (and discarding) up to this much so the
// keep-alive socket can be reused; a bigger body is cheaper to cut off by dropping the connection.
const MAX_DRAIN_BYTES = 1024 * 1024;
const MAX_POOLS = 512;

// Map order doubles as LRU order. A pinned pool's lookup can only ever return its addresses, so a
// pooled keep-alive socket is always to an address some check passed.
const pools = new Map<string, Pool>();

/** Runs one attempt. Throws UpstreamError (transport failures), or UnsafeUrlError from `prepare`. */
export async function sendAttempt(
  prepare: () => Promise<AttemptTarget> | AttemptTarget,
  init: AttemptInit,
): Promise<AttemptResponse> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), init.timeoutMs);
  const onCallerAbort = () => deadline.abort();
  init.signal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    if (init.signal?.aborted) deadline.abort();
    const target = await beforeDeadline(Promise.resolve().then(prepare), deadline.signal, init);
    // No await between choosing the pool and dispatching: an eviction cannot close it in between.
    const response = await poolFor(init.upstream, target, init.connections).request({
      path: `${target.url.pathname}${target.url.search}`,
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal: deadline.signal,
      headersTimeout: init.headersTimeoutMs ?? null,
      bodyTimeout: init.bodyTimeoutMs ?? null,
    });
    const headers = flattenHeaders(response.headers);
    const declared = Number(headers['content-length']);
    if (init.oversize === 'error' && declared > init.maxResponseBytes) {
      // Drops the connection rather than reading a body we would refuse anyway.
      response.body.on('error', () => undefined).destroy();
      throw tooLarge(init);
    }
    const { body, truncated } = await readCapped(response.body, init);
    return { status: response.statusCode, headers, body, truncated };
  } catch (err) {
    if (err instanceof UnsafeUrlError || err instanceof UpstreamError) throw err;
    throw classifyTransportError(err, init, deadline.signal.aborted);
  } finally {
    clearTimeout(timer);
    init.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** Closes every pooled connection (shutdown, tests). In-flight requests finish first. */
export async function closeUpstreamPools(): Promise<void> {
  const closing = [...pools.values()].map((pool) => pool.close().catch(() => undefined));
  pools.clear();
  await Promise.all(closing);
}

/** How many keep-alive pools are open (tests, diagnostics). */
export function openPoolCount(): number {
  return pools.size;
}

function poolFor(upstream: string, target: AttemptTarget, connections: number): Pool {
  const pinned = target.pinnedAddresses;
  const key = `${upstream}|${target.url.origin}${pinned ? `|${[...pinned].sort().join(',')}` : ''}`;
  const existing = pools.get(key);
  if (existing) {
    pools.delete(key);
    pools.set(key, existing);
    return existing;
  }
  const pool = new Pool(target.url.origin, {
    connections,
    // Only the lookup is replaced: the TLS servername stays the URL's host name and the CA
    // store stays Node's default (so NODE_EXTRA_CA_CERTS applies).
    ...(pinned ? { connect: { lookup: pinnedLookup(pinned) } } : {}),
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

function beforeDeadline<T>(work: Promise<T>, signal: AbortSignal, init: AttemptInit): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(init));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function abortError(init: AttemptInit, cause?: unknown): UpstreamError {
  if (init.signal?.aborted) return new UpstreamError('aborted', init.upstream, 'Aborted by the caller', {}, { cause });
  return new UpstreamError('timeout', init.upstream, `Timed out after ${init.timeoutMs} ms`, {}, { cause });
}

function tooLarge(init: AttemptInit): UpstreamError {
  return new UpstreamError('body_too_large', init.upstream, `Response body over ${init.maxResponseBytes} bytes`);
}

async function readCapped(
  body: AsyncIterable<Buffer>,
  init: AttemptInit,
): Promise<{ body: Buffer; truncated: boolean }> {
  const cap = init.maxResponseBytes;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let seenBytes = 0;
  for await (const chunk of body) {
    seenBytes += chunk.length;
    // Leaving the loop destroys the body stream and with it the socket.
    if (seenBytes > cap && init.oversize === 'error') throw tooLarge(init);
    if (keptBytes < cap) {
      const part = chunk.subarray(0, cap - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    if (seenBytes > MAX_DRAIN_BYTES) break;
  }
  return { body: Buffer.concat(kept, keptBytes), truncated: seenBytes > keptBytes };
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
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
// Node TLS codes and OpenSSL verification codes (UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED, …).
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_)|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|^EPROTO$/;

function classifyTransportError(err: unknown, init: AttemptInit, aborted: boolean): UpstreamError {
  if (aborted) return abortError(init, err);
  const name = init.upstream;
  const codes = errorCodes(err);
  const timeout = codes.find((code) => TIMEOUT_CODES.has(code));
  if (timeout) return new UpstreamError('timeout', name, `Timed out (${timeout})`, {}, { cause: err });
  const tls = codes.find((code) => TLS_CODE.test(code));
  if (tls) return new UpstreamError('tls', name, `TLS failure (${tls})`, {}, { cause: err });
  const connection = codes.find((code) => CONNECTION_CODES.has(code));
  if (connection)
    return new UpstreamError(
      'connect',
      name,
      `Connection failed (${connection})`,
      { code: connection },
      { cause: err },
    );
  const message = err instanceof Error ? err.message : String(err);
  return new UpstreamError('other', name, `Request failed: ${message.slice(0, 200)}`, {}, { cause: err });
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
