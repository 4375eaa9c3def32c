/**
 * The check before registering a patient, wherever a patient is registered (the Patients page, the
 * Inbox's Register new patient): with a name and a date of birth, patients already on file with
 * exactly those (names ignoring case) are shown first, each with the caller's action, and Register
 * anyway. The check is a courtesy: when it cannot answer, registering goes ahead.
 */
import { Link } from '@tanstack/react-router';
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { Button } from '../../components/ui/button.js';
import { findPossibleDuplicates, formatDate, fullName, type Patient, type PatientInput } from './patients-api.js';

export interface PossibleDuplicates {
  payload: PatientInput;
  matches: Patient[];
}

/** `submit(payload)` registers at once, or first finds patients on file with the same names and birth date. */
export function usePossibleDuplicates(register: (payload: PatientInput) => void) {
  const [checking, setChecking] = useState(false);
  const [duplicates, setDuplicates] = useState<PossibleDuplicates | null>(null);
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
  return { checking, duplicates, submit, clear: () => setDuplicates(null) };
}

/** Opening a match's record: the Patients page's action. */
export const OpenRecord = ({ patient }: { patient: Patient }) => (
  <Link
    to="/patients/$patientId"
    params={{ patientId: patient.id }}
    // The record opens with its heading focused, as a newly registered one does.
    state={{ focusHeading: true }}
    className="button button-secondary button-small"
    aria-label={`Open the record of ${fullName(patient)}, born ${formatDate(patient.dateOfBirth)}, MRN ${patient.mrn ?? 'not set'}`}
    data-testid="open-duplicate"
  >
    Open that record
  </Link>
);

export function PossibleDuplicatesNotice({
  matches,
  pending,
  action,
  onRegisterAnyway,
}: {
  matches: Patient[];
  pending: boolean;
  /** What can be done with a match instead of registering (open it, link it). */
  action: (patient: Patient) => ReactNode;
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
          ? 'A patient with this name and date of birth already exists:'
          : `${matches.length} patients with this name and date of birth already exist:`}
      </p>
      <ul className="duplicate-list">
        {matches.map((m) => (
          <li key={m.id} className="duplicate-match" data-testid="duplicate-match">
            <span>
              {fullName(m)}, born {formatDate(m.dateOfBirth)}, MRN {m.mrn ?? 'not set'}
            </span>
            {action(m)}
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
