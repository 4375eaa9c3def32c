/**
 * One page per patient: header (name, birth date and age, MRN, break-glass) and tabs for
 * demographics, appointments, insurance coverage, authorizations, SOAP notes (patient-notes.tsx), claims and
 * (admins) the audit trail.
 * The tab is in the URL (`?tab=notes`), so a link or a reload lands on the same section.
 */

import { Link, useNavigate, useRouterState } from '@tanstack/react-router';
import { type FormEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { Tab, TabList, TabPanel, type TabPanelRenderProps, Tabs } from 'react-aria-components';
import type { FieldValues, Path, UseFormReturn } from 'react-hook-form';
import { z } from 'zod';
import { patchPatientBody } from '../../../../src/modules/patients/schema.js';
import { ApiError } from '../../api.js';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog, ConfirmDialog } from '../../components/ui/dialog.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import { useMembers } from '../admin/admin-api.js';
import { AUDIT_KIND_LABELS, auditActor, auditDetails } from '../admin/audit-words.js';
import { PatientConversations } from '../inbox/patient-conversations.js';
import { PatientAppointments } from './patient-appointments.js';
import { Authorizations } from './patient-authorizations.js';
import { CoverageSection } from './patient-coverage.js';
import { Notes } from './patient-notes.js';
import { formatDate, formatDateTime, fullName, type Patient, usePatient, useUpdatePatient } from './patients-api.js';
import {
  type Claim,
  formatMoney,
  useAdjudicateClaim,
  useBreakGlass,
  useClaims,
  useCoverage,
  usePatientAudit,
  useSubmitClaim,
} from './record-api.js';

export const RECORD_TABS = [
  'demographics',
  'appointments',
  'coverage',
  'authorizations',
  'notes',
  'claims',
  'messages',
  'audit',
] as const;
export type RecordTab = (typeof RECORD_TABS)[number];

const TAB_LABELS: Record<RecordTab, string> = {
  demographics: 'Demographics',
  appointments: 'Appointments',
  coverage: 'Insurance',
  authorizations: 'Authorizations',
  notes: 'Notes',
  claims: 'Claims',
  messages: 'Messages',
  audit: 'Audit trail',
};

declare module '@tanstack/history' {
  interface HistoryState {
    /** Set by whoever opens a record in place of what had the focus (the new-patient form): the heading takes it. */
    focusHeading?: boolean;
  }
}

export function PatientRecordPage({ patientId, tab }: { patientId: string; tab: RecordTab }) {
  const me = useCurrentMe();
  const isAdmin = me.role === 'admin';
  const patient = usePatient(patientId);
  const focusHeading = useRouterState({ select: (s) => s.location.state.focusHeading === true });
  const heading = useRef<HTMLHeadingElement>(null);
  const loaded = patient.isSuccess;
  useEffect(() => {
    if (focusHeading && loaded) heading.current?.focus();
  }, [focusHeading, loaded]);

  if (patient.isPending) return <Loading label="Loading the patient…" />;
  if (patient.isError) {
    const missing = patient.error instanceof ApiError && patient.error.status === 404;
    return (
      <section className="page">
        <h1 id="page-title">Patient</h1>
        <ErrorNotice
          error={patient.error}
          title={missing ? 'This patient does not exist in this workspace' : 'Could not load the patient'}
          onRetry={missing ? undefined : () => patient.refetch()}
        />
        <Link to="/patients" className="button button-secondary">
          Back to patients
        </Link>
      </section>
    );
  }
  const p = patient.data;
  // The audit trail is for admins; channel messages come with Standard and above.
  const tabs = RECORD_TABS.filter(
    (t) => (t !== 'audit' || isAdmin) && (t !== 'messages' || me.workspace.tier !== 'free'),
  );
  const selected = tabs.includes(tab) ? tab : 'demographics';
  return (
    <section className="page patient-record" aria-labelledby="page-title" data-testid="patient-record">
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <Link to="/patients">Patients</Link>
        <span aria-hidden="true"> / </span>
        <span aria-current="page">{fullName(p)}</span>
      </nav>
      <header className="page-header record-header">
        <div>
          <h1 id="page-title" data-testid="record-name" ref={heading} tabIndex={-1}>
            {fullName(p)}
          </h1>
          <p className="record-facts muted">
            <span>
              Born {formatDate(p.dateOfBirth)}
              {p.dateOfBirth ? ` (${age(p.dateOfBirth)})` : ''}
            </span>
            <span>MRN {p.mrn ?? 'not set'}</span>
          </p>
        </div>
        <BreakGlass patient={p} />
      </header>
      <RecordTabs key={p.id} patient={p} tabs={tabs} selected={selected} isAdmin={isAdmin} />
    </section>
  );
}

