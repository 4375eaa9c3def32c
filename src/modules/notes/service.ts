import { z } from 'zod';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { withTenant } from '../../platform/db/tenant.js';
import { conflict, forbidden, notFound, unprocessable } from '../../platform/errors.js';
import { publishEvent } from '../../platform/events/events.js';
import { newId } from '../../platform/ids.js';
import { decodeCursor, type Page, toPage } from '../../platform/pagination.js';
import type { AppDeps } from '../../platform/types.js';
import { userNames } from '../identity/index.js';
import { patientExists } from '../patients/index.js';
import * as repo from './repository.js';
import type { CreateNoteInput, Note, UpdateNoteInput } from './schema.js';

export function presentNote(n: repo.NoteRow, names: Map<string, string>): Note {
  return {
    id: n.id,
    patientId: n.patientId,
    authorId: n.authorId,
    authorName: names.get(n.authorId) ?? null,
    subjective: n.subjective,
    objective: n.objective,
    assessment: n.assessment,
    plan: n.plan,
    status: n.status,
    signedAt: n.signedAt?.toISOString() ?? null,
    signedBy: n.signedBy,
    signedByName: n.signedBy ? (names.get(n.signedBy) ?? null) : null,
    createdAt: n.createdAt.toISOString(),
    updatedAt: n.updatedAt.toISOString(),
  };
}

/** Notes as the API shows them: with the names of their authors and signers. */
async function presentNotes(tx: Tx, rows: repo.NoteRow[]): Promise<Note[]> {
  const names = await userNames(
    tx,
    rows.flatMap((r) => (r.signedBy ? [r.authorId, r.signedBy] : [r.authorId])),
  );
  return rows.map((r) => presentNote(r, names));
}

const presentOne = async (tx: Tx, row: repo.NoteRow): Promise<Note> => (await presentNotes(tx, [row]))[0];

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
    return presentOne(tx, row);
  });
}

export async function getNote(deps: AppDeps, ctx: RequestContext, id: string): Promise<Note> {
  return withTenant(deps.db, ctx, async (tx) => presentOne(tx, await requireNote(tx, ctx, id)));
}

/** Only the author changes their draft; a signed note is final (409). */
export async function updateNote(
  deps: AppDeps,
  ctx: RequestContext,
  id: string,
  input: UpdateNoteInput,
): Promise<Note> {
  return withTenant(deps.db, ctx, async (tx) => {
    const note = await requireNote(tx, ctx, id);
    if (note.authorId !== ctx.userId) throw forbidden('Only the author may change this note');
    const updated = await repo.updateDraft(tx, ctx.workspaceId, id, input);
    if (!updated) throw conflict('The note is signed and can no longer be changed');
    return presentOne(tx, updated);
  });
}

export async function listNotes(
  deps: AppDeps,
  ctx: RequestContext,
  query: { patientId?: string; limit: number; cursor?: string },
): Promise<Page<Note>> {
  const before = decodeCursor(query.cursor, z.string());
  return withTenant(deps.db, ctx, async (tx) => {
    const rows = await repo.listNotes(tx, ctx.workspaceId, { patientId: query.patientId, limit: query.limit, before });
    const page = toPage(rows, query.limit, (r) => r.id);
    return { items: await presentNotes(tx, page.items), nextCursor: page.nextCursor };
  });
}

/** Only the author signs their note; a signed note is final (emits soap_note.signed in the same transaction). */
export async function signNote(deps: AppDeps, ctx: RequestContext, id: string): Promise<Note> {
  return withTenant(deps.db, ctx, async (tx) => {
    const note = await requireNote(tx, ctx, id);
    if (note.authorId !== ctx.userId) throw forbidden('Only the author may sign this note');
    const signed = await repo.signNote(tx, ctx.workspaceId, id, ctx.userId);
    if (!signed) throw conflict('The note is already signed');
    const presented = await presentOne(tx, signed);
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
  return row && presentOne(tx, row);
}

/** The patient's latest notes, newest first (what a skill with patients:read sees). */
export async function recentNotes(
  deps: AppDeps,
  ctx: RequestContext,
  patientId: string,
  limit: number,
): Promise<Note[]> {
  return withTenant(deps.db, ctx, async (tx) =>
    presentNotes(tx, await repo.recentNotesOfPatient(tx, ctx.workspaceId, patientId, limit)),
  );
}
