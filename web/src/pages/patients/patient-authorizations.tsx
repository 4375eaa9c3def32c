/**
 * The record's Authorizations tab: the units the insurer authorized, with what is used (booked as calendar
 * sessions) and left, the next session, and a way to schedule sessions from the units left.
 */
import { useState } from 'react';
import { z } from 'zod';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { applyProblem, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { type DisplayZone, dateInput, describeZone } from '../calendar/time.js';
import { useDisplayZone } from '../calendar/use-display-zone.js';
import { formatDate } from './patients-api.js';
import { type Authorization, useAddAuthorization, useAuthorizations } from './record-api.js';
import { ScheduleSessionsDialog, type SessionUsage, useSessionUsage } from './schedule-sessions.js';

const authorizationForm = z
  .object({
    service: z.string().trim().min(1, 'Name the authorized service').max(100),
    units: z.coerce.number<string>().int('Whole units only').min(1, 'At least 1 unit').max(10_000),
    unitMinutes: z.coerce.number<string>().int('Whole minutes only').min(1).max(1440),
    validFrom: z.iso.date('Enter the whole date (month, day and year)'),
    validTo: z.iso.date('Enter the whole date (month, day and year)'),
  })
  .refine((v) => v.validFrom <= v.validTo, { path: ['validTo'], message: 'Ends before it starts' });

/**
 * A service as people read it: an authorization recorded by code (the demo's and the skills'
 * `physical-therapy`) reads "Physical therapy"; one typed as words keeps them, its first letter capital.
 */
export function serviceLabel(service: string): string {
  const words = service.replace(/[-_]+/g, ' ').replace(/\s+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function Authorizations({ patientId }: { patientId: string }) {
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
  const shownZone = useDisplayZone();
  // Valid through its last day at the clinic (the display zone's today), not the UTC date: in New York that is
  // already tomorrow from 7 PM.
  const today = dateInput(shownZone.now());
  const expired = a.validTo < today;
  return (
    <li className="card item-card" data-testid="authorization">
      <div className="item-card-top">
        <strong data-testid="authorization-service">{serviceLabel(a.service)}</strong>
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
        {usage?.sessions.length ? ` · next session ${nextSession(usage.sessions, shownZone)}` : ''}
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
          service={serviceLabel(a.service)}
          unitMinutes={a.unitMinutes}
          remaining={remaining}
          isOpen={scheduling}
          onOpenChange={setScheduling}
        />
      ) : null}
    </li>
  );
}

/**
 * The next session's day and time as the calendar shows them (its display zone: the clinic's when it has one), and
 * the zone's name when that is the clinic's and this device is on another.
 */
function nextSession(sessions: { start: string }[], shownZone: DisplayZone): string {
  const next = sessions.find((s) => s.start > new Date().toISOString());
  if (!next) return 'none booked';
  const when = shownZone.shown(next.start).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return shownZone.clinic ? `${when}, ${describeZone(shownZone.zone, Date.parse(next.start))}` : when;
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
          {/* The browser's date field, as for a birth date (typed and shown as the reader's locale writes dates). */}
          <TextInput control={form.control} name="validFrom" label="Valid from" type="date" isRequired />
          <TextInput control={form.control} name="validTo" label="Valid to" type="date" isRequired />
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
