import { type RequestContext, TIERS, type Tier, tierAtLeast } from './context.js';
import { AppError } from './errors.js';

/** Entitlements of contract §12: the minimum tier of each feature. */
export const FEATURE_MIN_TIER = {
  marketplace_install: 'standard',
  custom_skills: 'enterprise',
  calendar_both_providers: 'standard',
  conference_meet: 'free',
  conference_teams: 'standard',
  conference_zoom: 'advanced',
  conference_auto: 'standard',
  recurring_events: 'free',
  patient_aware_scheduling: 'advanced',
  hq_calendar: 'enterprise',
  direct_messages_send: 'standard',
  outbound_webhooks: 'advanced',
  inbound_channels: 'standard',
} as const satisfies Record<string, Tier>;

export type Feature = keyof typeof FEATURE_MIN_TIER;

/** Active installed skills per tier (null = unlimited). */
export const SKILL_INSTALL_LIMIT: Record<Tier, number | null> = {
  free: 0,
  standard: 5,
  advanced: 20,
  enterprise: null,
};

/** A tier as people read it: the plan's name, capitalised ("Standard"). */
export const planName = (tier: Tier) => tier.charAt(0).toUpperCase() + tier.slice(1);

export function hasFeature(tier: Tier, feature: Feature): boolean {
  return tierAtLeast(tier, FEATURE_MIN_TIER[feature]);
}

/** Throws 403 tier_required (with `feature`, `requiredTier`) when the workspace tier lacks the feature. */
export function requireFeature(ctx: Pick<RequestContext, 'tier'>, feature: Feature): void {
  if (!hasFeature(ctx.tier, feature)) {
    const requiredTier = FEATURE_MIN_TIER[feature];
    throw new AppError('tier_required', 403, `This needs the ${planName(requiredTier)} plan or above`, {
      feature,
      requiredTier,
    });
  }
}

export { TIERS };
