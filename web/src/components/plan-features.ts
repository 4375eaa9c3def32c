/**
 * What each plan includes, in plain words. No endpoint returns the server's entitlements, so this mirrors
 * src/platform/tiers.ts (FEATURE_MIN_TIER, SKILL_INSTALL_LIMIT); test/plan-features.test.ts keeps the two equal.
 */
import type { Tier } from '../session.js';

export const PLANS: readonly Tier[] = ['free', 'standard', 'advanced', 'enterprise'];

const NAMES: Record<Tier, string> = {
  free: 'Free',
  standard: 'Standard',
  advanced: 'Advanced',
  enterprise: 'Enterprise',
};

/** "Standard": a plan's name as the app writes it everywhere. */
export function planName(tier: string): string {
  return NAMES[tier as Tier] ?? tier.charAt(0).toUpperCase() + tier.slice(1);
}

export function planAtLeast(tier: string, min: string): boolean {
  return PLANS.indexOf(tier as Tier) >= PLANS.indexOf(min as Tier);
}

/** The plan after this one, or null on the highest. */
export function nextPlan(tier: string): Tier | null {
  const at = PLANS.indexOf(tier as Tier);
  return at >= 0 && at < PLANS.length - 1 ? PLANS[at + 1] : null;
}

/** Each feature the server limits by plan (tiers.ts FEATURE_MIN_TIER), its lowest plan and what it gives. */
export const PLAN_FEATURES = {
  marketplace_install: { minPlan: 'standard', words: 'Install skills for the assistant from the Marketplace' },
  custom_skills: { minPlan: 'enterprise', words: 'Your own private skills, made with the Skill SDK' },
  calendar_both_providers: {
    minPlan: 'standard',
    words: 'More than one calendar connection, Google and Microsoft side by side',
  },
  conference_meet: { minPlan: 'free', words: 'Google Meet links on appointments' },
  conference_teams: { minPlan: 'standard', words: 'Microsoft Teams links on appointments' },
  conference_zoom: { minPlan: 'advanced', words: 'Zoom links on appointments' },
  conference_auto: { minPlan: 'standard', words: 'The video link chosen for you from the calendar' },
  recurring_events: { minPlan: 'free', words: 'Repeating appointments' },
  patient_aware_scheduling: {
    minPlan: 'advanced',
    words: 'Scheduling that stops double-booking a patient or a busy provider',
  },
  hq_calendar: { minPlan: 'enterprise', words: 'One calendar across every workspace of your organization' },
  direct_messages_send: { minPlan: 'standard', words: 'Sending messages to colleagues' },
  outbound_webhooks: { minPlan: 'advanced', words: 'Webhooks: a signed message to your own systems as things happen' },
  inbound_channels: {
    minPlan: 'standard',
    words: 'Patients’ WhatsApp, Telegram, SMS, Messenger, Instagram and Viber messages in the Inbox',
  },
} as const satisfies Record<string, { minPlan: Tier; words: string }>;

export type PlanFeature = keyof typeof PLAN_FEATURES;

/** Active installed skills per plan (null: no limit), as tiers.ts SKILL_INSTALL_LIMIT. */
export const SKILL_LIMITS: Record<Tier, number | null> = {
  free: 0,
  standard: 5,
  advanced: 20,
  enterprise: null,
};

/** What every plan has whatever the table above says (contract §12): not limited by the server. */
const BASICS = [
  'Patients, visit notes and the calendar',
  'Reading and receiving messages from colleagues',
  'Browsing the Marketplace',
];

function skillLimitWords(tier: Tier): string | null {
  const limit = SKILL_LIMITS[tier];
  if (limit === 0) return null;
  return limit === null ? 'Any number of skills in use' : `Up to ${limit} skills in use`;
}

/** Everything a plan includes, in plain words. */
export function planIncludes(tier: Tier): string[] {
  const features = Object.values(PLAN_FEATURES)
    .filter((f) => planAtLeast(tier, f.minPlan))
    .map((f) => f.words);
  const skills = skillLimitWords(tier);
  return [...BASICS, ...features, ...(skills ? [skills] : [])];
}

/** What a plan adds to the one below it, in plain words. */
export function planAdds(tier: Tier): string[] {
  const features = Object.values(PLAN_FEATURES)
    .filter((f) => f.minPlan === tier)
    .map((f) => f.words);
  const skills = skillLimitWords(tier);
  return [...features, ...(skills ? [skills] : [])];
}
