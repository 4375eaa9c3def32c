// The typed failures of an outbound call. Callers map them to their own AppError (a route that
// lets `breaker_open` surface answers 503 `unavailable`: see `upstreamAppError`).
import { AppError } from '../errors.js';

export type UpstreamErrorKind =
  /** The per-attempt budget (DNS, connect, TLS, headers, body) ran out. */
  | 'timeout'
  /** No connection: refused, reset, unreachable, DNS failure. */
  | 'connect'
  /** The TLS handshake or certificate check failed. */
  | 'tls'
  /** The upstream answered with a status the caller asked to treat as an error (`throwOnHttpError`). */
  | 'http_status'
  /** The circuit breaker is open: the call failed fast without touching the upstream. */
  | 'breaker_open'
  /** The response body passed the size cap. */
  | 'body_too_large'
  /** The caller's own signal aborted the call. */
  | 'aborted'
  | 'other';

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';

  constructor(
    readonly kind: UpstreamErrorKind,
    /** The upstream's name (the metrics label), e.g. `payer`, `ai:configured`. */
    readonly upstream: string,
    message: string,
    readonly details: {
      status?: number;
      body?: string;
      attempts?: number;
      /** The system error behind a `connect` failure (ECONNREFUSED, ENOTFOUND, …). */
      code?: string;
    } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  get status(): number | undefined {
    return this.details.status;
  }
}

/**
 * The usual problem+json for an upstream failure: 503 `unavailable` while the breaker is open,
 * 504 `upstream_timeout` for a timeout, 502 `upstream_failed` otherwise.
 */
export function upstreamAppError(err: UpstreamError, what: string, extras: Record<string, unknown> = {}): AppError {
  if (err.kind === 'breaker_open') {
    return new AppError('unavailable', 503, `${what} is unavailable (failing fast after repeated errors)`, extras, {
      'retry-after': '30',
    });
  }
  if (err.kind === 'timeout') return new AppError('upstream_timeout', 504, `${what} did not answer in time`, extras);
  if (err.kind === 'http_status') {
    return new AppError('upstream_failed', 502, `${what} answered ${err.status}`, {
      ...extras,
      upstreamStatus: err.status,
    });
  }
  return new AppError('upstream_failed', 502, `${what} could not be reached`, { ...extras, reason: err.kind });
}
