// Acceptance counters for inbound traffic (mail, channel webhooks): what was accepted and what was
// refused (unverified, malformed) since the health probe last read them, per instance.
import type { ProbeResult } from './module.js';
import { upstreamStats } from './upstream/index.js';

export class AcceptanceCounter {
  private accepted = 0;
  private refused = 0;

  accept(): void {
    this.accepted += 1;
  }

  refuse(): void {
    this.refused += 1;
  }

  /** The counts since the last take, and a fresh window. */
  take(): { accepted: number; refused: number } {
    const out = { accepted: this.accepted, refused: this.refused };
    this.accepted = 0;
    this.refused = 0;
    return out;
  }

  /** The probe's view: the accepted share (pass ≥ 95 %, warn ≥ 80 %); no traffic passes. */
  measure(): ProbeResult {
    const { accepted, refused } = this.take();
    const total = accepted + refused;
    if (total === 0)
      return { status: 'pass', observedValue: 100, observedUnit: '%', output: 'No traffic since the last run' };
    const rate = Math.round((accepted / total) * 1000) / 10;
    return {
      status: rate >= 95 ? 'pass' : rate >= 80 ? 'warn' : 'fail',
      observedValue: rate,
      observedUnit: '%',
      output: `${accepted} accepted, ${refused} refused since the last run`,
    };
  }
}

/** A probe's view of an upstream's real calls: failure share and breaker over a window (default 5 min). */
export function upstreamErrorRate(upstream: string, windowMs = 5 * 60_000): ProbeResult {
  const stats = upstreamStats(upstream, windowMs);
  const rate = Math.round(stats.errorRate * 1000) / 10;
  return {
    status: stats.breaker === 'open' ? 'fail' : rate < 5 ? 'pass' : rate < 25 ? 'warn' : 'fail',
    observedValue: rate,
    observedUnit: '%',
    output: `${stats.errors} of ${stats.count} calls failed; breaker ${stats.breaker}`,
  };
}
