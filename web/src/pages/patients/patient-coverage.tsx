/**
 * The record's Insurance tab: the coverage on file today (the reader's own date: a US evening is already
 * tomorrow in UTC) and a form to add or change it, from today, keeping the history (PUT /patients/:id/coverage).
 */
import { useState } from 'react';
import { z } from 'zod';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { formatDate } from './patients-api.js';
import { useCoverage, useSaveCoverage } from './record-api.js';

const coverageForm = z.object({
  payerName: z.string().trim().min(1, 'Enter the insurer').max(200),
  payerId: z.string().trim().min(1, 'Enter the payer id from the card').max(80),
  memberId: z.string().trim().min(1, 'Enter the member id').max(80),
  groupNumber: z.string().trim().max(80),
  planName: z.string().trim().max(200),
});

export function CoverageSection({ patientId }: { patientId: string }) {
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