/** A tab left hidden while another shows: display none (React Aria makes it inert, not invisible). */
const hiddenWhenInert = ({ isInert }: TabPanelRenderProps) => (isInert ? { display: 'none' } : undefined);

/**
 * The record's tabs. A tab once opened stays mounted (hidden) while this record is open, so a half-typed
 * coverage, demographics change, note or claim is still there on coming back from another tab (unmounting
 * dropped it without a word). Tabs never opened are not mounted, so opening a record reads only its first
 * tab; the key (the patient's id) starts afresh on another patient's record.
 */
function RecordTabs({
  patient: p,
  tabs,
  selected,
  isAdmin,
}: {
  patient: Patient;
  tabs: RecordTab[];
  selected: RecordTab;
  isAdmin: boolean;
}) {
  const navigate = useNavigate();
  const [opened, setOpened] = useState<ReadonlySet<RecordTab>>(() => new Set([selected]));
  if (!opened.has(selected)) setOpened(new Set([...opened, selected]));
  const panel = (id: RecordTab, content: ReactNode) =>
    tabs.includes(id) ? (
      <TabPanel id={id} className="tab-panel" shouldForceMount={opened.has(id)} style={hiddenWhenInert}>
        {content}
      </TabPanel>
    ) : null;
  return (
    <Tabs
      selectedKey={selected}
      onSelectionChange={(key) =>
        void navigate({
          to: '/patients/$patientId',
          params: { patientId: p.id },
          search: { tab: key as RecordTab },
          replace: true,
          resetScroll: false,
        })
      }
    >
      <TabList aria-label="Patient record sections" className="tab-list">
        {tabs.map((t) => (
          <Tab key={t} id={t} className="tab" data-testid={`tab-${t}`}>
            {TAB_LABELS[t]}
          </Tab>
        ))}
      </TabList>
      {panel('demographics', <Demographics patient={p} />)}
      {panel('appointments', <PatientAppointments patientId={p.id} />)}
      {panel('coverage', <CoverageSection patientId={p.id} />)}
      {panel('authorizations', <Authorizations patientId={p.id} />)}
      {panel('notes', <Notes patientId={p.id} />)}
      {panel('claims', <Claims patientId={p.id} isAdmin={isAdmin} />)}
      {panel('messages', <PatientConversations patientId={p.id} />)}
      {panel('audit', <AuditTrail patientId={p.id} />)}
    </Tabs>
  );
}

/** Age on the reader's own date (in UTC a baby born this morning in Auckland would be -1 years old). */
function age(dateOfBirth: string): string {
  const [y, m, d] = dateOfBirth.split('-').map(Number);
  const now = new Date();
  let years = now.getFullYear() - y;
  if (now.getMonth() + 1 < m || (now.getMonth() + 1 === m && now.getDate() < d)) years--;
  return `${years} year${years === 1 ? '' : 's'}`;
}

/** Edit-in-place form on the server's own PATCH schema (same rules and words as the API). */
const demographicsForm = z.object({
  givenName: z.string().trim().min(1, 'Enter the given name').max(200),
  familyName: z.string().trim().min(1, 'Enter the family name').max(200),
  dateOfBirth: z.union([z.literal(''), patchPatientBody.shape.dateOfBirth.unwrap().unwrap()]),
  mrn: z.string().trim().max(64, 'Keep the MRN to 64 characters or fewer'),
});

