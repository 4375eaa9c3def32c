// The built-in catalog: one folder per skill with manifest.json (contract §4), SKILL.md
// (instructions loaded on demand) and tools.ts. Validated at load; a bad manifest fails start.
import { readFileSync } from 'node:fs';
import { type SkillManifest, validateManifest } from '../../../../packages/skill-sdk/src/manifest.js';
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
  const check = validateManifest(JSON.parse(read('manifest.json')));
  if (!check.ok) {
    throw new Error(`Built-in skill ${slug}: ${check.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`);
  }
  const tools = IMPLEMENTATIONS[slug];
  const missing = check.manifest.tools.filter((t) => !tools[t.name]).map((t) => t.name);
  if (missing.length) throw new Error(`Built-in skill ${slug} has no implementation for ${missing.join(', ')}`);
  return { manifest: check.manifest, content: read('SKILL.md'), tools };
}

export const BUILTIN_SKILLS: BuiltinSkill[] = Object.keys(IMPLEMENTATIONS).map(load);
const bySlug = new Map(BUILTIN_SKILLS.map((s) => [s.manifest.slug, s]));

export function builtinSkill(slug: string): BuiltinSkill | undefined {
  return bySlug.get(slug);
}

export function isBuiltinSlug(slug: string): boolean {
  return bySlug.has(slug);
}

export type { BuiltinSkill, SkillManifest };
