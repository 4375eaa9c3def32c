/**
 * Sessions from an authorization: units booked and remaining (from the calendar), and a dialog that
 * books the remaining units as one repeating series on a chosen calendar (contract §5.2).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { ApiError, api, apiRequest, describeError, idempotencyKey } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog } from '../../components/ui/dialog.js';
import { notifySuccess } from '../../components/ui/toast.js';
import type { CalendarInfo } from '../calendar/calendar-api.js';
import { clinicZoneNote, dateInput, fromInputs } from '../calendar/time.js';
import { useDisplayZone } from '../calendar/use-display-zone.js';

export interface SessionUsage {
  authorizationId: string;
  units: number;
  unitsBooked: number;
  unitsRemaining: number;
  sessions: { start: string; end: string; units: number }[];
}

export const useSessionUsage = (patientId: string) =>
  useQuery({
    queryKey: ['calendar', 'sessions', patientId],
    queryFn: () => api.get<{ items: SessionUsage[] }>('/calendar/sessions', { patientId }),
  });

const FRIENDLY: Record<string, string> = {
  units_exhausted: 'No authorized units are left to book.',
  authorization_expired: 'This authorization has ended; sessions cannot be booked on it.',
  scheduling_conflict:
    'The first session overlaps another appointment of the patient or the provider. Choose another time.',
  reauth_required: 'That calendar needs its owner to sign in again (Calendar page → Reconnect).',
};

export function ScheduleSessionsDialog({
  patientId,
  authorizationId,
  service,
  unitMinutes,
  remaining,
  isOpen,
  onOpenChange,
}: {
  patientId: string;
  authorizationId: string;
  service: string;
  unitMinutes: number;
  remaining: number;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const ids = { calendar: useId(), date: useId(), time: useId(), zone: useId(), frequency: useId(), units: useId() };
  const client = useQueryClient();
  const calendars = useQuery({
    queryKey: ['calendar', 'calendars'],
    queryFn: () => api.get<{ items: CalendarInfo[] }>('/calendar/calendars'),
    enabled: isOpen,
  });
  // The first session's date and time are the calendar's display zone's (the clinic's when it has one).
  const shownZone = useDisplayZone();
  const tomorrow = shownZone.shown(Date.now() + 24 * 3600_000);
  const [calendar, setCalendar] = useState('');
  const [date, setDate] = useState(dateInput(tomorrow));
  const [time, setTime] = useState('10:00');
  const [frequency, setFrequency] = useState<'weekly' | 'daily'>('weekly');
  const [unitsPerSession, setUnitsPerSession] = useState(1);
  const [problem, setProblem] = useState<string | null>(null);
  const book = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      apiRequest<{ sessions: unknown[]; unitsBooked: number; unitsRemaining: number }>(
        '/calendar/sessions/from-authorization',
        {
          method: 'POST',
          body,
          headers: { 'Idempotency-Key': idempotencyKey() },
        },
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ['calendar'] }),
  });
  const chosen = calendar || calendars.data?.items.find((c) => c.primary)?.id || calendars.data?.items[0]?.id || '';
  // On a device in another zone, "10:00" is the clinic's 10:00: said under the fields.
  const firstShown = fromInputs(date, time);
  const zoneNote = clinicZoneNote(shownZone, firstShown ? shownZone.instant(firstShown) : Date.now());

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const first = fromInputs(date, time);
    if (!first) return setProblem('Choose the first session’s date and time.');
    if (!chosen) return setProblem('Connect a calendar first (Calendar page).');
    setProblem(null);
    book.mutate(
      {
        patientId,
        authorizationId,
        calendar: chosen,
        firstStart: shownZone.instant(first).toISOString(),
        timeZone: shownZone.zone,
        frequency,
        unitsPerSession,
      },
      {
        onSuccess: (result) => {
          notifySuccess(
            `Booked ${result.sessions.length} sessions`,
            `${result.unitsRemaining} units left on this authorization.`,
          );
          onOpenChange(false);
        },
        onError: (error) =>
          setProblem(error instanceof ApiError && FRIENDLY[error.code] ? FRIENDLY[error.code] : describeError(error)),
      },
    );
  };

  return (
    <AppDialog
      title={`Schedule sessions: ${service}`}
      description={`Books up to ${Math.floor(remaining / unitsPerSession)} sessions of ${unitsPerSession * unitMinutes} minutes from the ${remaining} remaining units, never past the authorization's end.`}
      isOpen={isOpen}
      onOpenChange={onOpenChange}
      testId="schedule-sessions-dialog"
    >
      <form className="form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={ids.calendar}>Calendar</label>
          <select
            id={ids.calendar}
            value={chosen}
            onChange={(e) => setCalendar(e.target.value)}
            data-testid="sessions-calendar"
          >
            {(calendars.data?.items ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.accountEmail} · {c.provider === 'google' ? 'Google' : 'Microsoft'}
              </option>
            ))}
          </select>
        </div>
        <div className="form-row">
          <div className="field">
            <label htmlFor={ids.date}>First session</label>
            <input
              id={ids.date}
              type="date"
              value={date}
              onChange={(e) => setDate(e.target.value)}
              aria-describedby={zoneNote ? ids.zone : undefined}
              data-testid="sessions-date"
            />
          </div>
          <div className="field">
            <label htmlFor={ids.time}>At</label>
            <input
              id={ids.time}
              type="time"
              value={time}
              onChange={(e) => setTime(e.target.value)}
              aria-describedby={zoneNote ? ids.zone : undefined}
              data-testid="sessions-time"
            />
          </div>
        </div>
        {zoneNote ? (
          <p className="field-hint" id={ids.zone} data-testid="sessions-zone">
            {zoneNote}
          </p>
        ) : null}
        <div className="form-row">
          <div className="field">
            <label htmlFor={ids.frequency}>Repeat</label>
            <select
              id={ids.frequency}
              value={frequency}
              onChange={(e) => setFrequency(e.target.value as 'weekly' | 'daily')}
            >
              <option value="weekly">Every week</option>
              <option value="daily">Every day</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.units}>Units per session</label>
            <input
              id={ids.units}
              type="number"
              min={1}
              max={Math.max(1, remaining)}
              value={unitsPerSession}
              onChange={(e) => setUnitsPerSession(Math.max(1, Number(e.target.value) || 1))}
            />
          </div>
        </div>
        {problem ? (
          <p className="field-error" role="alert" data-testid="sessions-error">
            {problem}
          </p>
        ) : null}
        <div className="form-actions">
          <Button variant="secondary" onPress={() => onOpenChange(false)}>
            Cancel
          </Button>
          <Button type="submit" isDisabled={book.isPending || remaining < unitsPerSession} data-testid="sessions-book">
            {book.isPending ? 'Booking…' : 'Book sessions'}
          </Button>
        </div>
      </form>
    </AppDialog>
  );
}
