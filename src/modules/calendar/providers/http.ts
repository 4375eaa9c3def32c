// The HTTP step every calendar adapter shares: bearer token, one retry after a refresh on 401,
// the per-call timeout, a breaker per connection that opens only after 5 failures in a row, and
// the mapping of transport failures and provider statuses to the write-result codes of §5.2.
import { AppError } from '../../../platform/errors.js';
import {
  createUpstream,
  type UpstreamCall,
  UpstreamError,
  type UpstreamResponse,
} from '../../../platform/upstream/index.js';
import type { ProviderSession } from './types.js';

export type WriteResultCode =
  | 'invalid_draft'
  | 'calendar_not_found'
  | 'event_not_found'
  | 'provider_forbidden'
  | 'scheduling_conflict'
  | 'provider_conflict'
  | 'reauth_required'
  | 'rate_limited'
  | 'provider_unavailable'
  | 'provider_timeout'
  | 'gone';

export const WRITE_RESULT_STATUS: Record<WriteResultCode, number> = {
  invalid_draft: 422,
  calendar_not_found: 404,
  event_not_found: 404,
  provider_forbidden: 403,
  scheduling_conflict: 409,
  provider_conflict: 409,
  reauth_required: 409,
  rate_limited: 429,
  provider_unavailable: 502,
  provider_timeout: 504,
  gone: 410,
};

/** A provider's answer classified: the adapter's table turns (status, body) into a code. */
export type ErrorTable = (status: number, body: unknown, what: 'calendar' | 'event') => WriteResultCode;

/**
 * A provider's refusal. `reason` is the adapter's classification; the answer's code is the same
 * write-result code, except that `gone` (the provider's 410 for a deleted event) is answered as
 * §5.2's 404 `event_not_found`: only a delete treats it otherwise (as success).
 */
export class ProviderError extends AppError {
  constructor(
    readonly provider: string,
    readonly reason: WriteResultCode,
    detail: string,
    headers: Record<string, string> = {},
  ) {
    const code = reason === 'gone' ? 'event_not_found' : reason;
    super(code, WRITE_RESULT_STATUS[code], detail, { provider }, headers);
  }
}

/** Whether a provider call failed because the event was deleted there (410 Gone). */
export const isGone = (err: unknown) => err instanceof ProviderError && err.reason === 'gone';

const PLAIN: Record<WriteResultCode, (p: string) => string> = {
  invalid_draft: (p) => `${p} refused the event as invalid`,
  calendar_not_found: (p) => `${p} does not know this calendar`,
  event_not_found: (p) => `${p} does not know this event`,
  provider_forbidden: (p) => `${p} does not allow this change on this calendar`,
  scheduling_conflict: (p) => `${p} reports a scheduling conflict`,
  provider_conflict: (p) => `${p} reports a conflicting change; reload and try again`,
  reauth_required: (p) => `The ${p} connection must be connected again`,
  rate_limited: (p) => `${p} asks us to slow down; try again shortly`,
  provider_unavailable: (p) => `${p} is unavailable right now`,
  provider_timeout: (p) => `${p} did not answer in time`,
  gone: (p) => `${p} says the event was deleted`,
};

const label = (provider: string) =>
  ({ google: 'Google Calendar', microsoft: 'Microsoft Outlook', zoom: 'Zoom' })[provider] ?? provider;

export function providerError(provider: string, code: WriteResultCode, headers: Record<string, string> = {}) {
  return new ProviderError(provider, code, PLAIN[code](label(provider)), headers);
}

function transportError(provider: string, err: unknown): ProviderError {
  if (err instanceof UpstreamError) {
    if (err.kind === 'timeout') return providerError(provider, 'provider_timeout');
    if (err.kind === 'breaker_open') return providerError(provider, 'provider_unavailable', { 'retry-after': '30' });
  }
  return providerError(provider, 'provider_unavailable');
}

