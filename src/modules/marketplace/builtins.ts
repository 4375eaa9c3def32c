// The built-in skills every workspace's catalog lists. The marketplace owns the catalog; the skills
// module, which implements the built-in tools, registers their listing when the app is built, so the
// marketplace imports nothing from skills (no cycle).
import type { SkillManifest } from '../../../packages/skill-sdk/src/manifest.js';

export interface BuiltinListing {
  manifest: SkillManifest;
  /** SKILL.md: the instructions loaded on demand. */
  content: string;
}

let listings = new Map<string, BuiltinListing>();

/** Replaces the built-in listing (the skills module's init calls it once per app). */
export function registerBuiltinSkills(skills: readonly BuiltinListing[]): void {
  listings = new Map(skills.map((s) => [s.manifest.slug, s]));
}

export function builtinListings(): BuiltinListing[] {
  return [...listings.values()];
}

export function builtinListing(slug: string): BuiltinListing | undefined {
  return listings.get(slug);
}
