/**
 * The record's Notes tab: SOAP notes with who wrote them and when, and who signed them. Only a note's
 * author may change their draft or sign it (the API says the same), so nobody else is offered either.
 */
import { useEffect, useRef, useState } from 'react';
import { z } from 'zod';
import { ApiError } from '../../api.js';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog, ConfirmDialog } from '../../components/ui/dialog.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import { formatDateTime } from './patients-api.js';
import {
  type Note,
  type NoteSections,
  useCreateNote,
  useNotes,
  useReloadNotes,
  useSignNote,
  useUpdateNote,
} from './record-api.js';

const noteForm = z
  .object({ subjective: z.string(), objective: z.string(), assessment: z.string(), plan: z.string() })
  .refine((v) => Object.values(v).some((s) => s.trim()), {
    path: ['subjective'],
    message: 'Write at least one section',
  });

const SECTIONS = [
  ['subjective', 'Subjective'],
  ['objective', 'Objective'],
  ['assessment', 'Assessment'],
  ['plan', 'Plan'],
] as const;

const EMPTY: NoteSections = { subjective: '', objective: '', assessment: '', plan: '' };

/** The four sections' form; its owner keeps it, so an unsent note survives closing the dialog by mistake. */
const useNoteForm = (initial: NoteSections = EMPTY) => useZodForm(noteForm, { defaultValues: initial });
type NoteForm = ReturnType<typeof useNoteForm>;

