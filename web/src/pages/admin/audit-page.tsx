/** The audit log (admins): filter by kind, person, patient and dates (kept in the URL); CSV export. */
import { Link, useNavigate } from '@tanstack/react-router';
import { useId } from 'react';
import { ApiError } from '../../api.js';
import { EmptyState, ErrorNotice, Loading, LoadMore } from '../../components/status.js';
import { DateInput } from '../../components/ui/date-input.js';
import { PatientPicker } from '../patients/patient-picker.js';
import { formatDateTime } from '../patients/patients-api.js';
import {
  AUDIT_KIND_LABELS,
  AUDIT_KINDS,
  type AuditFilter,
  auditCsvUrl,
  useAudit,
  useMembers,
  usePatientNames,
} from './admin-api.js';
import { auditActor, auditDetails } from './audit-words.js';

const ENTRIES = ['entry', 'entries'] as const;

export function AuditPage({ filter }: { filter: AuditFilter }) {
  const navigate = useNavigate();
  const audit = useAudit(filter, { enabled: !(filter.from && filter.to && filter.from > filter.to) });
  const members = useMembers();
  const names = new Map((members.data?.items ?? []).map((m) => [m.userId, m.name]));
  const ids = { kind: useId(), person: useId(), from: useId(), to: useId(), range: useId() };
  // A range that ends before it starts is said beside the dates, and not asked of the server.
  const backwards = Boolean(filter.from && filter.to && filter.from > filter.to);
  const set = (changes: Partial<AuditFilter>) => {
    const next = { ...filter, ...changes };
    for (const key of Object.keys(next) as (keyof AuditFilter)[]) if (!next[key]) delete next[key];
    void navigate({ to: '/admin/audit', search: next, replace: true });
  };
  // The server refused the filters themselves (a link carrying `from=yesterday`, an id that is none): asking again
  // cannot help, and the fields may not even show the value; say so and offer to clear them instead.
  const refused = audit.error instanceof ApiError && audit.error.status >= 400 && audit.error.status < 500;
  const exportable = !backwards && !refused;
  const rows = audit.data?.pages.flatMap((p) => p.items) ?? [];
  const patientNames = usePatientNames(rows.flatMap((r) => (typeof r.patientId === 'string' ? [r.patientId] : [])));
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title">Audit log</h1>
          <p className="muted">Every access to patient information, every skill call and every admin change.</p>
        </div>
        {exportable ? (
          <a
            className="button button-secondary"
            href={auditCsvUrl(filter)}
            download="audit.csv"
            data-testid="audit-csv"
          >
            Export CSV
          </a>
        ) : (
          // Not a link while the filters are refused: the download would be the refusal, saved as a failed file.
          <button
            type="button"
            className="button button-secondary"
            disabled
            data-disabled
            title="Fix the filters first"
            data-testid="audit-csv"
          >
            Export CSV
          </button>
        )}
      </header>
      <div className="card">
        <div className="toolbar filters" data-testid="audit-filters">
          <div className="field">
            <label htmlFor={ids.kind}>Kind</label>
            <select id={ids.kind} value={filter.kind ?? ''} onChange={(e) => set({ kind: e.target.value })}>
              <option value="">All kinds</option>
              {AUDIT_KINDS.map((k) => (
                <option key={k} value={k}>
                  {AUDIT_KIND_LABELS[k]}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.person}>Person</label>
            <select
              id={ids.person}
              value={filter.actorUserId ?? ''}
              onChange={(e) => set({ actorUserId: e.target.value })}
            >
              <option value="">Everyone</option>
              {(members.data?.items ?? []).map((m) => (
                <option key={m.userId} value={m.userId}>
                  {m.name}
                </option>
              ))}
            </select>
          </div>
          <PatientPicker
            patientId={filter.patientId}
            onChange={(patientId) => set({ patientId })}
            testId="audit-patient-filter"
            optionTestId="audit-patient-option"
          />
          <div className="field">
            <label htmlFor={ids.from}>From</label>
            <DateInput
              id={ids.from}
              value={filter.from ?? ''}
              onCommit={(from) => set({ from })}
              aria-invalid={backwards || undefined}
              aria-describedby={backwards ? ids.range : undefined}
              data-testid="audit-from"
            />
          </div>
          <div className="field">
            <label htmlFor={ids.to}>To</label>
            <DateInput
              id={ids.to}
              value={filter.to ?? ''}
              onCommit={(to) => set({ to })}
              aria-invalid={backwards || undefined}
              aria-describedby={backwards ? ids.range : undefined}
              data-testid="audit-to"
            />
          </div>
        </div>
        {backwards ? (
          <p className="field-error audit-range-error" id={ids.range} role="alert" data-testid="audit-range-error">
            From must be on or before To.
          </p>
        ) : null}
        {audit.isPending && !backwards ? <Loading label="Loading the audit log…" /> : null}
        {audit.isError && refused ? (
          <div className="notice notice-error" role="alert" data-testid="audit-filter-refused">
            <p className="notice-title">These filters cannot be used</p>
            <p>{unreadableFilters(filter)}</p>
            <button
              type="button"
              className="button button-secondary"
              onClick={() => void navigate({ to: '/admin/audit', search: {}, replace: true })}
            >
              Clear filters
            </button>
          </div>
        ) : null}
        {audit.isError && !refused ? <ErrorNotice error={audit.error} onRetry={() => audit.refetch()} /> : null}
        {audit.isSuccess && rows.length === 0 ? (
          <EmptyState title="Nothing matches">Change or clear the filters.</EmptyState>
        ) : null}
        {rows.length > 0 ? (
          <div className="table-wrap">
            <table className="table table-stack table-stack-rows" data-testid="audit-table">
              <caption className="visually-hidden">Audit log entries</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col">Patient</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.id} data-testid="audit-row" data-kind={row.kind}>
                    <td className="nowrap">{formatDateTime(row.at)}</td>
                    <td data-label="Who">{auditActor(row.actorUserId, names)}</td>
                    <td data-label="What">{AUDIT_KIND_LABELS[row.kind] ?? row.kind}</td>
                    <td data-testid="audit-patient" data-label="Patient">
                      <PatientCell patientId={row.patientId} names={patientNames} />
                    </td>
                    <td className="muted">{auditDetails(row, names)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {rows.length > 0 ? <LoadMore query={audit} noun={ENTRIES} /> : null}
      </div>
    </section>
  );
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Which filters of the link the fields cannot show (a From of `yesterday` shows as an empty field). */
function unreadableFilters(filter: AuditFilter): string {
  const named = [
    filter.from && !DAY.test(filter.from) ? `From “${filter.from}”` : null,
    filter.to && !DAY.test(filter.to) ? `To “${filter.to}”` : null,
    filter.kind && !AUDIT_KINDS.includes(filter.kind as (typeof AUDIT_KINDS)[number]) ? `Kind “${filter.kind}”` : null,
  ].filter(Boolean);
  return named.length
    ? `The link asks for ${named.join(' and ')}, which cannot be read as a filter. Clear the filters and choose them again.`
    : 'The filters in this link could not be read. Clear them and choose them again.';
}

function PatientCell({ patientId, names }: { patientId: unknown; names: Map<string, string> }) {
  if (typeof patientId !== 'string') return null;
  const name = names.get(patientId);
  if (!name) return <span className="muted">A patient</span>;
  return (
    <Link to="/patients/$patientId" params={{ patientId }}>
      {name}
    </Link>
  );
}
