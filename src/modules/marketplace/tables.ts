import { index, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import type { SkillManifest } from '../../../packages/skill-sdk/src/manifest.js';
import { timestamptz as ts } from '../../platform/db/columns.js';

/**
 * One row per (workspace, skill) ever installed. Uninstalling keeps the row with status
 * `uninstalled` (history for the audit trail); limits count `active` rows only.
 * `manifest` is the snapshot of the version the admin consented to (the pin).
 */
export const skillInstalls = pgTable(
  'skill_installs',
  {
    workspaceId: text('workspace_id').notNull(),
    slug: text('slug').notNull(),
    skillId: text('skill_id').notNull(),
    version: text('version').notNull(),
    manifest: jsonb('manifest').$type<SkillManifest>().notNull(),
    grantedScopes: jsonb('granted_scopes').$type<string[]>().notNull(),
    status: text('status').$type<'active' | 'uninstalled'>().notNull(),
    installedAt: ts('installed_at').notNull().defaultNow(),
    installedBy: text('installed_by').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    uninstalledAt: ts('uninstalled_at'),
    uninstalledBy: text('uninstalled_by'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.slug] }),
    index('skill_installs_status_idx').on(t.workspaceId, t.status),
  ],
);

/** Enterprise custom skills: visible only in their workspace, run by a signed call to `endpoint`. */
export const privateSkills = pgTable(
  'private_skills',
  {
    workspaceId: text('workspace_id').notNull(),
    slug: text('slug').notNull(),
    skillId: text('skill_id').notNull(),
    version: text('version').notNull(),
    manifest: jsonb('manifest').$type<SkillManifest>().notNull(),
    content: text('content').notNull(),
    endpoint: text('endpoint').notNull(),
    /** The whsec_ signing secret, AES-256-GCM encrypted (aad = workspace id + slug). */
    secretEncrypted: text('secret_encrypted').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.slug] })],
);
