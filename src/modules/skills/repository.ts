// SQL for the skill runtime's own data (coverages). Other modules' data (notes, claims, staff-message
// mentions) is read through their public service functions, never their tables.
import { and, desc, eq } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { patientCoverages } from './tables.js';

export type CoverageRow = typeof patientCoverages.$inferSelect;

export async function insertCoverage(tx: Tx, row: typeof patientCoverages.$inferInsert): Promise<CoverageRow> {
  const [created] = await tx.insert(patientCoverages).values(row).returning();
  return created;
}

export async function listCoverages(tx: Tx, workspaceId: string, patientId: string): Promise<CoverageRow[]> {
  return tx
    .select()
    .from(patientCoverages)
    .where(and(eq(patientCoverages.workspaceId, workspaceId), eq(patientCoverages.patientId, patientId)))
    .orderBy(desc(patientCoverages.effectiveFrom), desc(patientCoverages.id));
}
