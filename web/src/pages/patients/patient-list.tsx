/** The patient table for one search, with loading, empty, error states and "Load more". */

import { Link } from '@tanstack/react-router';
import { ApiError } from '../../api.js';
import { EmptyState, ErrorNotice, Loading, LoadMore, Spinner } from '../../components/status.js';
import { formatDate, formatDateTime, fullName, usePatientList } from './patients-api.js';

export function PatientList({ query }: { query: string }) {
  const list = usePatientList(query);

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

  const patients = list.data.pages.flatMap((page) => page.items);
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
        <p className="table-status muted" role="status">
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
                  aria-label={`Open ${fullName(patient)}'s record`}
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
