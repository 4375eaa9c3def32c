import { z } from 'zod';
import { SCOPES, SLUG } from '../../../packages/skill-sdk/src/manifest.js';

export const scopeSchema = z.enum(SCOPES);
export const slugSchema = z.string().min(1).max(64).regex(SLUG, 'A lower-case slug (a-z, 0-9, -)');

export const toolSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  requiredScopes: z.array(scopeSchema),
});

export const manifestSchema = z.object({
  slug: z.string(),
  skillId: z.string(),
  name: z.string(),
  summary: z.string(),
  description: z.string(),
  category: z.string(),
  version: z.string(),
  publisher: z.string(),
  minTier: z.enum(['free', 'standard', 'advanced', 'enterprise']),
  visibility: z.enum(['public', 'private']),
  scopes: z.array(z.object({ scope: scopeSchema, reason: z.string() })),
  tools: z.array(toolSchema),
  triggers: z.array(z.string()).optional(),
});

export const catalogItemSchema = manifestSchema.extend({
  installed: z.boolean(),
  /** The version pinned by this workspace's install, if any. */
  installedVersion: z.string().nullable(),
});

export const catalogQuery = z.object({
  q: z.string().trim().max(200).optional(),
  category: z.string().trim().max(50).optional(),
});

export const installBody = z.object({
  slug: slugSchema,
  // Any scope string is accepted here: one the skill does not declare is a 422 scope_not_declared (contract §4).
  scopes: z
    .array(z.string().min(1).max(64))
    .max(SCOPES.length * 2)
    .default([]),
});

export const uninstallBody = z.object({ slug: slugSchema });

export const installSchema = z.object({
  slug: z.string(),
  skillId: z.string(),
  version: z.string(),
  grantedScopes: z.array(scopeSchema),
  status: z.enum(['active', 'uninstalled']),
  installedAt: z.string(),
  installedBy: z.string(),
  updatedAt: z.string(),
  /** The catalog has a newer version than the pinned one. */
  updateAvailable: z.boolean(),
  latestVersion: z.string(),
  /** Scopes the newer version declares that this install has not granted. */
  newScopes: z.array(scopeSchema),
});
export type InstallView = z.infer<typeof installSchema>;

export const installResponse = z.object({ install: installSchema });

export const installedList = z.object({
  items: z.array(installSchema),
  nextCursor: z.null(),
  /** Active installs counted against the tier limit. */
  activeCount: z.number().int(),
  /** null = unlimited. */
  limit: z.number().int().nullable(),
  tier: z.string(),
});

export const moduleResponse = catalogItemSchema.extend({
  content: z.string(),
  contentSummary: z.string(),
  install: installSchema.nullable(),
  source: z.enum(['builtin', 'private']),
});

export const privateSkillBody = z.object({
  manifest: z.record(z.string(), z.unknown()),
  endpoint: z.string().min(1).max(2000),
  /** Markdown instructions (SKILL.md); defaults to the manifest description. */
  content: z.string().max(50_000).optional(),
});

export const privateSkillSchema = z.object({
  skill: manifestSchema,
  endpoint: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** The whsec_ signing secret: only in the 201 answer that created the skill. */
  secret: z.string().optional(),
});

export const slugParams = z.object({ slug: z.string().min(1).max(100) });
