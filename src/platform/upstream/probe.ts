// The health probes' way out: one attempt through platform/upstream (its pools, timeouts, request
// ids and per-upstream metrics), never through a circuit breaker and never retried, so a probe sees
// the dependency as it is right now (contract §9). Answers a fetch-like response.
import type { ProbeResult } from '../module.js';
import { upstreamStats } from './metrics.js';
import type { HttpMethod } from './transport.js';
import { upstreamRequest } from './upstream.js';

export interface ProbeResponse {
  ok: boolean;
  status: number;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export async function probeFetch(
  upstream: string,
  url: string | URL,
  init: {
    method?: HttpMethod;
    headers?: Record<string, string>;
    body?: string | URLSearchParams;
    signal?: AbortSignal;
  } = {},
): Promise<ProbeResponse> {
  const res = await upstreamRequest(
    { name: `probe:${upstream}`, breaker: false, retries: 0, timeoutMs: 10_000, oversize: 'truncate' },
    {
      method: init.method ?? 'GET',
      url: url.toString(),
      headers: init.headers,
      body: init.body === undefined ? undefined : init.body.toString(),
      signal: init.signal,
      idempotent: false,
    },
  );
  return {
    ok: res.ok,
    status: res.status,
    json: async () => res.json(),
    arrayBuffer: async () =>
      res.body.buffer.slice(res.body.byteOffset, res.body.byteOffset + res.body.byteLength) as ArrayBuffer,
  };
}

/**
 * A probe's view of an upstream's real calls: failure share and breaker over a window (default 5 min).
 * An open breaker fails it only while there were calls in the window (failed or refused by the breaker):
 * cockatiel reports Open until a real call after the cool-down half-opens it, so with no traffic an
 * upstream that has recovered would read Open, and fail, for ever. With no call in the window (longer
 * than the 30 s cool-down) the breaker lets the next call through, and no call failed: it passes (a warning
 * would hold the incident open until someone happened to use the feature, since a measurement that failed must
 * pass to close it; the provider itself is checked directly by its latency probe).
 */
export function upstreamErrorRate(upstream: string, windowMs = 5 * 60_000): ProbeResult {
  const stats = upstreamStats(upstream, windowMs);
  const rate = Math.round(stats.errorRate * 1000) / 10;
  const quiet = stats.count === 0 && stats.rejected === 0;
  const byRate = rate < 5 ? 'pass' : rate < 25 ? 'warn' : 'fail';
  return {
    status: stats.breaker === 'open' ? (quiet ? 'pass' : 'fail') : byRate,
    observedValue: rate,
    observedUnit: '%',
    output: `${stats.errors} of ${stats.count} calls failed; breaker ${stats.breaker}${
      stats.breaker === 'open' && quiet ? ' (no call in the window: the next one tests the upstream)' : ''
    }`,
  };
}
