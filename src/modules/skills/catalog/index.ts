// The built-in catalog: one folder per skill with manifest.json (contract §4), SKILL.md
// (instructions loaded on demand) and tools.ts. The manifests ship with the code, so the full
// check (validateManifest, which compiles every tool's input schema: ~0.2 s of every start) runs in
// catalog.test.ts and a bad manifest fails the tests; at start a tool without an implementation
// still stops the service.
import { readFileSync } from 'node:fs';
import type { SkillManifest } from '../../../../packages/skill-sdk/src/manifest.js';
import { tools as authorizedUnits } from './authorized-units/tools.js';
import { tools as billingCodes } from './billing-codes/tools.js';
import { tools as eligibility } from './insurance-eligibility/tools.js';
import { tools as spam } from './mail-spam-filter/tools.js';
import { tools as intake } from './patient-intake/tools.js';
import { tools as lookup } from './patient-lookup/tools.js';
import { tools as soap } from './soap-structurer/tools.js';
import { tools as brief } from './telehealth-brief/tools.js';
import type { BuiltinSkill, ToolImpl } from './types.js';

const IMPLEMENTATIONS: Record<string, Record<string, ToolImpl>> = {
  'insurance-eligibility': eligibility,
  'billing-codes': billingCodes,
  'mail-spam-filter': spam,
  'telehealth-brief': brief,
  'patient-lookup': lookup,
  'authorized-units': authorizedUnits,
  'soap-structurer': soap,
  'patient-intake': intake,
};

function load(slug: string): BuiltinSkill {
  const read = (file: string) => readFileSync(new URL(`./${slug}/${file}`, import.meta.url), 'utf8');
  const manifest = JSON.parse(read('manifest.json')) as SkillManifest;
  const tools = IMPLEMENTATIONS[slug];
  const missing = manifest.tools.filter((t) => !tools[t.name]).map((t) => t.name);
  if (missing.length) throw new Error(`Built-in skill ${slug} has no implementation for ${missing.join(', ')}`);
  return { manifest, content: read('SKILL.md'), tools };
}

export const BUILTIN_SKILLS: BuiltinSkill[] = Object.keys(IMPLEMENTATIONS).map(load);

/** The folder names of the built-in skills (for catalog.test.ts). */
export const BUILTIN_SLUGS = Object.keys(IMPLEMENTATIONS);
const bySlug = new Map(BUILTIN_SKILLS.map((s) => [s.manifest.slug, s]));

export function builtinSkill(slug: string): BuiltinSkill | undefined {
  return bySlug.get(slug);
}

export function isBuiltinSlug(slug: string): boolean {
  return bySlug.has(slug);
}

export type { BuiltinSkill, SkillManifest };
