import { and, asc, count, eq } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { lockUntilCommit } from '../../platform/db/tenant.js';
import { privateSkills, skillInstalls } from './tables.js';

export type InstallRow = typeof skillInstalls.$inferSelect;
export type PrivateSkillRow = typeof privateSkills.$inferSelect;

/** Serialises install changes of one workspace (limit counting must not race). Held until commit. */
export async function lockWorkspaceInstalls(tx: Tx, workspaceId: string): Promise<void> {
  await lockUntilCommit(tx, `skill_installs:${workspaceId}`);
}

export async function findInstall(tx: Tx, workspaceId: string, slug: string): Promise<InstallRow | undefined> {
  const [row] = await tx
    .select()
    .from(skillInstalls)
    .where(and(eq(skillInstalls.workspaceId, workspaceId), eq(skillInstalls.slug, slug)));
  return row;
}

export async function listActiveInstalls(tx: Tx, workspaceId: string): Promise<InstallRow[]> {
  return tx
    .select()
    .from(skillInstalls)
    .where(and(eq(skillInstalls.workspaceId, workspaceId), eq(skillInstalls.status, 'active')))
    .orderBy(asc(skillInstalls.installedAt), asc(skillInstalls.slug));
}

export async function countActiveInstalls(tx: Tx, workspaceId: string): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(skillInstalls)
    .where(and(eq(skillInstalls.workspaceId, workspaceId), eq(skillInstalls.status, 'active')));
  return Number(row?.n ?? 0);
}

export async function upsertInstall(tx: Tx, row: typeof skillInstalls.$inferInsert): Promise<InstallRow> {
  const [saved] = await tx
    .insert(skillInstalls)
    .values(row)
    .onConflictDoUpdate({
      target: [skillInstalls.workspaceId, skillInstalls.slug],
      set: {
        skillId: row.skillId,
        version: row.version,
        manifest: row.manifest,
        grantedScopes: row.grantedScopes,
        status: row.status,
        installedAt: row.installedAt,
        installedBy: row.installedBy,
        updatedAt: new Date(),
        uninstalledAt: null,
        uninstalledBy: null,
      },
    })
    .returning();
  return saved;
}

export async function updateInstall(
  tx: Tx,
  workspaceId: string,
  slug: string,
  patch: Partial<typeof skillInstalls.$inferInsert>,
): Promise<InstallRow> {
  const [saved] = await tx
    .update(skillInstalls)
    .set({ ...patch, updatedAt: new Date() })
    .where(and(eq(skillInstalls.workspaceId, workspaceId), eq(skillInstalls.slug, slug)))
    .returning();
  return saved;
}

export async function listPrivateSkills(tx: Tx, workspaceId: string): Promise<PrivateSkillRow[]> {
  return tx
    .select()
    .from(privateSkills)
    .where(eq(privateSkills.workspaceId, workspaceId))
    .orderBy(asc(privateSkills.slug));
}

export async function findPrivateSkill(
  tx: Tx,
  workspaceId: string,
  slug: string,
): Promise<PrivateSkillRow | undefined> {
  const [row] = await tx
    .select()
    .from(privateSkills)
    .where(and(eq(privateSkills.workspaceId, workspaceId), eq(privateSkills.slug, slug)));
  return row;
}

export async function insertPrivateSkill(tx: Tx, row: typeof privateSkills.$inferInsert): Promise<PrivateSkillRow> {
  const [saved] = await tx.insert(privateSkills).values(row).returning();
  return saved;
}

export async function updatePrivateSkill(
  tx: Tx,
  workspaceId: string,
  slug: string,
  patch: Partial<typeof privateSkills.$inferInsert>,
): Promise<PrivateSkillRow> {
  const [saved] = await tx
    .update(privateSkills)
    .set({ ...patch, updatedAt: new Date() })
    .where(and(eq(privateSkills.workspaceId, workspaceId), eq(privateSkills.slug, slug)))
    .returning();
  return saved;
}

export async function deletePrivateSkill(tx: Tx, workspaceId: string, slug: string): Promise<boolean> {
  const rows = await tx
    .delete(privateSkills)
    .where(and(eq(privateSkills.workspaceId, workspaceId), eq(privateSkills.slug, slug)))
    .returning({ slug: privateSkills.slug });
  return rows.length > 0;
}
