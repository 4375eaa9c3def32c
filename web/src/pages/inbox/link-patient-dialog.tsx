/**
 * Link a conversation's contact to a patient record (the shared patient picker), or, when the patient
 * is not on file yet, register them with the app's new-patient form, prefilled with the name typed
 * (else the one they use on the channel), and link them on save.
 */
import { useEffect, useRef, useState } from 'react';
import { describeError } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { PatientForm } from '../patients/patient-form.js';
import { PatientPicker } from '../patients/patient-picker.js';
import { fullName, type Patient, type PatientInput, useCreatePatient } from '../patients/patients-api.js';
import { PossibleDuplicatesNotice, usePossibleDuplicates } from '../patients/possible-duplicates.js';
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
  const link = useLinkContact();
  const create = useCreatePatient();
  const registerRow = useRef<HTMLDivElement>(null);
  // The dialog opens on its patient field (as New event opens on its title): typing goes there at once, and the
  // first Tab does not land on Close, where Space or Enter would shut the dialog.
  const pickerInput = useRef<HTMLInputElement>(null);
  useEffect(() => pickerInput.current?.focus(), []);
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
  // As on the Patients page: a patient with these names and birth date already on file is offered first.
  const check = usePossibleDuplicates(register);

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
            pending={create.isPending || link.isPending || check.checking}
            error={create.error ?? link.error}
            onSubmit={(payload) => void check.submit(payload as PatientInput)}
            onCancel={() => setRegistering(false)}
            onEdit={check.clear}
            notice={
              check.duplicates ? (
                <PossibleDuplicatesNotice
                  matches={check.duplicates.matches}
                  pending={create.isPending || link.isPending}
                  action={(patient) => (
                    <Button
                      variant="secondary"
                      size="small"
                      isDisabled={create.isPending || link.isPending}
                      onPress={() => linkExisting(patient)}
                    >
                      Link this patient
                    </Button>
                  )}
                  onRegisterAnyway={() => check.duplicates && register(check.duplicates.payload)}
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
              inputRef={pickerInput}
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
                check.clear();
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
