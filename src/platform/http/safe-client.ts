// One attempt to a customer-supplied URL, with the SSRF policy of platform/upstream: the URL is
// checked, the connection goes only to the checked addresses (no second DNS lookup an attacker
// could rebind), redirects are never followed, time and response size are bounded. No retries
// and no breaker: callers that want those use createUpstream({ customerUrls }) directly.

import { UpstreamError } from '../upstream/errors.js';
import { closeUpstreamPools } from '../upstream/transport.js';
import { upstreamRequest } from '../upstream/upstream.js';
import type { HostResolver } from './url-guard.js';

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
  /** The metrics label (platform/upstream). */
  upstream?: string;
}

export interface SafeResponse {
  status: number;
  headers: Record<string, string>;
  /** The first MAX_RESPONSE_BYTES of the body, decoded as UTF-8. */
  body: string;
  durationMs: number;
}

export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Checks `raw` (throws UnsafeUrlError), sends the request pinned to the checked addresses and
 * returns any HTTP status as-is, 3xx included. Throws OutboundError on transport failures.
 */
export async function safeRequest(raw: string, init: SafeRequestInit): Promise<SafeResponse> {
  try {
    const res = await upstreamRequest(
      {
        name: init.upstream ?? 'customer_url',
        customerUrls: { allowCidrs: init.allowCidrs, resolve: init.resolve },
        timeoutMs: init.timeoutMs,
        retries: 0,
        breaker: false,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        oversize: 'truncate',
        connections: 64,
      },
      { url: raw, method: init.method ?? 'POST', headers: init.headers, body: init.body },
    );
    return { status: res.status, headers: res.headers, body: res.text(), durationMs: res.durationMs };
  } catch (err) {
    if (err instanceof UpstreamError) throw toOutboundError(err);
    throw err;
  }
}

/** Closes every pooled outbound connection (shutdown, tests). In-flight requests finish first. */
export async function closeSafeClient(): Promise<void> {
  await closeUpstreamPools();
}

/** The upstream error kinds in this client's older vocabulary. */
export function toOutboundError(err: UpstreamError): OutboundError {
  const kind: OutboundErrorKind =
    err.kind === 'connect' ? 'connection' : err.kind === 'timeout' || err.kind === 'tls' ? err.kind : 'other';
  return new OutboundError(kind, err.message, { cause: err.cause ?? err });
}
