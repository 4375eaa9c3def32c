import type { Tier } from '../session.js';

const LABELS: Record<Tier, string> = {
  free: 'Free',
  standard: 'Standard',
  advanced: 'Advanced',
  enterprise: 'Enterprise',
};

export function TierBadge({ tier, testId }: { tier: Tier; testId?: string }) {
  return (
    <span className={`badge badge-${tier}`} data-testid={testId} title={`${LABELS[tier] ?? tier} plan`}>
      {LABELS[tier] ?? tier}
    </span>
  );
}
