// The web app's plan list (Settings: what a plan includes, what the next adds; the plan notices) is a copy of the
// server's entitlements, since no endpoint returns them: it must say exactly what src/platform/tiers.ts enforces.
import { describe, expect, it } from 'vitest';
import { FEATURE_MIN_TIER, SKILL_INSTALL_LIMIT, TIERS } from '../src/platform/tiers.js';
import {
  nextPlan,
  PLAN_FEATURES,
  PLANS,
  planAdds,
  planIncludes,
  planName,
  SKILL_LIMITS,
} from '../web/src/components/plan-features.js';

describe('plan features (web) mirror tiers.ts', () => {
  it('lists every feature tiers.ts limits, each with its minimum plan', () => {
    const web = Object.fromEntries(Object.entries(PLAN_FEATURES).map(([feature, f]) => [feature, f.minPlan]));
    expect(web).toEqual(FEATURE_MIN_TIER);
  });

  it('has the same skill limits and the same plans in the same order', () => {
    expect(SKILL_LIMITS).toEqual(SKILL_INSTALL_LIMIT);
    expect([...PLANS]).toEqual([...TIERS]);
  });

  it('says what each plan includes and what the next one adds, by capitalised plan names', () => {
    expect(PLANS.map(planName)).toEqual(['Free', 'Standard', 'Advanced', 'Enterprise']);
    expect(nextPlan('free')).toBe('standard');
    expect(nextPlan('enterprise')).toBeNull();
    expect(planIncludes('free')).toContain(PLAN_FEATURES.recurring_events.words);
    expect(planIncludes('free')).not.toContain(PLAN_FEATURES.direct_messages_send.words);
    expect(planAdds('standard')).toContain(PLAN_FEATURES.direct_messages_send.words);
    expect(planAdds('standard')).toContain('Up to 5 skills in use');
    expect(planAdds('advanced')).toEqual([
      PLAN_FEATURES.conference_zoom.words,
      PLAN_FEATURES.patient_aware_scheduling.words,
      PLAN_FEATURES.outbound_webhooks.words,
      'Up to 20 skills in use',
    ]);
    // Each higher plan includes all of the one below.
    for (const [lower, higher] of [
      ['free', 'standard'],
      ['standard', 'advanced'],
      ['advanced', 'enterprise'],
    ] as const) {
      const upper = planIncludes(higher);
      for (const words of planIncludes(lower).filter((w) => !w.endsWith('skills in use'))) {
        expect(upper).toContain(words);
      }
    }
  });
});