function Demographics({ patient }: { patient: Patient }) {
  const update = useUpdatePatient(patient.id);
  const defaults = {
    givenName: patient.givenName,
    familyName: patient.familyName,
    dateOfBirth: patient.dateOfBirth?.slice(0, 10) ?? '',
    mrn: patient.mrn ?? '',
  };
  const form = useZodForm(demographicsForm, { defaultValues: defaults });
  const save = form.handleSubmit((values) => {
    const changes: Record<string, string | null> = {};
    if (values.givenName !== defaults.givenName) changes.givenName = values.givenName;
    if (values.familyName !== defaults.familyName) changes.familyName = values.familyName;
    if (values.dateOfBirth !== defaults.dateOfBirth) changes.dateOfBirth = values.dateOfBirth || null;
    if (values.mrn !== defaults.mrn) changes.mrn = values.mrn || null;
    if (Object.keys(changes).length === 0) {
      notifySuccess('Nothing to save: no field changed.');
      return;
    }
    return update
      .mutateAsync(changes)
      .then((saved) => {
        notifySuccess(`Saved ${fullName(saved)}.`);
        form.reset({
          givenName: saved.givenName,
          familyName: saved.familyName,
          dateOfBirth: saved.dateOfBirth?.slice(0, 10) ?? '',
          mrn: saved.mrn ?? '',
        });
      })
      .catch((error) => applyProblem(form, error, { mrn_taken: 'mrn' }));
  });
  // A date typed only in part (03/14/yyyy) reads as empty: saving it would clear the birth date without a word.
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    refusedPartialDate(event, 'dateOfBirth', form) ? undefined : save(event);
  return (
    <form className="form record-form" onSubmit={onSubmit} noValidate data-testid="demographics-form">
      <FormError message={form.formState.errors.root?.message} />
      <div className="form-row">
        <TextInput control={form.control} name="givenName" label="Given name" isRequired />
        <TextInput control={form.control} name="familyName" label="Family name" isRequired />
      </div>
      <div className="form-row">
        {/* The browser's date field, as on the New patient form (typed and shown as the reader's locale writes dates). */}
        <TextInput control={form.control} name="dateOfBirth" label="Date of birth" type="date" />
        <TextInput control={form.control} name="mrn" label="MRN" description="Medical record number, unique here" />
      </div>
      <div className="form-actions">
        <Button type="submit" isDisabled={form.formState.isSubmitting || !form.formState.isDirty}>
          {form.formState.isSubmitting ? 'Saving…' : 'Save changes'}
        </Button>
      </div>
    </form>
  );
}

const claimForm = z.object({
  payer: z.string().trim().min(1, 'Enter the payer').max(200),
  amount: z
    .string()
    .trim()
    .regex(/^\d{1,7}(\.\d{1,2})?$/, 'Enter an amount like 125.00'),
  codes: z
    .string()
    .trim()
    .regex(
      /^([A-Za-z0-9.-]{1,16})?(\s*,\s*[A-Za-z0-9.-]{1,16})*$/,
      'Billing codes separated by commas, like 97110, 97140',
    ),
  serviceDate: z.union([z.literal(''), z.iso.date('Enter the whole date (month, day and year)')]),
});

/**
 * A browser date field typed only in part (03/14/yyyy) reads as empty, so a form would save "no date" without a
 * word: refused where it is, with the field focused. True when the submit was stopped.
 */
function refusedPartialDate<T extends FieldValues>(
  event: FormEvent<HTMLFormElement>,
  name: Path<T>,
  form: Pick<UseFormReturn<T>, 'setError' | 'setFocus'>,
): boolean {
  const date = event.currentTarget.elements.namedItem(name);
  if (!(date instanceof HTMLInputElement) || !date.validity.badInput) return false;
  event.preventDefault();
  form.setError(name, { type: 'manual', message: 'Enter the whole date (month, day and year)' });
  form.setFocus(name);
  return true;
}

