/**
 * The audit log's patient filter: type a name, date of birth or MRN and pick the patient (React Aria
 * ComboBox over `GET /patients?q=`); the URL keeps the patient's id, the field shows the name.
 */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ComboBox, Input, Label, ListBox, ListBoxItem, Popover } from 'react-aria-components';
import { api, type Page } from '../../api.js';
import { formatDate, fullName, type Patient } from '../patients/patients-api.js';
import { usePatientName } from './admin-api.js';

export function PatientFilter({
  patientId,
  onChange,
}: {
  patientId: string | undefined;
  onChange: (patientId: string) => void;
}) {
  const selected = usePatientName(patientId);
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  // The field shows the chosen patient's name (also after a reload of a filtered URL).
  useEffect(() => {
    if (selected.name) setText(selected.name);
  }, [selected.name]);
  useEffect(() => {
    const timer = setTimeout(() => setQ(text.trim()), 150);
    return () => clearTimeout(timer);
  }, [text]);
  const results = useQuery({
    queryKey: ['patients', 'audit-filter', q],
    enabled: q.length > 0 && q !== selected.name,
    queryFn: ({ signal }) => api.get<Page<Patient>>('/patients', { q, limit: 8 }, signal),
    placeholderData: keepPreviousData,
  });
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
      data-testid="audit-patient-filter"
    >
      <Label>Patient</Label>
      <Input placeholder="Name or MRN" />
      <Popover className="popover combo-popover" placement="bottom start">
        <ListBox
          className="menu"
          renderEmptyState={() => (
            <p className="muted combo-empty">{results.isFetching ? 'Searching…' : `No patient matches “${q}”.`}</p>
          )}
        >
          {(patient: Patient) => (
            <ListBoxItem
              id={patient.id}
              className="menu-item"
              textValue={fullName(patient)}
              data-testid="audit-patient-option"
            >
              <span className="menu-title">
                {patient.familyName}, {patient.givenName}
              </span>
              <span className="muted">
                Born {formatDate(patient.dateOfBirth)} · MRN {patient.mrn ?? '—'}
              </span>
            </ListBoxItem>
          )}
        </ListBox>
      </Popover>
    </ComboBox>
  );
}
