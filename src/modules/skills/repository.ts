// SQL for the skill runtime's own data (coverages) and the read-only views tools get of other
// modules' data (SOAP notes, claims, staff-message mentions). Always scoped by workspace.
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { claims } from '../claims/tables.js';
import { dmMessages, dmParticipants } from '../direct-messages/tables.js';
import { soapNotes } from '../notes/tables.js';
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

export async function findSoapNote(tx: Tx, workspaceId: string, id: string) {
  const [row] = await tx
    .select()
    .from(soapNotes)
    .where(and(eq(soapNotes.workspaceId, workspaceId), eq(soapNotes.id, id)));
  return row;
}

export async function recentSoapNotes(tx: Tx, workspaceId: string, patientId: string, limit: number) {
  return tx
    .select()
    .from(soapNotes)
    .where(and(eq(soapNotes.workspaceId, workspaceId), eq(soapNotes.patientId, patientId)))
    .orderBy(desc(soapNotes.createdAt))
    .limit(limit);
}

export async function recentClaims(tx: Tx, workspaceId: string, patientId: string, limit: number) {
  return tx
    .select()
    .from(claims)
    .where(and(eq(claims.workspaceId, workspaceId), eq(claims.patientId, patientId)))
    .orderBy(desc(claims.submittedAt))
    .limit(limit);
}

/** Messages mentioning the patient in threads the user takes part in (never other people's threads). */
export async function recentMentions(tx: Tx, workspaceId: string, userId: string, patientId: string, limit: number) {
  return tx
    .select({
      id: dmMessages.id,
      threadId: dmMessages.threadId,
      senderId: dmMessages.senderId,
      body: dmMessages.body,
      createdAt: dmMessages.createdAt,
    })
    .from(dmMessages)
    .innerJoin(
      dmParticipants,
      and(
        eq(dmParticipants.workspaceId, dmMessages.workspaceId),
        eq(dmParticipants.threadId, dmMessages.threadId),
        eq(dmParticipants.userId, userId),
      ),
    )
    .where(
      and(
        eq(dmMessages.workspaceId, workspaceId),
        sql`${dmMessages.mentions} @> ${JSON.stringify([patientId])}::jsonb`,
      ),
    )
    .orderBy(desc(dmMessages.createdAt))
    .limit(limit);
}