function Claims({ patientId, isAdmin }: { patientId: string; isAdmin: boolean }) {
  const claims = useClaims(patientId);
  const coverage = useCoverage(patientId);
  const submit = useSubmitClaim(patientId);
  const [open, setOpen] = useState(false);
  const form = useZodForm(claimForm, { defaultValues: { payer: '', amount: '', codes: '', serviceDate: '' } });
  const openForm = () => {
    if (!form.getValues('payer') && coverage.data) form.setValue('payer', coverage.data.payerName);
    setOpen(true);
  };
  const onSubmit = form.handleSubmit((values) =>
    submit
      .mutateAsync({
        payer: values.payer,
        amountCents: Math.round(Number(values.amount) * 100),
        codes: values.codes
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean),
        ...(values.serviceDate ? { serviceDate: values.serviceDate } : {}),
      })
      .then(() => {
        notifySuccess('Claim submitted.');
        form.reset();
        setOpen(false);
      })
      .catch((error) => applyProblem(form, error, { invalid_amount: 'amount' })),
  );
  return (
    <div className="record-section">
      <div className="section-actions">
        <Button variant="secondary" onPress={openForm} data-testid="submit-claim">
          Submit a claim
        </Button>
      </div>
      <AppDialog title="Submit a claim" isOpen={open} onOpenChange={setOpen} testId="claim-dialog">
        <form
          className="form"
          onSubmit={(event) => (refusedPartialDate(event, 'serviceDate', form) ? undefined : onSubmit(event))}
          noValidate
        >
          <FormError message={form.formState.errors.root?.message} />
          <TextInput control={form.control} name="payer" label="Payer" isRequired />
          <div className="form-row">
            <TextInput control={form.control} name="amount" label="Amount (USD)" isRequired placeholder="125.00" />
            <TextInput control={form.control} name="serviceDate" label="Service date" type="date" />
          </div>
          <TextInput control={form.control} name="codes" label="Billing codes" description="Comma separated" />
          <div className="form-actions">
            <Button type="submit" isDisabled={form.formState.isSubmitting}>
              Submit claim
            </Button>
          </div>
        </form>
      </AppDialog>
      {claims.isPending ? <Loading label="Loading claims…" /> : null}
      {claims.isError ? <ErrorNotice error={claims.error} onRetry={() => claims.refetch()} /> : null}
      {claims.isSuccess && claims.data.items.length === 0 ? (
        <EmptyState title="No claims yet">Claims submitted for this patient and their outcome appear here.</EmptyState>
      ) : null}
      {claims.isSuccess && claims.data.items.length > 0 ? (
        <ul className="card-list" data-testid="claim-list">
          {claims.data.items.map((c) => (
            <ClaimCard key={c.id} claim={c} patientId={patientId} isAdmin={isAdmin} />
          ))}
        </ul>
      ) : null}
    </div>
  );
}

const CLAIM_STATUS: Record<Claim['status'], { label: string; tone: string }> = {
  submitted: { label: 'Awaiting payer', tone: 'status-warn' },
  paid: { label: 'Paid', tone: 'status-ok' },
  denied: { label: 'Denied', tone: 'status-bad' },
};

function ClaimCard({ claim: c, patientId, isAdmin }: { claim: Claim; patientId: string; isAdmin: boolean }) {
  const adjudicate = useAdjudicateClaim(patientId);
  // The payer's answer is recorded once (a second is refused): it is confirmed first.
  const [answer, setAnswer] = useState<'paid' | 'denied' | null>(null);
  const status = CLAIM_STATUS[c.status];
  return (
    <li className="card item-card" data-testid="claim" data-status={c.status}>
      <div className="item-card-top">
        <strong>
          {c.payer} · {formatMoney(c.amountCents)}
        </strong>
        <span className={`status-pill ${status.tone}`} data-testid="claim-status">
          {status.label}
        </span>
      </div>
      <p className="muted">
        {c.serviceDate ? `Service ${formatDate(c.serviceDate)} · ` : ''}Submitted {formatDateTime(c.submittedAt)}
        {c.codes.length ? ` · Codes ${c.codes.join(', ')}` : ''}
      </p>
      {c.status === 'paid' && c.paidAmountCents !== null ? <p>Paid {formatMoney(c.paidAmountCents)}</p> : null}
      {c.status === 'denied' && c.denialReason ? <p>Reason: {c.denialReason}</p> : null}
      {isAdmin && c.status === 'submitted' ? (
        <div className="inline-actions">
          <span className="muted">Record the payer's answer:</span>
          <Button
            size="small"
            variant="secondary"
            isDisabled={adjudicate.isPending}
            onPress={() => setAnswer('paid')}
            data-testid="claim-paid"
          >
            Paid
          </Button>
          <Button
            size="small"
            variant="secondary"
            isDisabled={adjudicate.isPending}
            onPress={() => setAnswer('denied')}
            data-testid="claim-denied"
          >
            Denied
          </Button>
        </div>
      ) : null}
      {adjudicate.isError ? <ErrorNotice error={adjudicate.error} /> : null}
      <ConfirmDialog
        title={answer === 'paid' ? `Mark this claim paid (${formatMoney(c.amountCents)})?` : 'Mark this claim denied?'}
        description="The payer's answer is recorded once; it cannot be changed afterwards."
        confirmLabel={answer === 'paid' ? 'Mark paid' : 'Mark denied'}
        isOpen={answer !== null}
        onOpenChange={(open) => {
          if (!open) setAnswer(null);
        }}
        pending={adjudicate.isPending}
        confirmTestId="confirm-claim-answer"
        onConfirm={() =>
          adjudicate.mutate(
            answer === 'paid'
              ? { claimId: c.id, outcome: 'paid', paidAmountCents: c.amountCents }
              : { claimId: c.id, outcome: 'denied', reason: 'Denied by payer' },
            {
              onSuccess: () => {
                notifySuccess(answer === 'paid' ? 'Claim marked paid.' : 'Claim marked denied.');
                setAnswer(null);
              },
            },
          )
        }
      />
    </li>
  );
}

