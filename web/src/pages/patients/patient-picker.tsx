/**
 * Pick a patient by typing a name, date of birth or MRN (React Aria ComboBox over `GET /patients?q=`).
 * The caller keeps the patient's id; the field shows the name. Used by the audit log's filter and
 * the calendar's new-event dialog.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ComboBox, Input, Label, ListBox, ListBoxItem, Popover, Text } from 'react-aria-components';
import { useDebounced } from '../../components/use-debounced.js';
import { formatDate, fullName, type Patient, patientNameQuery, usePatientSearch } from './patients-api.js';

export function PatientPicker({
  patientId,
  onChange,
  label = 'Patient',
  testId,
  optionTestId,
}: {
  patientId: string | undefined;
  /** The chosen id, or '' when the field is cleared. */
  onChange: (patientId: string) => void;
  label?: string;
  testId: string;
  optionTestId: string;
}) {
  const chosen = useQuery({ ...patientNameQuery(patientId ?? ''), enabled: Boolean(patientId) }).data;
  const selected = { name: chosen ? fullName(chosen) : null };
  const [text, setText] = useState('');
  // The field shows the chosen patient's name (also after a reload of a filtered URL).
  useEffect(() => {
    if (selected.name) setText(selected.name);
  }, [selected.name]);
  const q = useDebounced(text.trim(), 150);
  const results = usePatientSearch(q, q.length > 0 && q !== selected.name);
  const items = q && q !== selected.name ? (results.data?.items ?? []) : [];
  return (
    <ComboBox
      className="field combo"
      inputValue={text}
      onInputChange={(value) => {
        setText(value);
        if (!value.trim() && patientId) onChange('');
      }}
      selectedKey={patientId ?? null}
      onSelectionChange={(key) => {
        if (key === null) return;
        const patient = items.find((p) => p.id === key);
        if (patient) setText(fullName(patient));
        onChange(String(key));
      }}
      items={items}
      menuTrigger="input"
      allowsEmptyCollection
      allowsCustomValue
      data-testid={testId}
    >
      <Label>{label}</Label>
      <Input placeholder="Name or MRN" />
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
