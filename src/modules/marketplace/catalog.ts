// What a workspace sees in the marketplace: the built-in skills plus its own private skills.
import type { SkillManifest } from '../../../packages/skill-sdk/src/manifest.js';
import type { Tx } from '../../platform/db/client.js';
import { type BuiltinListing, builtinListing, builtinListings } from './builtins.js';
import * as repo from './repository.js';

export interface CatalogEntry {
  manifest: SkillManifest;
  content: string;
  source: 'builtin' | 'private';
  privateSkill?: repo.PrivateSkillRow;
}

const fromBuiltin = (s: BuiltinListing): CatalogEntry => ({
  manifest: s.manifest,
  content: s.content,
  source: 'builtin',
});
const fromPrivate = (row: repo.PrivateSkillRow): CatalogEntry => ({
  manifest: row.manifest,
  content: row.content,
  source: 'private',
  privateSkill: row,
});

export async function workspaceCatalog(tx: Tx, workspaceId: string): Promise<CatalogEntry[]> {
  const own = await repo.listPrivateSkills(tx, workspaceId);
  return [...builtinListings().map(fromBuiltin), ...own.map(fromPrivate)];
}

export async function findCatalogEntry(tx: Tx, workspaceId: string, slug: string): Promise<CatalogEntry | undefined> {
  const builtin = builtinListing(slug);
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

export type Install = repo.InstallRow;
export type PrivateSkill = repo.PrivateSkillRow;

/** The workspace's install of a skill (any status), in the caller's transaction (the skill runtime checks it). */
export async function findInstall(tx: Tx, workspaceId: string, slug: string): Promise<Install | undefined> {
  return repo.findInstall(tx, workspaceId, slug);
}

/** The workspace's active installs, in the caller's transaction. */
export async function listActiveInstalls(tx: Tx, workspaceId: string): Promise<Install[]> {
  return repo.listActiveInstalls(tx, workspaceId);
}
