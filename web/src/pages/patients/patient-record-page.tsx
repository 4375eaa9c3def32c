/**
 * One page per patient: header (name, birth date and age, MRN, break-glass) and tabs for
 * demographics, appointments, insurance coverage, authorizations, SOAP notes (patient-notes.tsx), claims and
 * (admins) the audit trail.
 * The tab is in the URL (`?tab=notes`), so a link or a reload lands on the same section.
 */

import { Link, useNavigate, useRouterState } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { Tab, TabList, TabPanel, Tabs } from 'react-aria-components';
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
import { Notes } from './patient-notes.js';
import { formatDate, formatDateTime, fullName, type Patient, usePatient, useUpdatePatient } from './patients-api.js';
import {
  type Authorization,
  type Claim,
  formatMoney,
  useAddAuthorization,
  useAdjudicateClaim,
  useAuthorizations,
  useBreakGlass,
  useClaims,
  useCoverage,
  usePatientAudit,
  useSaveCoverage,
  useSubmitClaim,
} from './record-api.js';
import { ScheduleSessionsDialog, type SessionUsage, useSessionUsage } from './schedule-sessions.js';

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
  const navigate = useNavigate();
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
      <Tabs
        selectedKey={selected}
        onSelectionChange={(key) =>
          void navigate({
            to: '/patients/$patientId',
            params: { patientId },
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
        <TabPanel id="demographics" className="tab-panel">
          <Demographics patient={p} />
        </TabPanel>
        <TabPanel id="appointments" className="tab-panel">
          <PatientAppointments patientId={p.id} />
        </TabPanel>
        <TabPanel id="coverage" className="tab-panel">
          <CoverageSection patientId={p.id} />
        </TabPanel>
        <TabPanel id="authorizations" className="tab-panel">
          <Authorizations patientId={p.id} />
        </TabPanel>
        <TabPanel id="notes" className="tab-panel">
          <Notes patientId={p.id} />
        </TabPanel>
        <TabPanel id="claims" className="tab-panel">
          <Claims patientId={p.id} isAdmin={isAdmin} />
        </TabPanel>
        {tabs.includes('messages') ? (
          <TabPanel id="messages" className="tab-panel">
            <PatientConversations patientId={p.id} />
          </TabPanel>
        ) : null}
        {isAdmin ? (
          <TabPanel id="audit" className="tab-panel">
            <AuditTrail patientId={p.id} />
          </TabPanel>
        ) : null}
      </Tabs>
    </section>
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
  const onSubmit = form.handleSubmit((values) => {
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
  return (
    <form className="form record-form" onSubmit={onSubmit} noValidate data-testid="demographics-form">
      <FormError message={form.formState.errors.root?.message} />
      <div className="form-row">
        <TextInput control={form.control} name="givenName" label="Given name" isRequired />
        <TextInput control={form.control} name="familyName" label="Family name" isRequired />
      </div>
      <div className="form-row">
        <TextInput
          control={form.control}
          name="dateOfBirth"
          label="Date of birth"
          description="YYYY-MM-DD"
          placeholder="1980-04-23"
        />
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

const coverageForm = z.object({
  payerName: z.string().trim().min(1, 'Enter the insurer').max(200),
  payerId: z.string().trim().min(1, 'Enter the payer id from the card').max(80),
  memberId: z.string().trim().min(1, 'Enter the member id').max(80),
  groupNumber: z.string().trim().max(80),
  planName: z.string().trim().max(200),
});

function CoverageSection({ patientId }: { patientId: string }) {
  const coverage = useCoverage(patientId);
  const save = useSaveCoverage(patientId);
  const [editing, setEditing] = useState(false);
  if (coverage.isPending) return <Loading label="Loading coverage…" />;
  if (coverage.isError) return <ErrorNotice error={coverage.error} onRetry={() => coverage.refetch()} />;
  const current = coverage.data;
  if (!editing && current) {
    return (
      <div className="record-section" data-testid="coverage">
        <dl className="facts">
          <dt>Insurer</dt>
          <dd>{current.payerName}</dd>
          <dt>Plan</dt>
          <dd>{current.planName ?? '—'}</dd>
          <dt>Payer id</dt>
          <dd className="cell-mono">{current.payerId}</dd>
          <dt>Member id</dt>
          <dd className="cell-mono">{current.memberId}</dd>
          <dt>Group</dt>
          <dd className="cell-mono">{current.groupNumber ?? '—'}</dd>
          <dt>On file since</dt>
          <dd>{formatDate(current.effectiveFrom)}</dd>
        </dl>
        <div>
          <Button variant="secondary" onPress={() => setEditing(true)} data-testid="edit-coverage">
            Change coverage
          </Button>
        </div>
      </div>
    );
  }
  if (!editing && !current) {
    return (
      <EmptyState
        title="No insurance on file"
        action={
          <Button variant="secondary" onPress={() => setEditing(true)} data-testid="edit-coverage">
            Add coverage
          </Button>
        }
      >
        Record the insurer and member id from the patient's card.
      </EmptyState>
    );
  }
  return (
    <CoverageForm
      initial={current}
      onCancel={() => setEditing(false)}
      onSave={async (values) => {
        await save.mutateAsync({
          payerName: values.payerName,
          payerId: values.payerId,
          memberId: values.memberId,
          ...(values.groupNumber ? { groupNumber: values.groupNumber } : {}),
          ...(values.planName ? { planName: values.planName } : {}),
        });
        notifySuccess('Coverage saved.');
        setEditing(false);
      }}
    />
  );
}

function CoverageForm({
  initial,
  onSave,
  onCancel,
}: {
  initial: {
    payerName: string;
    payerId: string;
    memberId: string;
    groupNumber: string | null;
    planName: string | null;
  } | null;
  onSave: (values: z.output<typeof coverageForm>) => Promise<void>;
  onCancel: () => void;
}) {
  const form = useZodForm(coverageForm, {
    defaultValues: {
      payerName: initial?.payerName ?? '',
      payerId: initial?.payerId ?? '',
      memberId: initial?.memberId ?? '',
      groupNumber: initial?.groupNumber ?? '',
      planName: initial?.planName ?? '',
    },
  });
  const onSubmit = form.handleSubmit((values) => onSave(values).catch((error) => applyProblem(form, error)));
  return (
    <form className="form record-form" onSubmit={onSubmit} noValidate data-testid="coverage-form">
      <FormError message={form.formState.errors.root?.message} />
      <div className="form-row">
        <TextInput control={form.control} name="payerName" label="Insurer" isRequired />
        <TextInput control={form.control} name="planName" label="Plan" />
      </div>
      <div className="form-row">
        <TextInput control={form.control} name="payerId" label="Payer id" isRequired />
        <TextInput control={form.control} name="memberId" label="Member id" isRequired />
        <TextInput control={form.control} name="groupNumber" label="Group number" />
      </div>
      <div className="form-actions">
        <Button variant="secondary" onPress={onCancel}>
          Cancel
        </Button>
        <Button type="submit" isDisabled={form.formState.isSubmitting}>
          {form.formState.isSubmitting ? 'Saving…' : 'Save coverage'}
        </Button>
      </div>
    </form>
  );
}

const authorizationForm = z
  .object({
    service: z.string().trim().min(1, 'Name the authorized service').max(100),
    units: z.coerce.number<string>().int('Whole units only').min(1, 'At least 1 unit').max(10_000),
    unitMinutes: z.coerce.number<string>().int('Whole minutes only').min(1).max(1440),
    validFrom: z.iso.date('Enter a date as YYYY-MM-DD'),
    validTo: z.iso.date('Enter a date as YYYY-MM-DD'),
  })
  .refine((v) => v.validFrom <= v.validTo, { path: ['validTo'], message: 'Ends before it starts' });

function Authorizations({ patientId }: { patientId: string }) {
  const list = useAuthorizations(patientId);
  const usage = useSessionUsage(patientId);
  const [adding, setAdding] = useState(false);
  if (list.isPending) return <Loading label="Loading authorizations…" />;
  if (list.isError) return <ErrorNotice error={list.error} onRetry={() => list.refetch()} />;
  return (
    <div className="record-section">
      <div className="section-actions">
        <Button variant="secondary" onPress={() => setAdding(true)} data-testid="add-authorization">
          Add authorization
        </Button>
      </div>
      {list.data.items.length === 0 ? (
        <EmptyState title="No authorizations">Units the insurer authorized appear here with what is left.</EmptyState>
      ) : (
        <ul className="card-list" data-testid="authorization-list">
          {list.data.items.map((a) => (
            <AuthorizationCard
              key={a.id}
              authorization={a}
              patientId={patientId}
              usage={usage.data?.items.find((u) => u.authorizationId === a.id)}
            />
          ))}
        </ul>
      )}
      <AddAuthorizationDialog patientId={patientId} isOpen={adding} onOpenChange={setAdding} />
    </div>
  );
}

function AuthorizationCard({
  authorization: a,
  patientId,
  usage,
}: {
  authorization: Authorization;
  patientId: string;
  usage?: SessionUsage;
}) {
  // Units count as used once booked as sessions (the calendar keeps the count); a cancelled future session gives its unit back.
  const used = usage?.unitsBooked ?? a.unitsUsed ?? 0;
  const remaining = Math.max(0, a.units - used);
  const [scheduling, setScheduling] = useState(false);
  const today = new Date().toISOString().slice(0, 10);
  const expired = a.validTo < today;
  return (
    <li className="card item-card" data-testid="authorization">
      <div className="item-card-top">
        <strong>{a.service}</strong>
        <span className={`status-pill ${expired ? 'status-muted' : 'status-ok'}`}>
          {expired ? 'Expired' : 'Active'}
        </span>
      </div>
      <meter
        className="units-meter"
        min={0}
        max={a.units}
        value={used}
        aria-label={`${used} of ${a.units} units used`}
      />
      <p>
        <strong data-testid="units-remaining">{remaining}</strong> of {a.units} units remaining ({used} used) ·{' '}
        {a.unitMinutes} min per unit
      </p>
      <p className="muted">
        Valid {formatDate(a.validFrom)} to {formatDate(a.validTo)}
        {usage?.sessions.length ? ` · next session ${nextSession(usage.sessions)}` : ''}
      </p>
      {!expired && remaining > 0 ? (
        <div className="section-actions">
          <Button variant="secondary" size="small" onPress={() => setScheduling(true)} data-testid="schedule-sessions">
            Schedule sessions
          </Button>
        </div>
      ) : null}
      {scheduling ? (
        <ScheduleSessionsDialog
          patientId={patientId}
          authorizationId={a.id}
          service={a.service}
          unitMinutes={a.unitMinutes}
          remaining={remaining}
          isOpen={scheduling}
          onOpenChange={setScheduling}
        />
      ) : null}
    </li>
  );
}

function nextSession(sessions: { start: string }[]): string {
  const next = sessions.find((s) => s.start > new Date().toISOString());
  return next
    ? new Date(next.start).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
    : 'none booked';
}

function AddAuthorizationDialog({
  patientId,
  isOpen,
  onOpenChange,
}: {
  patientId: string;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const add = useAddAuthorization(patientId);
  const form = useZodForm(authorizationForm, {
    defaultValues: { service: '', units: '12', unitMinutes: '15', validFrom: '', validTo: '' },
  });
  const onSubmit = form.handleSubmit((values) =>
    add
      .mutateAsync(values)
      .then(() => {
        notifySuccess(`Authorization for ${values.service} added.`);
        form.reset();
        onOpenChange(false);
      })
      .catch((error) => applyProblem(form, error)),
  );
  return (
    <AppDialog title="Add an authorization" isOpen={isOpen} onOpenChange={onOpenChange} testId="authorization-dialog">
      <form className="form" onSubmit={onSubmit} noValidate>
        <FormError message={form.formState.errors.root?.message} />
        <TextInput control={form.control} name="service" label="Service" isRequired placeholder="Physical therapy" />
        <div className="form-row">
          <TextInput control={form.control} name="units" label="Units" isRequired />
          <TextInput control={form.control} name="unitMinutes" label="Minutes per unit" isRequired />
        </div>
        <div className="form-row">
          <TextInput control={form.control} name="validFrom" label="Valid from" description="YYYY-MM-DD" isRequired />
          <TextInput control={form.control} name="validTo" label="Valid to" description="YYYY-MM-DD" isRequired />
        </div>
        <div className="form-actions">
          <Button type="submit" isDisabled={form.formState.isSubmitting}>
            Add authorization
          </Button>
        </div>
      </form>
    </AppDialog>
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
  serviceDate: z.union([z.literal(''), z.iso.date('Enter a date as YYYY-MM-DD')]),
});

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
        <form className="form" onSubmit={onSubmit} noValidate>
          <FormError message={form.formState.errors.root?.message} />
          <TextInput control={form.control} name="payer" label="Payer" isRequired />
          <div className="form-row">
            <TextInput control={form.control} name="amount" label="Amount (USD)" isRequired placeholder="125.00" />
            <TextInput control={form.control} name="serviceDate" label="Service date" description="YYYY-MM-DD" />
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
      <Button variant="danger" onPress={() => setOpen(true)} data-testid="break-glass">
        Break glass
      </Button>
      <AppDialog
        title="Emergency access"
        description={`Break-glass access to ${fullName(patient)}'s record is logged with your name and reason, and reviewed by your admins.`}
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
