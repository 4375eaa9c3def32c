// GET /calendar/capabilities: what the workspace's tier allows, and the whole matrix (contract §12),
// read from the platform's one table of entitlements.
import { TIERS, type Tier } from '../../platform/context.js';
import { type Feature, hasFeature } from '../../platform/tiers.js';

const FLAGS = {
  meet: 'conference_meet',
  teams: 'conference_teams',
  zoom: 'conference_zoom',
  auto: 'conference_auto',
  recurring: 'recurring_events',
  patientAware: 'patient_aware_scheduling',
  hqView: 'hq_calendar',
  bothProviders: 'calendar_both_providers',
} as const satisfies Record<string, Feature>;

type Flags = Record<keyof typeof FLAGS, boolean>;

const flagsOf = (tier: Tier): Flags =>
  Object.fromEntries(Object.entries(FLAGS).map(([flag, feature]) => [flag, hasFeature(tier, feature)])) as Flags;

export function calendarCapabilities(tier: Tier) {
  return {
    tier,
    allowed: flagsOf(tier),
    matrix: Object.fromEntries(TIERS.map((t) => [t, flagsOf(t)])) as Record<Tier, Flags>,
  };
}
