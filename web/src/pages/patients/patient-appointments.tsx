/**
 * The patient record's schedule: their appointments over the connected calendars, the next 60 days
 * first and then the last 60, each with its time, title, clinician, status and video link, and a way
 * into the calendar on that day. A series shows as its occurrences.
 */
import { Link } from '@tanstack/react-router';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { type CalendarEvent, PROVIDER_LABEL, useCalendars, useEvents } from '../calendar/calendar-api.js';
import { addDays, dateInput, shownTime } from '../calendar/time.js';
import { useMembers } from '../messages/messages-api.js';

const DAYS = 60;

const STATUS: Record<CalendarEvent['status'], { label: string; tone: string } | null> = {
  confirmed: null,
  completed: { label: 'Completed', tone: 'status-ok' },
  cancelled: { label: 'Cancelled', tone: 'status-bad' },
};

const when = (e: CalendarEvent) => {
  const start = shownTime(e.start, e.allDay);
  const day = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' });
  if (e.allDay) return `${day.format(start)} · all day`;
  const time = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
  return `${day.format(start)} · ${time.format(start)}–${time.format(new Date(e.end))}`;
};

function Appointment({ event: e, hostName }: { event: CalendarEvent; hostName: string | null }) {
  const status = STATUS[e.status];
  // The call the patient's invitation names; Atrium's telehealth room when the visit has none.
  const join = e.conference?.joinUrl ?? e.telehealth?.joinUrl ?? null;
  return (
    <li className="card item-card appointment-card" data-testid="appointment" data-status={e.status}>
      <div className="item-card-top">
        <strong>
          {when(e)}
          {status ? <span className={`status-pill ${status.tone}`}>{status.label}</span> : null}
        </strong>
        <div className="inline-actions">
          {join && e.status !== 'cancelled' ? (
            <a href={join} target="_blank" rel="noreferrer" className="button button-secondary button-small">
              Join video
            </a>
          ) : null}
          <Link
            to="/calendar"
            search={{ date: dateInput(shownTime(e.start, e.allDay)), view: 'day' }}
            className="button button-secondary button-small"
          >
            Open in calendar
          </Link>
        </div>
      </div>
      <p>
        {e.title}
        <span className="muted">
          {e.recurringEventId ? ' · repeats' : ''}
          {hostName ? ` · with ${hostName}` : ''} · {PROVIDER_LABEL[e.provider] ?? e.provider} calendar
          {e.location ? ` · ${e.location}` : ''}
        </span>
      </p>
    </li>
  );
}

function Window({
  patientId,
  from,
  to,
  title,
  newestFirst,
  names,
}: {
  patientId: string;
  from: Date;
  to: Date;
  title: string;
  newestFirst?: boolean;
  names: Map<string, string>;
}) {
  const list = useEvents(from.toISOString(), to.toISOString(), { patientId });
  const items = [...(list.data?.items ?? [])];
  if (newestFirst) items.reverse();
  const id = `appointments-${newestFirst ? 'earlier' : 'upcoming'}`;
  return (
    <section aria-labelledby={id} className="appointments-window">
      <h2 id={id}>{title}</h2>
      {list.isPending ? <Loading label="Loading appointments…" /> : null}
      {list.isError ? <ErrorNotice error={list.error} onRetry={() => list.refetch()} /> : null}
      {list.data?.warnings.length ? (
        <p className="notice notice-info" role="status">
          {list.data.warnings.map((w) => PROVIDER_LABEL[w.provider] ?? w.provider).join(' and ')} could not be read just
          now, so this list may be missing visits.
        </p>
      ) : null}
      {list.isSuccess && items.length === 0 ? (
        <p className="muted">
          None in the {newestFirst ? 'last' : 'next'} {DAYS} days.
        </p>
      ) : null}
      {items.length > 0 ? (
        <ul className="card-list" data-testid={id}>
          {items.map((e) => (
            <Appointment key={e.id} event={e} hostName={e.hostUserId ? (names.get(e.hostUserId) ?? null) : null} />
          ))}
        </ul>
      ) : null}
    </section>
  );
}

export function PatientAppointments({ patientId }: { patientId: string }) {
  const calendars = useCalendars();
  const members = useMembers();
  const names = new Map((members.data?.items ?? []).map((m) => [m.userId, m.name]));
  // Windows of whole local days, so the two lists meet at midnight and repeat reads hit the cache.
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  // Without a connected calendar there is nothing to read (and "none" would say something untrue).
  if (calendars.isSuccess && calendars.data.items.length === 0) {
    return (
      <div className="record-section" data-testid="patient-appointments">
        <EmptyState title="No calendars connected">
          Visits are read from the clinic's Google or Microsoft calendars.{' '}
          <Link to="/calendar">Connect a calendar</Link> to book this patient and see their visits here.
        </EmptyState>
      </div>
    );
  }
  return (
    <div className="record-section" data-testid="patient-appointments">
      <div className="section-actions">
        <Link
          to="/calendar"
          search={{ date: dateInput(today), patient: patientId }}
          className="button"
          data-testid="book-visit"
        >
          Book a visit
        </Link>
      </div>
      <Window patientId={patientId} from={today} to={addDays(today, DAYS)} title="Upcoming" names={names} />
      <Window patientId={patientId} from={addDays(today, -DAYS)} to={today} title="Earlier" newestFirst names={names} />
    </div>
  );
}
