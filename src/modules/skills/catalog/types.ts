import type { SkillManifest } from '../../../../packages/skill-sdk/src/manifest.js';
import { AppError } from '../../../platform/errors.js';
import type { SkillCapabilities } from '../capabilities.js';

export type ToolInput = Record<string, unknown>;
/** A tool result is any JSON; built-in tools add a human-readable `summary`. */
export type ToolImpl = (input: ToolInput, caps: SkillCapabilities) => Promise<unknown>;

export interface BuiltinSkill {
  manifest: SkillManifest;
  /** SKILL.md: the instructions loaded on demand. */
  content: string;
  tools: Record<string, ToolImpl>;
}

/**
 * Unwraps a client of the capability object. The dispatcher has already checked the tool's
 * requiredScopes; this is the second line (a tool reaching for a client it did not declare).
 */
export function need<T>(client: T | undefined, scope: string): T {
  if (client === undefined) {
    throw new AppError('scope_denied', 403, `This tool needs the ${scope} scope`, { requiredScopes: [scope] });
  }
  return client;
}

export const today = (now: Date) => now.toISOString().slice(0, 10);