const parseBody = (res: UpstreamResponse): unknown => {
  try {
    return res.json();
  } catch {
    return undefined;
  }
};

/**
 * Sends one provider call with the session's token. A 401 gets one refresh and one retry; any
 * other status ≥ 400 becomes a ProviderError through the adapter's table (429 passes the
 * provider's Retry-After on).
 */
export async function providerCall(
  provider: string,
  session: ProviderSession,
  call: UpstreamCall & { what?: 'calendar' | 'event' },
  table: ErrorTable,
): Promise<{ status: number; body: unknown }> {
  const upstream = createUpstream({
    name: `calendar:${provider}`,
    baseUrl: session.baseUrl,
    timeoutMs: session.timeoutMs,
    // The week view asks again; a provider's own Retry-After is passed to the caller instead.
    retries: 0,
    breaker: { consecutiveFailures: 5, failureRatio: 1 },
  });
  const send = async (token: string) => {
    try {
      return await upstream.request({
        ...call,
        headers: { ...call.headers, authorization: `Bearer ${token}`, accept: 'application/json' },
        breakerKey: session.connectionId,
        requestId: session.requestId,
      });
    } catch (err) {
      throw transportError(provider, err);
    }
  };
  // A token endpoint that fails (not a refused grant: that is reauth_required) is the provider failing.
  const tokenOf = async (get: () => Promise<string>) => {
    try {
      return await get();
    } catch (err) {
      if (err instanceof UpstreamError) throw transportError(provider, err);
      if (err instanceof AppError && err.code === 'upstream_timeout') throw providerError(provider, 'provider_timeout');
      if (err instanceof AppError && (err.code === 'upstream_failed' || err.code === 'unavailable'))
        throw providerError(
          provider,
          'provider_unavailable',
          err.code === 'unavailable' ? { 'retry-after': '30' } : {},
        );
      throw err;
    }
  };
  let res = await send(await tokenOf(session.token));
  if (res.status === 401) res = await send(await tokenOf(session.refreshedToken));
  const body = parseBody(res);
  if (res.status < 400) return { status: res.status, body };
  const code = res.status === 401 ? 'reauth_required' : table(res.status, body, call.what ?? 'event');
  throw providerError(provider, code, code === 'rate_limited' ? rateLimitHeaders(res.headers['retry-after']) : {});
}

/** How long a caller is asked to wait when a provider limited us without saying (Google's 403 rateLimitExceeded). */
export const DEFAULT_RATE_LIMIT_WAIT_S = 10;

/**
 * A 429 always names its wait (contract §1): the provider's Retry-After when it is one (seconds or an HTTP date),
 * else DEFAULT_RATE_LIMIT_WAIT_S.
 */
export function rateLimitHeaders(providerRetryAfter: string | string[] | undefined): Record<string, string> {
  const value = Array.isArray(providerRetryAfter) ? providerRetryAfter[0] : providerRetryAfter;
  const usable =
    value !== undefined && (/^\d{1,6}$/.test(value.trim()) || (value.length <= 64 && !Number.isNaN(Date.parse(value))));
  return { 'retry-after': usable ? value.trim() : String(DEFAULT_RATE_LIMIT_WAIT_S) };
}

/** The shared part of every table: statuses whose meaning does not depend on the provider. */
export function commonCode(status: number, what: 'calendar' | 'event'): WriteResultCode {
  // 414: a URL too long for the provider, i.e. an id longer than any it gives out (made up): none it has.
  if (status === 404 || status === 414) return what === 'calendar' ? 'calendar_not_found' : 'event_not_found';
  if (status === 410) return 'gone';
  if (status === 403) return 'provider_forbidden';
  if (status === 409 || status === 412) return 'provider_conflict';
  if (status === 429) return 'rate_limited';
  if (status === 400 || status === 422) return 'invalid_draft';
  if (status === 504) return 'provider_timeout';
  return 'provider_unavailable';
}
