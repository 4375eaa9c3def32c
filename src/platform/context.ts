import type { FastifyBaseLogger } from 'fastify';

export const TIERS = ['free', 'standard', 'advanced', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];
export type Role = 'admin' | 'member';

/** Who is acting, in which workspace. Passed explicitly to every service function. */
export interface RequestContext {
  workspaceId: string;
  organizationId: string | null;
  tier: Tier;
  userId: string;
  role: Role;
  isProvider: boolean;
  requestId: string;
  log: FastifyBaseLogger;
  /** How the caller authenticated. */
  via: 'token' | 'session' | 'system';
  /**
   * The request's Idempotency-Key once claimed, with its route (`POST /api/v1/calendar/events|key`;
   * platform/idempotency.ts): a create that reaches a
   * provider derives the provider's own idempotency from it, so a retry never makes a second one there.
   */
  idempotencyKey?: string;
}

export function tierAtLeast(tier: Tier, required: Tier): boolean {
  return TIERS.indexOf(tier) >= TIERS.indexOf(required);
}