export function Notes({ patientId }: { patientId: string }) {
  const notes = useNotes(patientId);
  const create = useCreateNote(patientId);
  const [writing, setWriting] = useState(false);
  const form = useNoteForm();
  return (
    <div className="record-section">
      <div className="section-actions">
        <Button variant="secondary" onPress={() => setWriting(true)} data-testid="write-note">
          Write a note
        </Button>
      </div>
      <NoteDialog
        title="New SOAP note"
        form={form}
        isOpen={writing}
        onOpenChange={setWriting}
        submitLabel="Save draft"
        testId="note-dialog"
        onSave={async (values) => {
          await create.mutateAsync(values);
          notifySuccess('Draft note saved. Sign it when it is final.');
          form.reset(EMPTY);
        }}
      />
      {notes.isPending ? <Loading label="Loading notes…" /> : null}
      {notes.isError ? <ErrorNotice error={notes.error} onRetry={() => notes.refetch()} /> : null}
      {notes.isSuccess && notes.data.items.length === 0 ? (
        <EmptyState title="No notes yet">Write the first SOAP note for this patient.</EmptyState>
      ) : null}
      {notes.isSuccess && notes.data.items.length > 0 ? (
        <ul className="card-list" data-testid="note-list">
          {notes.data.items.map((n) => (
            <NoteCard key={n.id} note={n} patientId={patientId} />
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** Writing a new note or changing a draft: the same four sections. Problems stay in the dialog. */
function NoteDialog({
  title,
  form,
  isOpen,
  onOpenChange,
  submitLabel,
  testId,
  onSave,
}: {
  title: string;
  form: NoteForm;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  submitLabel: string;
  testId: string;
  onSave: (values: NoteSections) => Promise<void>;
}) {
  // The dialog opens on its first section (as New event opens on its title): typing goes there at once, and the
  // first Tab does not land on Close, where Space or Enter would shut the dialog.
  useEffect(() => {
    if (isOpen) form.setFocus(SECTIONS[0][0]);
  }, [isOpen, form]);
  const onSubmit = form.handleSubmit((values) =>
    onSave(values)
      .then(() => onOpenChange(false))
      .catch((error) => {
        // The save button was busy and let the focus go: it goes back into the form, by the reason.
        if (!applyProblem(form, error)) form.setFocus(SECTIONS[0][0]);
      }),
  );
  return (
    <AppDialog title={title} isOpen={isOpen} onOpenChange={onOpenChange} size="large" testId={testId}>
      <form className="form" onSubmit={onSubmit} noValidate>
        <FormError message={form.formState.errors.root?.message} />
        {SECTIONS.map(([name, label]) => (
          <TextInput key={name} control={form.control} name={name} label={label} multiline rows={3} />
        ))}
        <div className="form-actions">
          <Button type="submit" isDisabled={form.formState.isSubmitting} data-testid="save-note">
            {form.formState.isSubmitting ? 'Saving…' : submitLabel}
          </Button>
        </div>
      </form>
    </AppDialog>
  );
}

function NoteCard({ note, patientId }: { note: Note; patientId: string }) {
  const me = useCurrentMe();
  const sign = useSignNote(patientId);
  const update = useUpdateNote(patientId);
  const reload = useReloadNotes(patientId);
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState(false);
  const [justSigned, setJustSigned] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const isAuthor = note.authorId === me.user.id;
  const author = note.authorName ?? 'a former member';
  const signed = note.status === 'signed';
  // The Sign button is gone once the note is signed: the focus goes to the note itself (after the dialog has
  // closed and handed the focus back to an opener that no longer exists).
  useEffect(() => {
    if (!justSigned || !signed || confirming) return;
    const frame = requestAnimationFrame(() => {
      heading.current?.focus();
      setJustSigned(false);
    });
    return () => cancelAnimationFrame(frame);
  }, [justSigned, signed, confirming]);
  const sections = (): NoteSections => ({
    subjective: note.subjective,
    objective: note.objective,
    assessment: note.assessment,
    plan: note.plan,
  });
  const editForm = useNoteForm(sections());
  return (
    <li className="card item-card" data-testid="note" data-status={note.status}>
      <div className="item-card-top">
        <h2 className="note-title" ref={heading} tabIndex={-1} data-testid="note-title">
          {signed ? 'Signed note' : 'Draft note'}
          <span className="visually-hidden">, written {formatDateTime(note.createdAt)}</span>
        </h2>
        <span className={`status-pill ${signed ? 'status-ok' : 'status-warn'}`}>{signed ? 'Signed' : 'Draft'}</span>
      </div>
      <p className="muted note-byline" data-testid="note-byline">
        Written by {author} on {formatDateTime(note.createdAt)}
        {!signed && note.updatedAt !== note.createdAt ? ` · changed ${formatDateTime(note.updatedAt)}` : ''}
        {signed ? (
          <>
            <br />
            <span data-testid="note-signed-by">
              Signed by {note.signedByName ?? 'a former member'}
              {note.signedAt ? ` on ${formatDateTime(note.signedAt)}` : ''}
            </span>
          </>
        ) : null}
      </p>
      <dl className="soap">
        {SECTIONS.filter(([name]) => note[name].trim()).map(([name, label]) => (
          <div key={name}>
            <dt>{label}</dt>
            <dd>{note[name]}</dd>
          </div>
        ))}
      </dl>
      {!signed && isAuthor ? (
        <div className="inline-actions">
          <Button
            size="small"
            variant="secondary"
            onPress={() => {
              // Each opening starts from the draft as it is now.
              editForm.reset(sections());
              setEditing(true);
            }}
            data-testid="edit-note"
          >
            Edit draft
          </Button>
          <Button
            size="small"
            onPress={() => {
              sign.reset();
              setConfirming(true);
            }}
            data-testid="sign-note"
          >
            Sign note
          </Button>
          <NoteDialog
            title="Change the draft"
            form={editForm}
            isOpen={editing}
            onOpenChange={(open) => {
              setEditing(open);
              // Closed after a refusal (signed meanwhile): the card shows the note as it now is.
              if (!open && update.isError) void reload();
            }}
            submitLabel="Save changes"
            testId="edit-note-dialog"
            onSave={async (values) => {
              const changes = Object.fromEntries(
                Object.entries(values).filter(([name, text]) => text !== note[name as keyof NoteSections]),
              ) as Partial<NoteSections>;
              if (Object.keys(changes).length === 0) return;
              await update.mutateAsync({ noteId: note.id, changes });
              notifySuccess('Draft saved.');
            }}
          />
          <ConfirmDialog
            title="Sign this note?"
            description="A signed note is part of the record and can no longer be changed."
            confirmLabel="Sign note"
            confirmVariant="primary"
            isOpen={confirming}
            onOpenChange={setConfirming}
            pending={sign.isPending}
            confirmTestId="confirm-sign-note"
            error={sign.error}
            errorTitle="The note was not signed"
            onConfirm={() =>
              sign.mutate(note.id, {
                onSuccess: () => {
                  setJustSigned(true);
                  setConfirming(false);
                  notifySuccess('Note signed. It can no longer be changed.');
                },
                onError: (error) => {
                  // Signed meanwhile (another tab or device): nothing to do but show it as it is.
                  if (error instanceof ApiError && error.status === 409) {
                    setConfirming(false);
                    void reload();
                    notifySuccess('This note was already signed.');
                  }
                },
              })
            }
          />
        </div>
      ) : null}
      {!signed && !isAuthor ? (
        <p className="muted" data-testid="note-author-only">
          Only {author} can change or sign this draft.
        </p>
      ) : null}
    </li>
  );
}
