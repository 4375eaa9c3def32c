/**
 * Pick a patient by typing a name, date of birth or MRN (React Aria ComboBox over `GET /patients?q=`).
 * The caller keeps the patient's id; the field shows the name. Used by the audit log's filter, the
 * calendar's event dialog, the messages composer and the inbox's link-patient dialog.
 */
import { useQuery } from '@tanstack/react-query';
import { type Ref, useEffect, useRef, useState } from 'react';
import { ComboBox, Input, Label, ListBox, ListBoxItem, Popover, Text } from 'react-aria-components';
import { useDebounced } from '../../components/use-debounced.js';
import { formatDate, fullName, type Patient, patientNameQuery, usePatientSearch } from './patients-api.js';

export function PatientPicker({
  patientId,
  onChange,
  label = 'Patient',
  testId,
  optionTestId,
  onTextChange,
  inputRef,
  invalid,
}: {
  patientId: string | undefined;
  /** The chosen id, or '' when the field is cleared or typed over. */
  onChange: (patientId: string) => void;
  label?: string;
  testId: string;
  optionTestId: string;
  /** What the person has typed (a form refuses to save text that names no chosen patient). */
  onTextChange?: (text: string) => void;
  inputRef?: Ref<HTMLInputElement>;
  /** The form's own marking of this field as wrong (aria-invalid, aria-describedby). */
  invalid?: { 'aria-invalid'?: boolean; 'aria-describedby'?: string };
}) {
  const chosen = useQuery({ ...patientNameQuery(patientId ?? ''), enabled: Boolean(patientId) }).data;
  const selected = { name: chosen ? fullName(chosen) : null };
  const [text, setText] = useState('');
  // The field shows the chosen patient's name (also after a reload of a filtered URL).
  useEffect(() => {
    if (selected.name) setText(selected.name);
  }, [selected.name]);
  // The name of the patient picked last, before the chosen patient's own read has come back.
  const picked = useRef<string | null>(null);
  const { q, results, items, choose } = usePatientSearchAsTyped(
    text,
    (patient) => {
      picked.current = fullName(patient);
      setText(fullName(patient));
      onTextChange?.(fullName(patient));
      onChange(patient.id);
    },
    { skip: selected.name },
  );
  return (
    <ComboBox
      className="field combo"
      inputValue={text}
      onInputChange={(value) => {
        setText(value);
        onTextChange?.(value);
        // Cleared, or typed over: the field no longer shows the chosen patient, so none is chosen any more
        // (a visit must never be saved to a patient the field does not name).
        if (patientId && (!value.trim() || (value !== selected.name && value !== picked.current))) {
          picked.current = null;
          onChange('');
        }
      }}
      selectedKey={patientId ?? null}
      onSelectionChange={(key) => {
        if (key !== null) choose(String(key));
      }}
      items={items}
      menuTrigger="input"
      allowsEmptyCollection
      allowsCustomValue
      data-testid={testId}
    >
      <Label>{label}</Label>
      <Input placeholder="Name, MRN or date of birth" ref={inputRef} {...invalid} />
      {chosen && patientId && text === selected.name ? (
        // Two patients may share a name: the chosen one's birth date and MRN say which.
        <Text slot="description" className="muted field-hint" data-testid={`${testId}-chosen`}>
          Born {formatDate(chosen.dateOfBirth)} · MRN {chosen.mrn ?? '—'}
        </Text>
      ) : null}
      <Popover className="popover combo-popover" placement="bottom start">
        <ListBox
          className="menu"
          renderEmptyState={() => (
            <p className="muted combo-empty">{results.isFetching ? 'Searching…' : `No patient matches “${q}”.`}</p>
          )}
        >
          {(patient: Patient) => (
            <ListBoxItem id={patient.id} className="menu-item" textValue={fullName(patient)} data-testid={optionTestId}>
              <PatientOption patient={patient} />
            </ListBoxItem>
          )}
        </ListBox>
      </Popover>
    </ComboBox>
  );
}

/**
 * A patient search over what is typed (debounced), shared by the command palette, this picker and the messages
 * composer's mention picker. While the
 * next answer is on its way the list still shows the answer to what was typed before: a patient chosen from it
 * is held until the answer to what is typed has come, and taken only if that answer holds them too; otherwise
 * nothing is chosen and the list shows that answer. So a quick typist never gets a patient who does not match
 * what is typed, nor one they did not choose. `skip`: a text not to search for (the picker's chosen name);
 * `whenEmpty`: search before anything is typed too (the mention picker lists patients at once).
 */
export function usePatientSearchAsTyped(
  text: string,
  onChosen: (patient: Patient) => void,
  options: { skip?: string | null; whenEmpty?: boolean } = {},
) {
  const q = useDebounced(text.trim(), 150);
  const searching = (q.length > 0 || options.whenEmpty === true) && q !== options.skip;
  const results = usePatientSearch(q, searching);
  const items = searching ? (results.data?.items ?? []) : [];
  const fresh = searching && q === text.trim() && !results.isPlaceholderData && !results.isPending;
  // A held choice is for the text it was made at: typing on forgets it.
  const [held, setHeld] = useState<{ id: string; text: string } | null>(null);
  const waiting = held?.text === text ? held.id : null;
  const shownIds = items.map((p) => p.id).join(',');
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the answer for the text typed has come
  useEffect(() => {
    if (!waiting || !fresh) return;
    setHeld(null);
    const patient = items.find((p) => p.id === waiting);
    if (patient) onChosen(patient);
  }, [waiting, fresh, shownIds]);
  const choose = (patientId: string) => {
    const patient = fresh ? items.find((p) => p.id === patientId) : undefined;
    if (patient) onChosen(patient);
    else setHeld({ id: patientId, text });
  };
  return { q, results, items, fresh, choose };
}

/** A patient as search results show one: family, given name; birth date and MRN. */
export function PatientOption({ patient }: { patient: Patient }) {
  return (
    <>
      <span className="menu-title">
        {patient.familyName}, {patient.givenName}
      </span>
      <span className="muted">
        Born {formatDate(patient.dateOfBirth)} · MRN {patient.mrn ?? '—'}
      </span>
    </>
  );
}
