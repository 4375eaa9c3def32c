// The one way to call an external HTTP API (architecture convention 14): keep-alive pools per
// upstream, a deadline per attempt, retries with backoff only for idempotent calls, a circuit
// breaker per (upstream, origin), the caller's request id forwarded, metrics per upstream.
// Customer-controlled URLs add the SSRF policy: the URL is checked and the connection pinned
// to the checked addresses on every attempt.
import { performance } from 'node:perf_hooks';
import { BrokenCircuitError, IsolatedCircuitError } from 'cockatiel';
import { checkOutboundUrl, type HostResolver, UnsafeUrlError } from '../http/url-guard.js';
import { AttemptFailure, type BreakerLog, type BreakerOptions, breakerFor, isFailureStatus } from './breaker.js';
import { UpstreamError } from './errors.js';
import { recordAttempt, type UpstreamOutcome } from './metrics.js';
import { type AttemptResponse, type AttemptTarget, type HttpMethod, sendAttempt } from './transport.js';

export const UPSTREAM_DEFAULTS = {
  timeoutMs: 10_000,
  retries: 2,
  retryBaseDelayMs: 100,
  retryMaxDelayMs: 2_000,
  retryAfterCapMs: 10_000,
  maxResponseBytes: 1024 * 1024,
  connections: 32,
} as const;

/** Customer-supplied URLs (webhooks, private skills): contract §7.3 rules, pinned connections. */
export interface CustomerUrlPolicy {
  allowCidrs: string[];
  resolve?: HostResolver;
}

export interface UpstreamConfig {
  /** The metrics label and breaker name: `payer`, `ai:configured`, `oauth:google`, `webhooks`. */
  name: string;
  /** Prefix for `path` in calls (scheme, host, optional base path). */
  baseUrl?: string;
  /** Budget of one attempt: DNS, connect, TLS, headers and the whole body. */
  timeoutMs?: number;
  /** Optional tighter limits: time to the response headers, and the longest gap between body chunks. */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Retries after the first attempt, for idempotent calls only. Default 2; 0 never retries. */
  retries?: number;
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  /** A Retry-After (or body hint) longer than this is not waited for: the answer is returned as it is. */
  retryAfterCapMs?: number;
  /**
   * Where an upstream names its wait in the error body instead of a Retry-After header (Telegram's 429:
   * `parameters.retry_after`): reads it from an answer that is about to be retried, in ms, or null for none.
   * Consulted only when there is no readable Retry-After header; the cap and the retry rules are unchanged.
   */
  retryAfterFromBody?: (body: Buffer, status: number) => number | null;
  /** `false` turns the breaker off (webhook delivery: its own schedule owns retries). */
  breaker?: BreakerOptions | false;
  maxResponseBytes?: number;
  /** `error` (default) fails with body_too_large past the cap; `truncate` keeps the first bytes. */
  oversize?: 'error' | 'truncate';
  /** Keep-alive connections per origin. */
  connections?: number;
  /** Set for customer-controlled URLs: SSRF rules, pinned addresses (then https only). */
  customerUrls?: CustomerUrlPolicy;
  /** Sent with every call (a call's own headers win). */
  headers?: Record<string, string>;
  /** Logs breaker transitions. */
  log?: BreakerLog;
}

export interface UpstreamCall {
  method?: HttpMethod;
  /** Appended to the upstream's baseUrl. */
  path?: string;
  /** An absolute URL instead of baseUrl + path (customer URLs, token endpoints). */
  url?: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Serialised as the body, with content-type application/json unless set. */
  json?: unknown;
  /** Sent form-encoded (token endpoints), with content-type application/x-www-form-urlencoded unless set. */
  form?: Record<string, string | undefined>;
  /**
   * Safe to send twice. GET, HEAD, PUT, DELETE and OPTIONS are; anything else only when the
   * caller says so (e.g. a POST carrying an idempotency key).
   */
  idempotent?: boolean;
  /**
   * For a call that is not idempotent (a message sent): retry only when the upstream certainly did
   * not act on it, i.e. no connection was made (refused, name not found) or it answered 429 (rate
   * limited, honouring Retry-After or retryAfterFromBody). A timeout or a reset is never retried: the send may
   * have happened.
   */
  retryUnsent?: boolean;
  timeoutMs?: number;
  retries?: number;
  maxResponseBytes?: number;
  /** Forwarded as x-request-id. */
  requestId?: string;
  /** The caller's request context: its requestId is forwarded. */
  ctx?: { requestId?: string };
  /** Splits the breaker further than (upstream, origin), e.g. per workspace. */
  breakerKey?: string;
  signal?: AbortSignal;
  /** Throw UpstreamError('http_status') for any status ≥ 400 (after retries). */
  throwOnHttpError?: boolean;
}