function AuditTrail({ patientId }: { patientId: string }) {
  const audit = usePatientAudit(patientId, true);
  const members = useMembers();
  const names = new Map((members.data?.items ?? []).map((m) => [m.userId, m.name]));
  if (audit.isPending) return <Loading label="Loading the audit trail…" />;
  if (audit.isError) return <ErrorNotice error={audit.error} onRetry={() => audit.refetch()} />;
  if (audit.data.items.length === 0) {
    return (
      <EmptyState title="Nothing recorded yet">Every access to this patient's information is listed here.</EmptyState>
    );
  }
  return (
    <div className="table-wrap">
      <table className="table" data-testid="patient-audit">
        <caption className="visually-hidden">Audit trail for this patient</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Who</th>
            <th scope="col">What</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {audit.data.items.map((row) => (
            <tr key={row.id} data-testid="audit-row">
              <td className="nowrap">{formatDateTime(row.at)}</td>
              <td data-testid="audit-who">{auditActor(row.actorUserId, names)}</td>
              <td>{AUDIT_KIND_LABELS[row.kind] ?? row.kind}</td>
              <td className="muted">{auditDetails(row, names)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function BreakGlass({ patient }: { patient: Patient }) {
  const breakGlass = useBreakGlass(patient.id);
  const [open, setOpen] = useState(false);
  const form = useZodForm(
    z.object({ reason: z.string().trim().min(10, 'Give a reason of at least 10 characters').max(1000) }),
    { defaultValues: { reason: '' } },
  );
  const onSubmit = form.handleSubmit((values) =>
    breakGlass
      .mutateAsync(values.reason)
      .then(() => {
        notifySuccess('Emergency access granted and recorded in the audit log.');
        form.reset();
        setOpen(false);
      })
      .catch((error) => applyProblem(form, error)),
  );
  return (
    <>
      {/* Every member may read every record here (none is restricted): this is a declaration for the audit, not a
          key, so it is a quiet secondary action rather than a red button on every record. */}
      <Button variant="secondary" size="small" onPress={() => setOpen(true)} data-testid="break-glass">
        Emergency access…
      </Button>
      <AppDialog
        title="Emergency access"
        description={`For opening ${fullName(patient)}'s record outside your usual care of them, in an emergency ("break glass"): your name, the time and your reason go to the audit log, and the workspace's admins are e-mailed.`}
        isOpen={open}
        onOpenChange={setOpen}
        role="alertdialog"
        testId="break-glass-dialog"
      >
        <form className="form" onSubmit={onSubmit} noValidate>
          <FormError message={form.formState.errors.root?.message} />
          <TextInput control={form.control} name="reason" label="Reason" multiline rows={3} isRequired />
          <div className="form-actions">
            <Button variant="secondary" onPress={() => setOpen(false)}>
              Cancel
            </Button>
            <Button
              variant="danger"
              type="submit"
              isDisabled={form.formState.isSubmitting}
              data-testid="confirm-break-glass"
            >
              Record and open
            </Button>
          </div>
        </form>
      </AppDialog>
    </>
  );
}
