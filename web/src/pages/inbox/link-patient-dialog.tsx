/**
 * Link a conversation's contact to a patient record (the shared patient picker), or, when the patient
 * is not on file yet, register them with the app's new-patient form, prefilled with the name typed
 * (else the one they use on the channel), and link them on save.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { describeError } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { PatientForm } from '../patients/patient-form.js';
import { PatientPicker } from '../patients/patient-picker.js';
import {
  findPossibleDuplicates,
  formatDate,
  fullName,
  type Patient,
  type PatientInput,
  useCreatePatient,
} from '../patients/patients-api.js';
import { CHANNEL_LABEL, type Conversation, contactName, useLinkContact } from './inbox-api.js';

/** "Jordan", "Jordan Reyes", "Reyes, Jordan" → the form's given and family names. */
export function nameParts(text: string): { givenName: string; familyName: string } {
  const clean = text.trim().replace(/\s+/g, ' ');
  const comma = clean.indexOf(',');
  if (comma >= 0) return { familyName: clean.slice(0, comma).trim(), givenName: clean.slice(comma + 1).trim() };
  const words = clean.split(' ').filter(Boolean);
  if (words.length < 2) return { givenName: words[0] ?? '', familyName: '' };
  return { givenName: words.slice(0, -1).join(' '), familyName: words[words.length - 1] ?? '' };
}

export function LinkPatientDialog({ conversation, onClose }: { conversation: Conversation; onClose: () => void }) {
  const { contact } = conversation;
  const [patientId, setPatientId] = useState(contact.patientId ?? '');
  // What was typed into the picker: the new patient's name when none matched.
  const [typed, setTyped] = useState('');
  const [registering, setRegistering] = useState(false);
  const [checking, setChecking] = useState(false);
  const [duplicates, setDuplicates] = useState<{ payload: PatientInput; matches: Patient[] } | null>(null);
  const link = useLinkContact();
  const create = useCreatePatient();
  const registerRow = useRef<HTMLDivElement>(null);
  const who = `${contactName(contact)} on ${CHANNEL_LABEL[conversation.channel]}`;

  // Back from the form (Cancel), the focus returns to the button that opened it.
  const wasRegistering = useRef(false);
  useEffect(() => {
    if (wasRegistering.current && !registering) registerRow.current?.querySelector('button')?.focus();
    wasRegistering.current = registering;
  }, [registering]);

  const linkTo = (id: string, done: () => void) =>
    link.mutate({ contactId: contact.id, patientId: id }, { onSuccess: done });

  const linkExisting = (patient: Patient) =>
    linkTo(patient.id, () => {
      notifySuccess(`Linked to ${fullName(patient)}`);
      onClose();
    });

  // As on the Patients page: a patient with these names and birth date already on file is offered first.
  const submit = async (payload: PatientInput) => {
    if (checking) return;
    setDuplicates(null);
    if (payload.dateOfBirth) {
      setChecking(true);
      const matches = await findPossibleDuplicates({ ...payload, dateOfBirth: payload.dateOfBirth }).catch(
        () => [] as Patient[],
      );
      setChecking(false);
      if (matches.length > 0) return setDuplicates({ payload, matches });
    }
    register(payload);
  };

  const register = (payload: PatientInput) =>
    create.mutate(payload, {
      onSuccess: (patient) =>
        link.mutate(
          { contactId: contact.id, patientId: patient.id },
          {
            onSuccess: () => {
              notifySuccess(`Registered ${fullName(patient)}`, `${who} is linked to the new record.`);
              onClose();
            },
            // The record exists: choose it in the picker and say why the link did not happen.
            onError: () => {
              setPatientId(patient.id);
              setRegistering(false);
            },
          },
        ),
    });

  return (
    <AppDialog
      title={registering ? 'Register a new patient' : 'Link to a patient'}
      isOpen
      onOpenChange={(open) => (!open ? onClose() : undefined)}
      testId="link-patient-dialog"
    >
      {registering ? (
        <>
          <p className="muted">{who}: the conversation is linked to the new record when you save.</p>
          <PatientForm
            initial={nameParts(typed || contact.name || '')}
            submitLabel="Register and link"
            pending={create.isPending || link.isPending || checking}
            error={create.error ?? link.error}
            onSubmit={(payload) => void submit(payload as PatientInput)}
            onCancel={() => setRegistering(false)}
            onEdit={() => setDuplicates(null)}
            notice={
              duplicates ? (
                <AlreadyOnFile
                  matches={duplicates.matches}
                  pending={create.isPending || link.isPending}
                  onLink={linkExisting}
                  onRegisterAnyway={() => register(duplicates.payload)}
                />
              ) : null
            }
          />
        </>
      ) : (
        <>
          <p className="muted">
            {who}: their conversation then shows on the patient’s record. Linking is recorded in the audit log.
          </p>
          {/* The picker keeps its text to itself; what is typed bubbles up as input events. */}
          <div onInput={(e) => setTyped((e.target as HTMLInputElement).value)}>
            <PatientPicker
              patientId={patientId || undefined}
              onChange={setPatientId}
              testId="link-patient-picker"
              optionTestId="link-patient-option"
            />
          </div>
          {link.isError ? (
            <p className="field-error" role="alert">
              {describeError(link.error)}
            </p>
          ) : null}
          <div className="form-actions">
            {contact.patientId ? (
              <Button
                variant="ghost"
                isDisabled={link.isPending}
                onPress={() =>
                  link.mutate(
                    { contactId: contact.id, patientId: null },
                    {
                      onSuccess: () => {
                        notifySuccess('Unlinked', 'The conversation no longer shows on the patient record.');
                        onClose();
                      },
                    },
                  )
                }
                data-testid="unlink-patient"
              >
                Unlink
              </Button>
            ) : null}
            <Button variant="secondary" onPress={onClose}>
              Cancel
            </Button>
            <Button
              isDisabled={!patientId || link.isPending}
              onPress={() =>
                linkTo(patientId, () => {
                  notifySuccess('Linked to the patient record');
                  onClose();
                })
              }
              data-testid="link-patient-save"
            >
              Link
            </Button>
          </div>
          {/* Below the actions: the picker's list (which says when nobody matches) opens over what is under the field. */}
          <div className="link-register" ref={registerRow}>
            <span className="muted">Not on file yet?</span>
            <Button
              variant="secondary"
              size="small"
              onPress={() => {
                create.reset();
                link.reset();
                setDuplicates(null);
                setRegistering(true);
              }}
              data-testid="register-patient"
            >
              Register new patient
            </Button>
          </div>
        </>
      )}
    </AppDialog>
  );
}

