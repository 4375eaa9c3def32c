import { and, desc, eq, lt } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { soapNotes } from './tables.js';

export type NoteRow = typeof soapNotes.$inferSelect;

export async function insertNote(tx: Tx, row: typeof soapNotes.$inferInsert): Promise<NoteRow> {
  const [created] = await tx.insert(soapNotes).values(row).returning();
  return created;
}

export async function findNote(tx: Tx, workspaceId: string, id: string): Promise<NoteRow | undefined> {
  const [row] = await tx
    .select()
    .from(soapNotes)
    .where(and(eq(soapNotes.workspaceId, workspaceId), eq(soapNotes.id, id)));
  return row;
}

export async function listNotes(
  tx: Tx,
  workspaceId: string,
  opts: { patientId?: string; limit: number; before?: string },
): Promise<NoteRow[]> {
  return tx
    .select()
    .from(soapNotes)
    .where(
      and(
        eq(soapNotes.workspaceId, workspaceId),
        opts.patientId ? eq(soapNotes.patientId, opts.patientId) : undefined,
        opts.before ? lt(soapNotes.id, opts.before) : undefined,
      ),
    )
    .orderBy(desc(soapNotes.id))
    .limit(opts.limit + 1);
}

/** Signs a draft; undefined when the note was already signed (checked in the same statement). */
export async function signNote(tx: Tx, workspaceId: string, id: string, userId: string): Promise<NoteRow | undefined> {
  const now = new Date();
  const [row] = await tx
    .update(soapNotes)
    .set({ status: 'signed', signedAt: now, signedBy: userId, updatedAt: now })
    .where(and(eq(soapNotes.workspaceId, workspaceId), eq(soapNotes.id, id), eq(soapNotes.status, 'draft')))
    .returning();
  return row;
}

/** Changes a draft's sections; undefined when it is signed by now (checked in the same statement). */
export async function updateDraft(
  tx: Tx,
  workspaceId: string,
  id: string,
  sections: Partial<Pick<NoteRow, 'subjective' | 'objective' | 'assessment' | 'plan'>>,
): Promise<NoteRow | undefined> {
  const [row] = await tx
    .update(soapNotes)
    .set({ ...sections, updatedAt: new Date() })
    .where(and(eq(soapNotes.workspaceId, workspaceId), eq(soapNotes.id, id), eq(soapNotes.status, 'draft')))
    .returning();
  return row;
}

export async function recentNotesOfPatient(tx: Tx, workspaceId: string, patientId: string, limit: number) {
  return tx
    .select()
    .from(soapNotes)
    .where(and(eq(soapNotes.workspaceId, workspaceId), eq(soapNotes.patientId, patientId)))
    .orderBy(desc(soapNotes.createdAt))
    .limit(limit);
}
