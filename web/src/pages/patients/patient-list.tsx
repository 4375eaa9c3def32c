/** The patient table for one search, with loading, empty, error states and "Load more". */

import { Link } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../../api.js';
import { EmptyState, ErrorNotice, Loading, LoadMore, Spinner } from '../../components/status.js';
import { formatDate, formatDateTime, fullName, type Patient, usePatientList } from './patients-api.js';

export function PatientList({ query }: { query: string }) {
  const list = usePatientList(query);
  const patients = list.data?.pages.flatMap((page) => page.items) ?? [];

  // What a search found, said politely by a region that stays in place (one added together with its words is not
  // read): nothing before the first search, and the last words while the next one runs (its old rows still show).
  const [said, setSaid] = useState('');
  const searched = useRef(false);
  // Counted on the first page, so that Load more (which says what it added) does not make this speak again.
  const first = list.data?.pages[0];
  const words =
    list.isSuccess && !list.isPlaceholderData && first
      ? outcome(query, first.items.length, first.nextCursor !== null)
      : null;
  useEffect(() => {
    if (query) searched.current = true;
    if (words !== null && searched.current) setSaid(words);
  }, [query, words]);

  return (
    <>
      <p className="visually-hidden" role="status" data-testid="patient-search-status">
        {said}
      </p>
      <PatientTable query={query} list={list} patients={patients} />
    </>
  );
}

function PatientTable({
  query,
  list,
  patients,
}: {
  query: string;
  list: ReturnType<typeof usePatientList>;
  patients: Patient[];
}) {
  if (list.isPending) return <Loading label="Loading patients…" />;
  if (list.isError && !list.data) {
    const forbidden = list.error instanceof ApiError && list.error.status === 403;
    return (
      <ErrorNotice
        error={list.error}
        title={forbidden ? 'You cannot see patients here' : 'Could not load patients'}
        onRetry={forbidden ? undefined : () => list.refetch()}
        testId="patients-error"
      />
    );
  }

  const searching = list.isFetching && list.isPlaceholderData;

  if (patients.length === 0) {
    return query ? (
      <EmptyState title={`No patients match “${query}”.`}>Try a different name or MRN.</EmptyState>
    ) : (
      <EmptyState
        title="No patients yet"
        action={
          <Link to="/patients/new" className="button button-primary">
            Add the first patient
          </Link>
        }
      >
        Patients you add appear here.
      </EmptyState>
    );
  }

  return (
    <div className="table-wrap" aria-busy={searching || undefined}>
      {searching ? (
        <p className="table-status muted">
          <Spinner /> Searching…
        </p>
      ) : null}
      <table className="table" data-testid="patients-table">
        <caption className="visually-hidden">Patients{query ? ` matching “${query}”` : ''}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Date of birth</th>
            <th scope="col">MRN</th>
            <th scope="col" className="col-updated">
              Updated
            </th>
          </tr>
        </thead>
        <tbody>
          {patients.map((patient) => (
            <tr key={patient.id} data-testid="patient-row" data-patient-id={patient.id}>
              <th scope="row" className="cell-name">
                <Link
                  to="/patients/$patientId"
                  params={{ patientId: patient.id }}
                  data-testid="patient-name"
                  aria-label={recordLinkName(patient)}
                >
                  {patient.familyName}, {patient.givenName}
                </Link>
              </th>
              <td className="nowrap">{formatDate(patient.dateOfBirth)}</td>
              <td className="cell-mono nowrap">{patient.mrn ?? '—'}</td>
              <td className="muted col-updated nowrap">{formatDateTime(patient.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.isError ? <ErrorNotice error={list.error} title="Could not load more patients" /> : null}
      <LoadMore query={list} />
    </div>
  );
}

/** The words for a search's result, as the status region says them. */
function outcome(query: string, found: number, more: boolean): string {
  const count = `${found}${more ? ' or more' : ''} patient${found === 1 && !more ? '' : 's'}`;
  if (!query) return `${count} in all.`;
  const verb = found === 1 && !more ? 'matches' : 'match';
  return found === 0 ? `No patients match “${query}”.` : `${count} ${verb} “${query}”.`;
}

/**
 * Two patients can share a name: the link says whose record it opens by the birth date (else the record number,
 * spelled out: "MRN" in a link's name would also answer to the MRN field's label).
 */
function recordLinkName(patient: Patient): string {
  const which = patient.dateOfBirth
    ? `, born ${formatDate(patient.dateOfBirth)}`
    : patient.mrn
      ? `, medical record number ${patient.mrn}`
      : '';
  return `Open ${fullName(patient)}'s record${which}`;
}
