/** Patients: search and list, with a side panel to create (`/patients/new`) or edit (`/patients/:id`). */

import { Link, useNavigate } from '@tanstack/react-router';
import { type ReactNode, useEffect, useId, useState } from 'react';
import { ApiError } from '../../api.js';
import { ErrorNotice, Loading } from '../../components/status.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { PatientForm } from './patient-form.js';
import { PatientList } from './patient-list.js';
import { fullName, type PatientInput, useCreatePatient, usePatient, useUpdatePatient } from './patients-api.js';

export type PatientPanel = { mode: 'create' } | { mode: 'edit'; patientId: string };

function useDebouncedValue<T>(value: T, delayMs: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return debounced;
}

export function PatientsPage({ panel }: { panel?: PatientPanel }) {
  const searchId = useId();
  const navigate = useNavigate();
  const [search, setSearch] = useState('');
  const query = useDebouncedValue(search.trim(), 250);
  const closePanel = (message?: string) => {
    if (message) notifySuccess(message);
    void navigate({ to: '/patients' });
  };

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Patients</h1>
          <p className="muted">Everyone this workspace cares for.</p>
        </div>
        <Link to="/patients/new" className="button button-primary" data-testid="new-patient">
          New patient
        </Link>
      </header>
      <div className={panel ? 'split' : undefined}>
        <div className="card">
          <div className="toolbar">
            <label htmlFor={searchId} className="visually-hidden">
              Search patients
            </label>
            <input
              id={searchId}
              type="search"
              className="search-input"
              placeholder="Search by name or MRN"
              value={search}
              onChange={(e) => setSearch(e.target.value)}
              data-testid="patient-search"
            />
          </div>
          <PatientList query={query} selectedId={panel?.mode === 'edit' ? panel.patientId : undefined} />
        </div>
        {panel?.mode === 'create' ? <CreatePatientPanel key="create" onClose={closePanel} /> : null}
        {panel?.mode === 'edit' ? (
          <EditPatientPanel key={panel.patientId} patientId={panel.patientId} onClose={closePanel} />
        ) : null}
      </div>
    </section>
  );
}

function Panel({ title, children }: { title: string; children: ReactNode }) {
  const titleId = useId();
  return (
    <aside className="card panel" aria-labelledby={titleId} data-testid="patient-panel">
      <h2 id={titleId}>{title}</h2>
      {children}
    </aside>
  );
}

function CreatePatientPanel({ onClose }: { onClose: (message?: string) => void }) {
  const create = useCreatePatient();
  return (
    <Panel title="New patient">
      <PatientForm
        submitLabel="Create patient"
        pending={create.isPending}
        error={create.error}
        onCancel={() => onClose()}
        onSubmit={(payload) =>
          create.mutate(payload as PatientInput, { onSuccess: (p) => onClose(`Created ${fullName(p)}.`) })
        }
      />
    </Panel>
  );
}

function EditPatientPanel({ patientId, onClose }: { patientId: string; onClose: (message?: string) => void }) {
  const patient = usePatient(patientId);
  const update = useUpdatePatient(patientId);

  if (patient.isPending) {
    return (
      <Panel title="Edit patient">
        <Loading label="Loading patient…" />
      </Panel>
    );
  }
  if (patient.isError) {
    const missing = patient.error instanceof ApiError && patient.error.status === 404;
    return (
      <Panel title="Edit patient">
        <ErrorNotice
          error={patient.error}
          title={missing ? 'This patient does not exist in this workspace' : 'Could not load the patient'}
          onRetry={missing ? undefined : () => patient.refetch()}
        />
        <button type="button" className="button button-secondary" onClick={() => onClose()}>
          Back to the list
        </button>
      </Panel>
    );
  }
  return (
    <Panel title={`Edit ${fullName(patient.data)}`}>
      <PatientForm
        key={patient.data.updatedAt}
        patient={patient.data}
        submitLabel="Save changes"
        pending={update.isPending}
        error={update.error}
        onCancel={() => onClose()}
        onSubmit={(changes) => update.mutate(changes, { onSuccess: (p) => onClose(`Saved ${fullName(p)}.`) })}
      />
    </Panel>
  );
}
