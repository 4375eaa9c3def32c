// What a workspace sees in the marketplace: the built-in skills plus its own private skills.
import type { SkillManifest } from '../../../packages/skill-sdk/src/manifest.js';
import type { Tx } from '../../platform/db/client.js';
import { BUILTIN_SKILLS, type BuiltinSkill, builtinSkill } from '../skills/catalog/index.js';
import * as repo from './repository.js';

export interface CatalogEntry {
  manifest: SkillManifest;
  content: string;
  source: 'builtin' | 'private';
  builtin?: BuiltinSkill;
  privateSkill?: repo.PrivateSkillRow;
}

const fromBuiltin = (s: BuiltinSkill): CatalogEntry => ({
  manifest: s.manifest,
  content: s.content,
  source: 'builtin',
  builtin: s,
});
const fromPrivate = (row: repo.PrivateSkillRow): CatalogEntry => ({
  manifest: row.manifest,
  content: row.content,
  source: 'private',
  privateSkill: row,
});

export async function workspaceCatalog(tx: Tx, workspaceId: string): Promise<CatalogEntry[]> {
  const own = await repo.listPrivateSkills(tx, workspaceId);
  return [...BUILTIN_SKILLS.map(fromBuiltin), ...own.map(fromPrivate)];
}

export async function findCatalogEntry(tx: Tx, workspaceId: string, slug: string): Promise<CatalogEntry | undefined> {
  const builtin = builtinSkill(slug);
  if (builtin) return fromBuiltin(builtin);
  const row = await repo.findPrivateSkill(tx, workspaceId, slug);
  return row ? fromPrivate(row) : undefined;
}

/** First paragraph of the markdown instructions, without the heading. */
export function contentSummary(content: string): string {
  const paragraphs = content
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith('#'));
  return (paragraphs[0] ?? '').replace(/\s+/g, ' ').slice(0, 500);
}
