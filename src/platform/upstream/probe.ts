// The health probes' way out: one attempt through platform/upstream (its pools, timeouts, request
// ids and per-upstream metrics), never through a circuit breaker and never retried, so a probe sees
// the dependency as it is right now (contract §9). Answers a fetch-like response.
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
