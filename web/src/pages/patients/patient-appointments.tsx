/**
 * The patient record's schedule: their appointments over the connected calendars, the next 60 days
 * first and then the last 60, each with its time, title, clinician, status and video link, and a way
 * into the calendar on that day. A series shows as its occurrences. A visit is upcoming until it ends
 * (one under way is upcoming, one that ended this morning is earlier); only those offer *Join video*.
 * Times and days are the calendar's display zone's (the clinic's when it has one).
 */
import { Link } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { type CalendarEvent, PROVIDER_LABEL, useCalendars, useEvents } from '../calendar/calendar-api.js';
import { addDays, clinicZoneNote, type DisplayZone, dateInput, shownTime } from '../calendar/time.js';
import { useDisplayZone } from '../calendar/use-display-zone.js';
import { useMembers } from '../messages/messages-api.js';

const DAYS = 60;

const STATUS: Record<CalendarEvent['status'], { label: string; tone: string } | null> = {
  confirmed: null,
  completed: { label: 'Completed', tone: 'status-ok' },
  cancelled: { label: 'Cancelled', tone: 'status-bad' },
};

const when = (e: CalendarEvent, shownZone: DisplayZone) => {
  const start = shownTime(e.start, e.allDay, shownZone.zone);
  const day = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' });
  if (e.allDay) return `${day.format(start)} · all day`;
  const time = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
  return `${day.format(start)} · ${time.format(start)}–${time.format(shownZone.shown(e.end))}`;
};

/** When a visit ends: an all-day one at the display zone's midnight after its last day (its end date is exclusive). */
const endsAt = (e: CalendarEvent, shownZone: DisplayZone) =>
  shownZone.instant(shownTime(e.end, e.allDay, shownZone.zone)).getTime();

/**
 * Whether the location is the meeting's own join link (Zoom writes it there, password and all): the card
 * offers *Join video* for that, so the link is not printed again as a place.
 */
function isJoinLink(location: string, joinUrls: (string | undefined)[]): boolean {
  const place = location.trim();
  const at = (url: string) => {
    try {
      const u = new URL(url);
      return `${u.host}${u.pathname.replace(/\/$/, '')}`;
    } catch {
      return null;
    }
  };
  const where = at(place);
  return joinUrls.some((url) => url !== undefined && (url === place || (where !== null && at(url) === where)));
}

function Appointment({
  event: e,
  hostName,
  upcoming,
}: {
  event: CalendarEvent;
  hostName: string | null;
  upcoming: boolean;
}) {
  const status = STATUS[e.status];
  const shownZone = useDisplayZone();
  // The call the patient's invitation names; Atrium's telehealth room when the visit has none.
  const join = e.conference?.joinUrl ?? e.telehealth?.joinUrl ?? null;
  const place =
    e.location && !isJoinLink(e.location, [e.conference?.joinUrl, e.telehealth?.joinUrl]) ? e.location : null;
  return (
    <li className="card item-card appointment-card" data-testid="appointment" data-status={e.status}>
      <div className="item-card-top">
        <strong>
          {when(e, shownZone)}
          {status ? <span className={`status-pill ${status.tone}`}>{status.label}</span> : null}
        </strong>
        <div className="inline-actions">
          {join && upcoming && e.status !== 'cancelled' ? (
            <a href={join} target="_blank" rel="noreferrer" className="button button-secondary button-small">
              Join video
            </a>
          ) : null}
          <Link
            to="/calendar"
            search={{ date: dateInput(shownTime(e.start, e.allDay, shownZone.zone)), view: 'day' }}
            className="button button-secondary button-small"
          >
            Open in calendar
          </Link>
        </div>
      </div>
      <p>
        {e.title}
        <span className="muted" data-testid="appointment-details">
          {e.recurringEventId ? ' · repeats' : ''}
          {hostName ? ` · with ${hostName}` : ''} · {PROVIDER_LABEL[e.provider] ?? e.provider} calendar
          {place ? ` · ${place}` : ''}
        </span>
      </p>
    </li>
  );
}

