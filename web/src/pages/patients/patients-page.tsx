/** Patients: search and list, with a side panel to create one (`/patients/new`); each opens its record. */

import { Link, useNavigate, useRouterState, useSearch } from '@tanstack/react-router';
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { notifySuccess } from '../../components/ui/toast.js';
import { useDebounced } from '../../components/use-debounced.js';
import { PatientForm } from './patient-form.js';
import { PatientList } from './patient-list.js';
import { fullName, type Patient, type PatientInput, useCreatePatient } from './patients-api.js';
import { OpenRecord, PossibleDuplicatesNotice, usePossibleDuplicates } from './possible-duplicates.js';

export type PatientPanel = { mode: 'create' };

declare module '@tanstack/history' {
  interface HistoryState {
    /** Set when the new-patient panel is closed: the focus goes back to the button that opened it. */
    focusNewPatient?: boolean;
  }
}

export function PatientsPage({ panel }: { panel?: PatientPanel }) {
  const searchId = useId();
  const navigate = useNavigate();
  const { q } = useSearch({ strict: false }) as { q?: string };
  const [search, setSearch] = useState(q ?? '');
  const query = useDebounced(search.trim(), 250);
  // The list's search goes into the URL (replacing, not adding history), so Back returns to it.
  const written = useRef<string | null>(null);
  useEffect(() => {
    if (panel || query === (q ?? '')) return;
    written.current = query;
    void navigate({ to: '/patients', search: query ? { q: query } : {}, replace: true });
  }, [query, q, panel, navigate]);
  // The URL changed from outside (the Patients link, Back): the box follows it (not when we wrote it).
  useEffect(() => {
    if ((q ?? '') !== written.current) setSearch(q ?? '');
  }, [q]);
  // Cancel goes away with the panel: the New patient button it was opened from takes the focus back.
  const closePanel = () => void navigate({ to: '/patients', state: { focusNewPatient: true } });
  const focusNewPatient = useRouterState({ select: (s) => s.location.state.focusNewPatient === true });
  const newPatient = useRef<HTMLAnchorElement>(null);
  useEffect(() => {
    if (focusNewPatient && !panel) newPatient.current?.focus();
  }, [focusNewPatient, panel]);
  const openRecord = (patient: Patient) => {
    notifySuccess(`Created ${fullName(patient)}.`);
    // The form goes away with the panel: the new record's heading takes the focus (see PatientRecordPage).
    void navigate({ to: '/patients/$patientId', params: { patientId: patient.id }, state: { focusHeading: true } });
  };

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Patients</h1>
          <p className="muted">Everyone this workspace cares for.</p>
        </div>
        <Link to="/patients/new" className="button button-primary" data-testid="new-patient" ref={newPatient}>
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
              placeholder="Name, MRN or date of birth"
              value={search}
              maxLength={200}
              onChange={(e) => setSearch(e.target.value)}
              data-testid="patient-search"
            />
          </div>
          <PatientList query={query} />
        </div>
        {panel?.mode === 'create' ? (
          <CreatePatientPanel key="create" onClose={closePanel} onCreated={openRecord} />
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

/**
 * Registers a patient. With a name and a date of birth it first asks for patients registered with exactly
 * those (names ignoring case): a match is shown with *Open that record* and *Register anyway*.
 */
function CreatePatientPanel({ onClose, onCreated }: { onClose: () => void; onCreated: (patient: Patient) => void }) {
  const create = useCreatePatient();
  const register = (payload: PatientInput) => create.mutate(payload, { onSuccess: onCreated });
  const check = usePossibleDuplicates(register);
  return (
    <Panel title="New patient">
      <PatientForm
        submitLabel="Create patient"
        pending={create.isPending || check.checking}
        error={create.error}
        onCancel={() => onClose()}
        onEdit={check.clear}
        onSubmit={(payload) => void check.submit(payload as PatientInput)}
        notice={
          check.duplicates ? (
            <PossibleDuplicatesNotice
              matches={check.duplicates.matches}
              pending={create.isPending}
              action={(patient) => <OpenRecord patient={patient} />}
              onRegisterAnyway={() => check.duplicates && register(check.duplicates.payload)}
            />
          ) : null
        }
      />
    </Panel>
  );
}
