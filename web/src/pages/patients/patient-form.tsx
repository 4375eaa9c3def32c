/** Create or edit a patient; field problems from a 400/422 answer appear next to their fields. */
import { type FormEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { flushSync } from 'react-dom';
import { ApiError, fieldErrors, fieldName } from '../../api.js';
import { FormField } from '../../components/form-field.js';
import { ErrorNotice, Spinner } from '../../components/status.js';
import { localToday, type Patient, type PatientInput } from './patients-api.js';

interface Values {
  givenName: string;
  familyName: string;
  dateOfBirth: string;
  mrn: string;
}

const FIELDS = ['givenName', 'familyName', 'dateOfBirth', 'mrn'] as const;

export type InitialNames = Partial<Pick<Values, 'givenName' | 'familyName'>>;

function initialValues(patient?: Patient, initial?: InitialNames): Values {
  return {
    givenName: patient?.givenName ?? initial?.givenName ?? '',
    familyName: patient?.familyName ?? initial?.familyName ?? '',
    dateOfBirth: patient?.dateOfBirth?.slice(0, 10) ?? '',
    mrn: patient?.mrn ?? '',
  };
}

/** For create: every filled field. For edit: only what changed; a cleared optional field is sent as null. */
function toPayload(values: Values, original?: Values): Partial<PatientInput> {
  const trimmed: Values = {
    givenName: values.givenName.trim(),
    familyName: values.familyName.trim(),
    dateOfBirth: values.dateOfBirth,
    mrn: values.mrn.trim(),
  };
  const payload: Partial<PatientInput> = {};
  for (const field of FIELDS) {
    if (original && trimmed[field] === original[field]) continue;
    if (field === 'givenName' || field === 'familyName') payload[field] = trimmed[field];
    else if (trimmed[field]) payload[field] = trimmed[field];
    else if (original) payload[field] = null;
  }
  return payload;
}

interface PatientFormProps {
  patient?: Patient;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (payload: Partial<PatientInput>) => void;
  onCancel: () => void;
  /** Any change to a field (the page drops an answer that was about the values before). */
  onEdit?: () => void;
  /** Shown above the buttons (the possible-duplicate warning). */
  notice?: ReactNode;
  /** A new patient's names to start from (the Inbox registers a contact under the name typed there). */
  initial?: InitialNames;
}

export function PatientForm({
  patient,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
  onEdit,
  notice,
  initial,
}: PatientFormProps) {
  const [original] = useState(() => (patient ? initialValues(patient) : undefined));
  const [values, setValues] = useState(() => initialValues(patient, initial));
  // Checked here first, in plain words, so an empty name never reaches the server (whose words are for developers).
  const [local, setLocal] = useState<Partial<Record<keyof Values, string>>>({});
  const errors = { ...fieldErrors(error), ...local };
  const knownField = (path: string) => (FIELDS as readonly string[]).includes(fieldName(path) ?? '');
  const unplaced = error instanceof ApiError ? error.errors.filter((e) => !knownField(e.path)) : [];

  const set = (field: keyof Values) => (event: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [field]: event.target.value }));
    onEdit?.();
  };

  const handleSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (pending) return;
    const form = event.currentTarget;
    const problems: Partial<Record<keyof Values, string>> = {};
    if (!values.givenName.trim()) problems.givenName = 'Enter the given name';
    if (!values.familyName.trim()) problems.familyName = 'Enter the family name';
    // The reader's own date: in Auckland a baby born this morning is born today, while UTC is still on yesterday.
    const today = localToday();
    if (values.dateOfBirth && (values.dateOfBirth < '1900-01-01' || values.dateOfBirth > today)) {
      problems.dateOfBirth = 'Enter a date of birth from 1900 to today';
    }
    // The first field refused takes the focus once it is marked invalid and linked to its message (flushSync),
    // so a screen reader says what is wrong there; the message alone is not announced.
    flushSync(() => setLocal(problems));
    const first = FIELDS.find((field) => problems[field]);
    if (first) {
      const input = form.elements.namedItem(first);
      if (input instanceof HTMLInputElement) input.focus();
      return;
    }
    onSubmit(toPayload(values, original));
  };

  const unchanged = original !== undefined && Object.keys(toPayload(values, original)).length === 0;

  // A field the server refused (an MRN already on file) takes the focus, as the form's own checks do, so a
  // screen reader reads it with its message (the focus had stayed on the button).
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => {
    const refused = fieldErrors(error);
    const first = FIELDS.find((field) => refused[field]);
    const input = first ? formRef.current?.elements.namedItem(first) : null;
    if (input instanceof HTMLInputElement || input instanceof HTMLSelectElement) input.focus();
  }, [error]);

  return (
    <form ref={formRef} className="form" onSubmit={handleSubmit} noValidate data-testid="patient-form">
      {error && Object.keys(local).length === 0 ? (
        <ErrorNotice
          error={error}
          title={
            Object.keys(errors).length > 0 ? 'Please correct the highlighted fields' : 'Could not save the patient'
          }
          testId="patient-form-error"
        />
      ) : null}
      {unplaced.length > 0 ? (
        <ul className="field-error-list">
          {unplaced.map((e) => (
            <li key={`${e.path}:${e.message}`}>
              {e.path}: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
      <div className="form-row">
        <FormField
          label="Given name"
          name="givenName"
          required
          autoFocus={!patient}
          autoComplete="off"
          value={values.givenName}
          onChange={set('givenName')}
          error={errors.givenName}
        />
        <FormField
          label="Family name"
          name="familyName"
          required
          autoComplete="off"
          value={values.familyName}
          onChange={set('familyName')}
          error={errors.familyName}
        />
      </div>
      <div className="form-row">
        <FormField
          label="Date of birth"
          name="dateOfBirth"
          type="date"
          value={values.dateOfBirth}
          onChange={set('dateOfBirth')}
          error={errors.dateOfBirth}
        />
        <FormField
          label="MRN"
          name="mrn"
          hint="Medical record number (optional)"
          autoComplete="off"
          value={values.mrn}
          onChange={set('mrn')}
          error={errors.mrn}
        />
      </div>
      {notice}
      <div className="form-actions">
        <button
          type="submit"
          className="button button-primary"
          // Not disabled while saving (focus would drop to the page): a second press is ignored instead.
          disabled={unchanged}
          aria-disabled={pending || undefined}
          data-testid="patient-form-submit"
        >
          {pending ? (
            <>
              <Spinner /> Saving…
            </>
          ) : (
            submitLabel
          )}
        </button>
        <button type="button" className="button button-secondary" onClick={onCancel} disabled={pending}>
          Cancel
        </button>
      </div>
    </form>
  );
}