export interface UpstreamResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
  /** The body went past the cap and was cut (`oversize: 'truncate'`). */
  truncated: boolean;
  /** From the first attempt's start to the last attempt's end. */
  durationMs: number;
  attempts: number;
  ok: boolean;
  text(): string;
  json<T = unknown>(): T;
}

export interface Upstream {
  readonly name: string;
  request(call: UpstreamCall): Promise<UpstreamResponse>;
}

const IDEMPOTENT_METHODS = new Set<HttpMethod>(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** Connection failures where the request never left: safe to send again even when not idempotent. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * An upstream handle. Cheap: pools, breakers and metrics live in module state keyed by name and
 * origin, so creating a handle per request shares them all.
 */
export function createUpstream(config: UpstreamConfig): Upstream {
  return { name: config.name, request: (call) => upstreamRequest(config, call) };
}

/** One call through an upstream's policy (see createUpstream). */
export async function upstreamRequest(config: UpstreamConfig, call: UpstreamCall): Promise<UpstreamResponse> {
  const method = call.method ?? 'GET';
  const url = targetUrl(config, call);
  const idempotent = call.idempotent ?? IDEMPOTENT_METHODS.has(method);
  const budget = Math.max(0, call.retries ?? config.retries ?? UPSTREAM_DEFAULTS.retries);
  const retries = idempotent ? budget : 0;
  const unsentRetries = !idempotent && call.retryUnsent ? budget : 0;
  const headers = requestHeaders(config, call);
  const body = call.json !== undefined ? JSON.stringify(call.json) : call.form ? formBody(call.form) : call.body;
  const breaker =
    config.breaker === false
      ? undefined
      : breakerFor(config.name, `${url.origin}|${call.breakerKey ?? ''}`, config.breaker ?? {}, config.log);
  const started = performance.now();
  const customer = config.customerUrls;
  const prepare = customer
    ? async (): Promise<AttemptTarget> => {
        const checked = await checkOutboundUrl(url.href, customer);
        return { url: checked.url, pinnedAddresses: checked.addresses };
      }
    : (): AttemptTarget => ({ url });
  const init = {
    upstream: config.name,
    method,
    headers,
    body,
    timeoutMs: call.timeoutMs ?? config.timeoutMs ?? UPSTREAM_DEFAULTS.timeoutMs,
    headersTimeoutMs: config.headersTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    maxResponseBytes: call.maxResponseBytes ?? config.maxResponseBytes ?? UPSTREAM_DEFAULTS.maxResponseBytes,
    oversize: config.oversize ?? 'error',
    connections: config.connections ?? UPSTREAM_DEFAULTS.connections,
    signal: call.signal,
  };

  /** One attempt, timed and recorded; failures that count against health go through the breaker as such. */
  const attempt = async (): Promise<AttemptResponse> => {
    const attemptStarted = performance.now();
    try {
      const response = await sendAttempt(prepare, init);
      const outcome = statusOutcome(response.status);
      recordAttempt(config.name, outcome, performance.now() - attemptStarted);
      if (isFailureStatus(response.status)) throw new AttemptFailure(undefined, response);
      return response;
    } catch (err) {
      if (err instanceof AttemptFailure) throw err;
      const outcome = errorOutcome(err);
      recordAttempt(config.name, outcome, performance.now() - attemptStarted);
      // Transport failures count against the breaker; an unsafe URL or a caller's abort do not.
      if (outcome === 'unsafe_url' || outcome === 'aborted' || outcome === 'body_too_large') throw err;
      throw new AttemptFailure(err);
    }
  };

  // The breaker is held for the whole call (retries and their waits included): never evicted meanwhile.
  try {
    for (let attemptNo = 1; ; attemptNo++) {
      let response: AttemptResponse;
      try {
        response = breaker ? await breaker.policy.execute(attempt) : await attempt();
      } catch (err) {
        if (err instanceof AttemptFailure && err.response) {
          response = err.response;
        } else if (err instanceof BrokenCircuitError || err instanceof IsolatedCircuitError) {
          recordAttempt(config.name, 'breaker_open', 0);
          throw new UpstreamError('breaker_open', config.name, `Circuit open for ${config.name}: failing fast`, {
            attempts: attemptNo - 1,
          });
        } else {
          const failure = err instanceof AttemptFailure ? err.error : err;
          const retryable =
            failure instanceof UpstreamError && (failure.kind === 'timeout' || failure.kind === 'connect');
          const unsent =
            failure instanceof UpstreamError && failure.kind === 'connect' && NOT_SENT.has(failure.details.code ?? '');
          if ((retryable && attemptNo <= retries) || (unsent && attemptNo <= unsentRetries)) {
            await sleep(backoffMs(config, attemptNo), config.name, call.signal);
            continue;
          }
          if (failure instanceof UpstreamError) failure.details.attempts = attemptNo;
          throw failure;
        }
      }
      if (
        (RETRY_STATUSES.has(response.status) && attemptNo <= retries) ||
        (response.status === 429 && attemptNo <= unsentRetries)
      ) {
        const wait = retryWaitMs(config, attemptNo, response);
        if (wait !== null) {
          await sleep(wait, config.name, call.signal);
          continue;
        }
      }
      return finish(config, call, response, attemptNo, performance.now() - started);
    }
  } finally {
    breaker?.release();
  }
}

function finish(
  config: UpstreamConfig,
  call: UpstreamCall,
  response: AttemptResponse,
  attempts: number,
  durationMs: number,
): UpstreamResponse {
  const ok = response.status >= 200 && response.status < 300;
  const body = response.body;
  if (call.throwOnHttpError && response.status >= 400) {
    throw new UpstreamError('http_status', config.name, `${config.name} answered ${response.status}`, {
      status: response.status,
      body: body.subarray(0, 2048).toString('utf8'),
      attempts,
    });
  }
  return {
    status: response.status,
    headers: response.headers,
    body,
    truncated: response.truncated,
    durationMs: Math.round(durationMs),
    attempts,
    ok,
    text: () => body.toString('utf8'),
    json: <T>() => JSON.parse(body.toString('utf8')) as T,
  };
}

function targetUrl(config: UpstreamConfig, call: UpstreamCall): URL {
  let url: URL;
  if (call.url !== undefined) {
    try {
      url = new URL(call.url);
    } catch {
      // Customer URLs fail the way the URL guard says; ours are a programming error.
      if (config.customerUrls) throw new UnsafeUrlError('invalid', 'Not a valid absolute URL');
      throw new Error(`Invalid URL for upstream ${config.name}`);
    }
  } else {
    if (!config.baseUrl) throw new Error(`Upstream ${config.name} has no baseUrl: pass url`);
    url = new URL(`${config.baseUrl.replace(/\/$/, '')}${call.path ?? ''}`);
  }
  for (const [name, value] of Object.entries(call.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url;
}

function requestHeaders(config: UpstreamConfig, call: UpstreamCall): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...config.headers, ...call.headers })) {
    headers[name.toLowerCase()] = value;
  }
  const requestId = call.requestId ?? call.ctx?.requestId;
  if (requestId && !headers['x-request-id']) headers['x-request-id'] = requestId;
  if (call.json !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  if (call.form && !headers['content-type']) headers['content-type'] = 'application/x-www-form-urlencoded';
  return headers;
}

