// Circuit breakers per upstream (cockatiel): one per (upstream, origin[, key]), so a failing
// origin only stops calls to itself. Opens after N consecutive failures or a failure ratio over
// the last calls; after a cool-down one call goes through (half-open) and decides.
import {
  type CircuitBreakerPolicy,
  CircuitState,
  CountBreaker,
  circuitBreaker,
  handleWhen,
  type IBreaker,
} from 'cockatiel';
import type { AttemptResponse } from './transport.js';

export interface BreakerOptions {
  /** Opens after this many failures in a row. Default 5. */
  consecutiveFailures?: number;
  /** Opens when more than this share of the last `windowSize` calls failed (0–1). Default 0.5. */
  failureRatio?: number;
  /** Calls the ratio looks at. Default 20. */
  windowSize?: number;
  /** Fewest calls in the window before the ratio can open the breaker. Default 10. */
  minimumCalls?: number;
  /** Cool-down before a half-open test call. Default 30 s. */
  halfOpenAfterMs?: number;
}

export interface BreakerLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** Which failures count against an upstream's health (and so its breaker and error rate). */
export function isFailureStatus(status: number): boolean {
  return status >= 500 || status === 429;
}

/** Thrown inside the breaker for a failed attempt; carries the transport error, or the response. */
export class AttemptFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly response?: AttemptResponse,
  ) {
    super('upstream attempt failed');
  }
}

/** Consecutive failures OR a failure ratio, whichever trips first. */
class ConsecutiveOrRatioBreaker implements IBreaker {
  private consecutive = 0;
  private readonly ratio: CountBreaker;

  constructor(
    private readonly threshold: number,
    ratio: { threshold: number; size: number; minimumNumberOfCalls: number },
  ) {
    this.ratio = new CountBreaker(ratio);
  }

  get state(): unknown {
    return { consecutive: this.consecutive, ratio: this.ratio.state };
  }

  set state(value: unknown) {
    const saved = value as { consecutive: number; ratio: unknown };
    this.consecutive = saved.consecutive;
    this.ratio.state = saved.ratio;
  }

  success(state: CircuitState): void {
    this.consecutive = 0;
    this.ratio.success(state);
  }

  failure(state: CircuitState): boolean {
    this.consecutive++;
    const byRatio = this.ratio.failure(state);
    return state !== CircuitState.Closed || byRatio || this.consecutive >= this.threshold;
  }
}

export interface UpstreamBreaker {
  upstream: string;
  policy: CircuitBreakerPolicy;
  /** The caller is done with it (its request ended): from then on it may be evicted once idle. */
  release(): void;
}

interface BreakerEntry extends UpstreamBreaker {
  /** Requests holding it now (from `breakerFor` to `release`): never evicted while above 0. */
  inUse: number;
  /** When it was last taken or released (ms since epoch). */
  lastUsedAt: number;
  halfOpenAfterMs: number;
}

/** Breakers kept without pressure; past it, idle ones are evicted (least recently used first). */
const MAX_BREAKERS = 2000;
/** Past it, any breaker not in use is evicted, open or not, so the map stays bounded. */
const HARD_MAX_BREAKERS = 2 * MAX_BREAKERS;
// Map order doubles as LRU order.
const breakers = new Map<string, BreakerEntry>();

/**
 * The breaker for this upstream and origin (and optional extra key), created on first use. The caller
 * holds it until `release()` (one request, with its retries); a held breaker is never evicted.
 */
export function breakerFor(
  upstream: string,
  scope: string,
  options: BreakerOptions,
  log?: BreakerLog,
): UpstreamBreaker {
  const key = `${upstream}|${scope}`;
  const existing = breakers.get(key);
  if (existing) {
    breakers.delete(key);
    breakers.set(key, existing);
    existing.inUse++;
    existing.lastUsedAt = Date.now();
    return existing;
  }
  const size = Math.max(1, options.windowSize ?? 20);
  const ratio = Math.min(0.99, Math.max(0.01, options.failureRatio ?? 0.5));
  const halfOpenAfterMs = options.halfOpenAfterMs ?? 30_000;
  const policy = circuitBreaker(
    handleWhen((err) => err instanceof AttemptFailure),
    {
      halfOpenAfter: halfOpenAfterMs,
      breaker: new ConsecutiveOrRatioBreaker(Math.max(1, options.consecutiveFailures ?? 5), {
        threshold: ratio,
        size,
        minimumNumberOfCalls: Math.min(size, Math.max(1, options.minimumCalls ?? 10)),
      }),
    },
  );
  if (log) {
    policy.onBreak(() => log.warn({ upstream, scope }, 'upstream circuit opened: failing fast'));
    policy.onReset(() => log.info({ upstream, scope }, 'upstream circuit closed'));
  }
  const created: BreakerEntry = {
    upstream,
    policy,
    inUse: 1,
    lastUsedAt: Date.now(),
    halfOpenAfterMs,
    release() {
      created.inUse = Math.max(0, created.inUse - 1);
      created.lastUsedAt = Date.now();
    },
  };
  breakers.set(key, created);
  if (breakers.size > MAX_BREAKERS) evictIdle();
  return created;
}

/**
 * Least recently used first, never one in use: a closed breaker, or an open one idle past its cool-down
 * (its next call would be a test call anyway), down to MAX_BREAKERS. An open one still cooling down is
 * kept (forgetting it would let a dead origin be hammered) unless the map is past HARD_MAX_BREAKERS.
 */
function evictIdle(): void {
  const now = Date.now();
  for (const [key, entry] of breakers) {
    if (breakers.size <= MAX_BREAKERS) return;
    if (entry.inUse > 0) continue;
    const cooledDown = now - entry.lastUsedAt >= entry.halfOpenAfterMs;
    if (entry.policy.state === CircuitState.Closed || cooledDown) breakers.delete(key);
  }
  for (const [key, entry] of breakers) {
    if (breakers.size <= HARD_MAX_BREAKERS) return;
    if (entry.inUse === 0) breakers.delete(key);
  }
}

/** How many breakers are kept (tests). */
export function breakerCount(): number {
  return breakers.size;
}

export function breakerStateName(policy: CircuitBreakerPolicy): BreakerState {
  // Cockatiel reports Open until the next call after the cool-down actually half-opens it.
  if (policy.state === CircuitState.HalfOpen) return 'half_open';
  if (policy.state === CircuitState.Open || policy.state === CircuitState.Isolated) return 'open';
  return 'closed';
}

const SEVERITY: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** The worst state over the breakers of one upstream (all its origins and keys). */
export function upstreamBreakerState(upstream: string): BreakerState {
  let worst: BreakerState = 'closed';
  for (const breaker of breakers.values()) {
    if (breaker.upstream !== upstream) continue;
    const state = breakerStateName(breaker.policy);
    if (SEVERITY[state] > SEVERITY[worst]) worst = state;
  }
  return worst;
}

/** Every upstream name with a breaker, for the state gauge. */
export function upstreamsWithBreakers(): Set<string> {
  return new Set([...breakers.values()].map((breaker) => breaker.upstream));
}

export function breakerSeverity(state: BreakerState): number {
  return SEVERITY[state];
}

/** Forgets every breaker (tests). */
export function resetBreakers(): void {
  breakers.clear();
}