function Section({
  kind,
  items,
  status,
  names,
}: {
  kind: 'upcoming' | 'earlier';
  items: CalendarEvent[];
  status: { pending: boolean; done: boolean };
  names: Map<string, string>;
}) {
  const id = `appointments-${kind}`;
  return (
    <section aria-labelledby={id} className="appointments-window">
      <h2 id={id}>{kind === 'upcoming' ? 'Upcoming' : 'Earlier'}</h2>
      {status.pending ? <Loading label="Loading appointments…" /> : null}
      {status.done && items.length === 0 ? (
        <p className="muted">
          None in the {kind === 'earlier' ? 'last' : 'next'} {DAYS} days.
        </p>
      ) : null}
      {items.length > 0 ? (
        <ul className="card-list" data-testid={id}>
          {items.map((e) => (
            <Appointment
              key={e.id}
              event={e}
              hostName={e.hostUserId ? (names.get(e.hostUserId) ?? null) : null}
              upcoming={kind === 'upcoming'}
            />
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** The time now, again each minute, so a visit moves to Earlier once it has ended while the record is open. */
function useMinute(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

function Visits({ patientId, today, names }: { patientId: string; today: Date; names: Map<string, string> }) {
  const shownZone = useDisplayZone();
  // Windows of whole days (the display zone's), so repeat reads hit the cache; what is upcoming is decided by the
  // time now.
  const at = (d: Date) => shownZone.instant(d).toISOString();
  const next = useEvents(at(today), at(addDays(today, DAYS)), { patientId });
  const last = useEvents(at(addDays(today, -DAYS)), at(today), { patientId });
  const now = useMinute();
  const byId = new Map<string, CalendarEvent>();
  for (const e of [...(last.data?.items ?? []), ...(next.data?.items ?? [])]) byId.set(e.id, e);
  const all = [...byId.values()].sort(
    (a, b) =>
      shownTime(a.start, a.allDay, shownZone.zone).getTime() - shownTime(b.start, b.allDay, shownZone.zone).getTime(),
  );
  // Under way or still to come is upcoming; ended (this morning too) is earlier, newest first.
  const upcoming = all.filter((e) => endsAt(e, shownZone) > now);
  const earlier = all.filter((e) => endsAt(e, shownZone) <= now).reverse();
  const warned = new Set([...(next.data?.warnings ?? []), ...(last.data?.warnings ?? [])].map((w) => w.provider));
  const status = { pending: next.isPending || last.isPending, done: next.isSuccess && last.isSuccess };
  return (
    <>
      {next.isError ? <ErrorNotice error={next.error} onRetry={() => next.refetch()} /> : null}
      {last.isError && !next.isError ? <ErrorNotice error={last.error} onRetry={() => last.refetch()} /> : null}
      {warned.size > 0 ? (
        <p className="notice notice-info" role="status">
          {[...warned].map((p) => PROVIDER_LABEL[p] ?? p).join(' and ')} could not be read just now, so this list may be
          missing visits.
        </p>
      ) : null}
      <Section kind="upcoming" items={upcoming} status={status} names={names} />
      <Section kind="earlier" items={earlier} status={status} names={names} />
    </>
  );
}

export function PatientAppointments({ patientId }: { patientId: string }) {
  const calendars = useCalendars();
  const members = useMembers();
  const names = new Map((members.data?.items ?? []).map((m) => [m.userId, m.name]));
  // Today in the display zone, shown (time.ts).
  const shownZone = useDisplayZone();
  const today = shownZone.now();
  today.setHours(0, 0, 0, 0);
  const zoneNote = clinicZoneNote(shownZone);
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
      {zoneNote ? (
        <p className="muted" data-testid="appointments-zone">
          {zoneNote}.
        </p>
      ) : null}
      <Visits patientId={patientId} today={today} names={names} />
    </div>
  );
}
