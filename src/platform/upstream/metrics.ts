// Per-upstream latency and errors: Prometheus metrics for /metrics, and a recent in-process
// window (`upstreamStats`) that health probes read without scraping.
import client from 'prom-client';
import { metricsRegistry } from '../metrics.js';
import { type BreakerState, breakerSeverity, upstreamBreakerState, upstreamsWithBreakers } from './breaker.js';

/** How one attempt ended: `ok` (1xx–3xx), `http_4xx`, `http_429`, `http_5xx`, or the error kind. */
export type UpstreamOutcome =
  | 'ok'
  | 'http_4xx'
  | 'http_429'
  | 'http_5xx'
  | 'timeout'
  | 'connect'
  | 'tls'
  | 'breaker_open'
  | 'body_too_large'
  | 'unsafe_url'
  | 'aborted'
  | 'other';

const durationHistogram = new client.Histogram({
  name: 'atrium_upstream_request_duration_seconds',
  help: 'Outbound call attempts by upstream and outcome',
  labelNames: ['upstream', 'outcome'],
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

const errorCounter = new client.Counter({
  name: 'atrium_upstream_errors_total',
  help: 'Failed outbound call attempts (transport errors, 5xx, 429, breaker rejections) by upstream and kind',
  labelNames: ['upstream', 'kind'],
  registers: [metricsRegistry],
});

new client.Gauge({
  name: 'atrium_upstream_breaker_state',
  help: 'Circuit breaker state per upstream (worst over its origins): 0 closed, 1 half-open, 2 open',
  labelNames: ['upstream'],
  registers: [metricsRegistry],
  collect() {
    for (const upstream of upstreamsWithBreakers()) {
      this.set({ upstream }, breakerSeverity(upstreamBreakerState(upstream)));
    }
  },
});

/** Counts against the upstream's health: breaker, error rate, error counter. */
export function isFailureOutcome(outcome: UpstreamOutcome): boolean {
  return !(outcome === 'ok' || outcome === 'http_4xx' || outcome === 'aborted' || outcome === 'unsafe_url');
}

interface Sample {
  at: number;
  durationMs: number;
  failed: boolean;
  rejected: boolean;
}

const WINDOW_SAMPLES = 512;
const DEFAULT_WINDOW_MS = 5 * 60_000;

// A ring of the most recent attempts per upstream name.
const windows = new Map<string, { samples: Sample[]; next: number }>();

export function recordAttempt(upstream: string, outcome: UpstreamOutcome, durationMs: number): void {
  durationHistogram.observe({ upstream, outcome }, durationMs / 1000);
  const failed = isFailureOutcome(outcome);
  if (failed) errorCounter.inc({ upstream, kind: outcome });
  let window = windows.get(upstream);
  if (!window) {
    window = { samples: [], next: 0 };
    windows.set(upstream, window);
  }
  const sample = { at: Date.now(), durationMs, failed, rejected: outcome === 'breaker_open' };
  if (window.samples.length < WINDOW_SAMPLES) window.samples.push(sample);
  else window.samples[window.next] = sample;
  window.next = (window.next + 1) % WINDOW_SAMPLES;
}

export interface UpstreamStats {
  upstream: string;
  windowMs: number;
  /** Attempts that reached (or tried to reach) the upstream in the window. */
  count: number;
  /** Of those, failures: transport errors, 5xx, 429. */
  errors: number;
  /** errors / count, 0 when there were no calls. */
  errorRate: number;
  /** Calls refused by the open breaker without touching the upstream. */
  rejected: number;
  p50Ms: number | null;
  p95Ms: number | null;
  breaker: BreakerState;
}

/** Recent behaviour of one upstream (the last 512 attempts, at most `windowMs` old). */
export function upstreamStats(upstream: string, windowMs = DEFAULT_WINDOW_MS): UpstreamStats {
  const since = Date.now() - windowMs;
  const recent = (windows.get(upstream)?.samples ?? []).filter((sample) => sample.at >= since);
  const reached = recent.filter((sample) => !sample.rejected);
  const durations = reached.map((sample) => sample.durationMs).sort((a, b) => a - b);
  const errors = reached.filter((sample) => sample.failed).length;
  return {
    upstream,
    windowMs,
    count: reached.length,
    errors,
    errorRate: reached.length === 0 ? 0 : errors / reached.length,
    rejected: recent.length - reached.length,
    p50Ms: percentile(durations, 0.5),
    p95Ms: percentile(durations, 0.95),
    breaker: upstreamBreakerState(upstream),
  };
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

/** Forgets the in-process windows (tests). Prometheus counters are cumulative and stay. */
export function resetUpstreamStats(): void {
  windows.clear();
}
