import { z } from 'zod';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { withTenant } from '../../platform/db/tenant.js';
import { conflict, forbidden, notFound, unprocessable } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js';
import type { AppDeps } from '../../platform/types.js';
import { patientExists } from '../patients/index.js';
import * as repo from './repository.js';
import type { CreateNoteInput, Note } from './schema.js';

export function presentNote(n: repo.NoteRow): Note {
  return {
    id: n.id,
    patientId: n.patientId,
    authorId: n.authorId,
    subjective: n.subjective,
    objective: n.objective,
    assessment: n.assessment,
    plan: n.plan,
    status: n.status,
    signedAt: n.signedAt?.toISOString() ?? null,
    signedBy: n.signedBy,
    createdAt: n.createdAt.toISOString(),
    updatedAt: n.updatedAt.toISOString(),
  };
}

async function requireNote(tx: Tx, ctx: RequestContext, id: string): Promise<repo.NoteRow> {
  const note = await repo.findNote(tx, ctx.workspaceId, id);
  if (!note) throw notFound('Note');
  return note;
}

export async function createNote(deps: AppDeps, ctx: RequestContext, input: CreateNoteInput): Promise<Note> {
  return withTenant(deps.db, ctx, async (tx) => {
    if (!(await patientExists(tx, ctx.workspaceId, input.patientId))) {
      throw unprocessable('unknown_patient', 'patientId is not a patient of this workspace', {
        errors: [{ path: 'body.patientId', message: 'Unknown patient' }],
      });
    }
    const row = await repo.insertNote(tx, {
      workspaceId: ctx.workspaceId,
      id: newId('note'),
      patientId: input.patientId,
      authorId: ctx.userId,
      subjective: input.subjective ?? '',
      objective: input.objective ?? '',
      assessment: input.assessment ?? '',
      plan: input.plan ?? '',
    });
    return presentNote(row);
  });
}

export async function getNote(deps: AppDeps, ctx: RequestContext, id: string): Promise<Note> {
  return withTenant(deps.db, ctx, async (tx) => presentNote(await requireNote(tx, ctx, id)));
}

export async function listNotes(
  deps: AppDeps,
  ctx: RequestContext,
  query: { patientId?: string; limit: number; cursor?: string },
): Promise<Page<Note>> {
  const before = decodeCursor(query.cursor, z.string());
  const rows = await withTenant(deps.db, ctx, (tx) =>
    repo.listNotes(tx, ctx.workspaceId, { patientId: query.patientId, limit: query.limit, before }),
  );
  const page = toPage(rows, query.limit, (r) => r.id);
  return { items: page.items.map(presentNote), nextCursor: page.nextCursor };
}

/** Only the author signs their note; a signed note is final (emits soap_note.signed in the same transaction). */
export async function signNote(deps: AppDeps, ctx: RequestContext, id: string): Promise<Note> {
  return withTenant(deps.db, ctx, async (tx) => {
    const note = await requireNote(tx, ctx, id);
    if (note.authorId !== ctx.userId) throw forbidden('Only the author may sign this note');
    const signed = await repo.signNote(tx, ctx.workspaceId, id, ctx.userId);
    if (!signed) throw conflict('The note is already signed');
    const presented = presentNote(signed);
    await publishEvent(tx, ctx, 'soap_note.signed', {
      noteId: presented.id,
      patientId: presented.patientId,
      signedBy: presented.signedBy,
      signedAt: presented.signedAt,
    });
    return presented;
  });
}

/** A note of the caller's workspace, in the caller's transaction (modules that link to notes). */
export async function findNote(
  tx: Tx,
  ctx: Pick<RequestContext, 'workspaceId'>,
  id: string,
): Promise<Note | undefined> {
  const row = await repo.findNote(tx, ctx.workspaceId, id);
  return row && presentNote(row);
}

/** The patient's latest notes, newest first (what a skill with patients:read sees). */
export async function recentNotes(
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  limit: number,
): Promise<Note[]> {
  const rows = await withTenant(deps.db, ctx, (tx) => repo.recentNotesOfPatient(tx, ctx.workspaceId, patientId, limit));
  return rows.map(presentNote);
}