function formBody(form: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) if (value !== undefined) params.set(name, value);
  return params.toString();
}

function statusOutcome(status: number): UpstreamOutcome {
  if (status < 400) return 'ok';
  if (status === 429) return 'http_429';
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

function errorOutcome(err: unknown): UpstreamOutcome {
  if (err instanceof UnsafeUrlError) return 'unsafe_url';
  if (err instanceof UpstreamError) return err.kind === 'http_status' ? 'other' : err.kind;
  return 'other';
}

/** Exponential backoff with jitter: half the step fixed, half random, capped. */
function backoffMs(config: UpstreamConfig, attemptNo: number): number {
  const base = config.retryBaseDelayMs ?? UPSTREAM_DEFAULTS.retryBaseDelayMs;
  const max = config.retryMaxDelayMs ?? UPSTREAM_DEFAULTS.retryMaxDelayMs;
  const step = Math.min(max, base * 2 ** (attemptNo - 1));
  return step / 2 + Math.random() * (step / 2);
}

/**
 * The wait before retrying a retryable status, or null when the upstream asks for longer than the cap.
 * The Retry-After header wins; else the upstream's body hint (retryAfterFromBody); else the backoff.
 */
function retryWaitMs(config: UpstreamConfig, attemptNo: number, response: AttemptResponse): number | null {
  const asked = parseRetryAfterMs(response.headers['retry-after']) ?? bodyRetryAfterMs(config, response);
  if (asked === null) return backoffMs(config, attemptNo);
  return asked > (config.retryAfterCapMs ?? UPSTREAM_DEFAULTS.retryAfterCapMs) ? null : asked;
}

/** The caller's reading of a retry hint in the body; a reader that throws or answers nonsense counts as none. */
function bodyRetryAfterMs(config: UpstreamConfig, response: AttemptResponse): number | null {
  if (!config.retryAfterFromBody) return null;
  let ms: number | null;
  try {
    ms = config.retryAfterFromBody(response.body, response.status);
  } catch {
    return null;
  }
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function parseRetryAfterMs(value: string | undefined, now = Date.now()): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function sleep(ms: number, upstream: string, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new UpstreamError('aborted', upstream, 'Aborted by the caller'));
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(new UpstreamError('aborted', upstream, 'Aborted by the caller'));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