/** Patients already on file with the names and birth date entered: link one of them, or register anyway. */
function AlreadyOnFile({
  matches,
  pending,
  onLink,
  onRegisterAnyway,
}: {
  matches: Patient[];
  pending: boolean;
  onLink: (patient: Patient) => void;
  onRegisterAnyway: () => void;
}) {
  const titleId = useId();
  const title = useRef<HTMLParagraphElement>(null);
  // It appears away from the focus (the submit button): it takes the focus, so it is read out first.
  useEffect(() => title.current?.focus(), []);
  return (
    <section className="notice notice-warning" aria-labelledby={titleId} data-testid="duplicate-warning">
      <p className="notice-title" id={titleId} ref={title} tabIndex={-1}>
        {matches.length === 1
          ? 'A patient with this name and date of birth is already on file:'
          : `${matches.length} patients with this name and date of birth are already on file:`}
      </p>
      <ul className="duplicate-list">
        {matches.map((m) => (
          <li key={m.id} className="link-duplicate" data-testid="duplicate-match">
            <span>
              {fullName(m)}, born {formatDate(m.dateOfBirth)}, MRN {m.mrn ?? 'not set'}
            </span>
            <Button variant="secondary" size="small" isDisabled={pending} onPress={() => onLink(m)}>
              Link this patient
            </Button>
          </li>
        ))}
      </ul>
      <div className="inline-actions">
        <Button
          variant="secondary"
          size="small"
          isDisabled={pending}
          onPress={onRegisterAnyway}
          data-testid="register-anyway"
        >
          Register anyway
        </Button>
      </div>
    </section>
  );
}
