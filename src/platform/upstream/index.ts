// platform/upstream: the one way to call an external HTTP API (docs/platform.md, "Outbound calls").
export type { BreakerOptions, BreakerState } from './breaker.js';
export { resetBreakers } from './breaker.js';
export { UpstreamError, type UpstreamErrorKind, upstreamAppError } from './errors.js';
export { resetUpstreamStats, type UpstreamOutcome, type UpstreamStats, upstreamStats } from './metrics.js';
export { type ProbeResponse, probeFetch, upstreamErrorRate } from './probe.js';
export { closeUpstreamPools, type HttpMethod } from './transport.js';
export {
  type CustomerUrlPolicy,
  createUpstream,
  parseRetryAfterMs,
  UPSTREAM_DEFAULTS,
  type Upstream,
  type UpstreamCall,
  type UpstreamConfig,
  type UpstreamResponse,
  upstreamRequest,
} from './upstream.js';
