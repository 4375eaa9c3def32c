/**
 * The week over every connected calendar (FullCalendar's time grid; a day list on a phone):
 * colour per calendar with a legend, today line, time-zone label, previous/next/today, drag or
 * click an empty slot to create, open an event to edit or delete it in place, banners for
 * failing providers and for connections that need signing in again.
 */
import type { DateSelectArg, EventClickArg, EventContentArg, EventDropArg, EventInput } from '@fullcalendar/core';
import interactionPlugin, { type DateClickArg, type EventResizeDoneArg } from '@fullcalendar/interaction';
import listPlugin from '@fullcalendar/list';
import FullCalendar from '@fullcalendar/react';
import timeGridPlugin from '@fullcalendar/timegrid';
import { Link, useNavigate } from '@tanstack/react-router';
import { type CSSProperties, useEffect, useMemo, useRef, useState } from 'react';
import { ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { DateInput } from '../../components/ui/date-input.js';
import { Check } from '../../components/ui/form.js';
import { notifyError, notifySuccess } from '../../components/ui/toast.js';
import { usePhone } from '../../components/use-phone.js';
import { useCurrentMe } from '../../me-context.js';
import { usePatientName } from '../patients/patients-api.js';
import {
  type CalendarEvent,
  CONFERENCE_LABEL,
  colorOf,
  PROVIDER_LABEL,
  ROOM_POLL_FOR_MS,
  useCalendars,
  useCapabilities,
  useConnect,
  useConnections,
  useDay,
  useEvents,
  usePatchEvent,
} from './calendar-api.js';
import { ConnectionsPanel } from './connections-panel.js';
import { EventDialog, type EventDialogState, messageOf } from './event-dialog.js';
import { useKeepEventFocus } from './keep-event-focus.js';
import { TasksSidebar } from './tasks-sidebar.js';
import {
  addDays,
  type DisplayZone,
  dateInput,
  describeWhen,
  describeZone,
  formatDay,
  formatRange,
  mondayOf,
  parseDateParam,
} from './time.js';
import { useDisplayZone } from './use-display-zone.js';
import './calendar.css';

const WARNING_WORDS: Record<string, string> = {
  reauth_required: 'needs you to sign in again',
  rate_limited: 'is asking us to slow down',
  provider_timeout: 'did not answer in time',
};

/** The whole of an event in words, for its accessible name: when, what, and what kind of visit. */
function describeEvent(e: CalendarEvent, start: Date | null, end: Date | null, where?: string): string {
  return [
    start ? describeWhen(start, end, e.allDay) : '',
    e.title || '(no title)',
    e.conference ? `${CONFERENCE_LABEL[e.conference.product] ?? 'video'} call` : '',
    e.patientId ? 'patient visit' : '',
    e.status === 'completed' ? 'completed' : '',
    where ?? '',
  ]
    .filter(Boolean)
    .join(', ');
}

const CONFERENCE_TAG: Record<string, string> = { meet: 'Meet', teams: 'Teams', zoom: 'Zoom' };

function EventChip({ arg, where }: { arg: EventContentArg; where?: string }) {
  const e = arg.event.extendedProps.source as CalendarEvent | undefined;
  // The placeholder drawn while a slot is being selected has no event behind it.
  if (!e) return <span className="event-chip">{arg.timeText}</span>;
  const list = arg.view.type.startsWith('list');
  // The tags, each with the words the tooltip says it in.
  const tags = [
    e.conference
      ? {
          tag: CONFERENCE_TAG[e.conference.product] ?? 'Video',
          says: `${CONFERENCE_LABEL[e.conference.product] ?? 'video'} call`,
        }
      : null,
    e.patientId ? { tag: 'Patient', says: 'patient visit' } : null,
  ].filter((t) => t !== null);
  // As many lines as the event is tall: a 30-minute slot is 2.25 × the calendar's 0.875rem, less
  // about 0.25rem for the gap under the event and its padding; a line is 1.1 × the chip's 0.75rem.
  // (30 minutes: 2 lines, 45: 3, an hour: 4.)
  const minutes = ((arg.event.end?.getTime() ?? 0) - (arg.event.start?.getTime() ?? 0)) / 60_000;
  const lines = Math.max(1, Math.floor(((minutes / 30) * 2.25 * 0.875 - 0.25) / (0.75 * 1.1)));
  // The tags take a line of their own under the title, kept to at least two lines: an event too low
  // for that (under 45 minutes) leaves them out, and says them in its tooltip and its accessible name.
  const tagsShown = tags.length > 0 && (list || lines >= 3);
  const titleLines = tagsShown ? lines - 1 : lines;
  const whole = [arg.timeText, e.title || '(no title)', ...tags.map((t) => `· ${t.says}`)].filter(Boolean).join(' ');
  // The chip's text is cut to fit and runs together ("1:30Morning huddle"): screen readers get the
  // whole sentence instead, the visible bits are hidden from them.
  const name = describeEvent(e, arg.event.start, arg.event.end, where);
  const shown = (
    <>
      <span className="visually-hidden">{name}</span>
      {/* The start and the title are one text, cut to the lines there are (no line of it runs out of the event). */}
      <span className="event-chip-title" aria-hidden="true">
        {arg.timeText ? <span className="event-chip-time">{arg.timeText}</span> : null}
        {e.title || '(no title)'}
      </span>
      {tagsShown ? (
        <span className="event-chip-tags" aria-hidden="true">
          {tags.map(({ tag }) => (
            <span key={tag} className="event-chip-tag">
              {tag}
            </span>
          ))}
        </span>
      ) : null}
    </>
  );
  // The day list draws an event as a table row, which FullCalendar makes no control of once the
  // content is ours: a real button in it opens the event (its click reaches FullCalendar's eventClick).
  if (list) {
    return (
      <button type="button" className="event-chip event-chip-button" data-event-id={e.id}>
        {shown}
        {/* All locations on a phone: which clinic, in words (the colour alone says it to no one who cannot see it). */}
        {where ? (
          <span className="event-chip-where muted" aria-hidden="true" data-testid="event-location-name">
            {where}
          </span>
        ) : null}
      </button>
    );
  }
  return (
    <span
      className="event-chip"
      title={whole}
      style={{ '--chip-lines': titleLines } as CSSProperties}
      data-event-id={e.id}
    >
      {shown}
    </span>
  );
}

/**
 * Which zone the times are in, and, when it is the clinic's and this device is on another, that it is so (a
 * remote biller or a manager elsewhere would otherwise read the 8:30 huddle as their own 8:30).
 */
function ZoneNote({ shownZone, from, to }: { shownZone: DisplayZone; from: Date; to: Date }) {
  const { zone, browser, clinic } = shownZone;
  // The abbreviation of the days shown (both, for a week that crosses a DST change).
  const name = describeZone(zone, shownZone.instant(from), shownZone.instant(to).getTime() - 1);
  return (
    <p className="muted calendar-zone" data-testid="calendar-zone">
      Times in <span data-testid="time-zone">{name}</span>
      {clinic ? `, the clinic's; this device is on ${describeZone(browser)}` : null}
    </p>
  );
}

/** The banner while booking for a patient: whom for, and a way back to the plain calendar or their record. */
function BookingFor({ patientId, onDone }: { patientId: string; onDone: () => void }) {
  const { name } = usePatientName(patientId);
  // A phone's day is a list without time slots: there, New event is the way.
  const phone = usePhone();
  return (
    <div className="notice notice-info calendar-banner" role="status" data-testid="booking-for">
      <p>
        Booking for <strong>{name ?? 'a patient'}</strong>:{' '}
        {phone ? (
          <>
            press <em>New event</em>
          </>
        ) : (
          // New event first: a free time is chosen with a pointer (the grid's slots are not keyboard stops).
          <>
            press <em>New event</em>, or click a free time in the calendar
          </>
        )}
        ; the visit is linked to their record.
      </p>
      <div className="inline-actions">
        <Link
          to="/patients/$patientId"
          params={{ patientId }}
          search={{ tab: 'appointments' }}
          className="button button-secondary button-small"
        >
          Back to the record
        </Link>
        <Button size="small" variant="ghost" onPress={onDone}>
          Done
        </Button>
      </div>
    </div>
  );
}

export interface CalendarSearch {
  date?: string;
  view?: 'week' | 'day';
  scope?: 'organization';
  /** Booking for this patient (from their record): a new event starts with them chosen. */
  patient?: string;
  /** The provider whose account was just connected (the OAuth redirect back). */
  connected?: 'google' | 'microsoft';
}

const WORKSPACE_COLORS = ['#2557d6', '#b54708', '#1a7f4b', '#7a2bb5', '#0e7490', '#be123c'];

/** The view last chosen (Week or Day), kept in this browser: the calendar opens in it from the menu. */
const VIEW_KEY = 'atrium.calendar.view';
const rememberedView = (): 'day' | undefined => {
  try {
    return localStorage.getItem(VIEW_KEY) === 'day' ? 'day' : undefined;
  } catch {
    return undefined;
  }
};

export function CalendarPage({ date, view: asked, scope, patient, connected }: CalendarSearch) {
  const navigate = useNavigate();
  const me = useCurrentMe();
  const phone = usePhone();
  // A link naming a date names its view too (no view is the week); the bare /calendar of the menu opens the view
  // last chosen, on today.
  const view = asked ?? (date ? undefined : rememberedView());
  /** Kept only when chosen with Week / Day (not from a dated link, All locations or the phone's day list). */
  const rememberView = (chosen: 'day' | 'week') => {
    try {
      localStorage.setItem(VIEW_KEY, chosen);
    } catch {
      // Storage refused (private mode, full): the calendar opens in the week, as before.
    }
  };
  const dayMode = phone || view === 'day';
  // Every Date on this page is shown in the display zone (time.ts): converted from the API's instants, and back
  // to instants for what it sends.
  const shownZone = useDisplayZone();
  const { zone } = shownZone;
  const now = shownZone.now();
  const anchor = parseDateParam(date, now);
  const from = dayMode ? new Date(anchor.getFullYear(), anchor.getMonth(), anchor.getDate()) : mondayOf(anchor);
  const to = addDays(from, dayMode ? 1 : 7);
  // The day the week stands for: the one asked for (a picked date), else today when shown, else Monday.
  const dayOfWeekShown = date && anchor >= from && anchor < to ? anchor : now >= from && now < to ? now : from;
  const capabilities = useCapabilities();
  // All locations only where the plan has it: a link (or a workspace switch) that keeps `scope` into a workspace
  // without it shows that workspace's own calendar, and the scope leaves the address (below).
  const hqRefused = capabilities.data?.allowed.hqView === false;
  // All locations: the week, and a phone's day list (the desktop's day view is one location's, with its tasks).
  const hq = scope === 'organization' && (phone || !dayMode) && !hqRefused;
  const [dialog, setDialog] = useState<EventDialogState | null>(null);
  // An open event whose video room is still being made: the window is read again until it is ready.
  const [roomWatched, setRoomWatched] = useState(false);
  const week = useEvents(shownZone.instant(from).toISOString(), shownZone.instant(to).toISOString(), {
    scope: hq ? 'organization' : undefined,
    enabled: !dayMode || hq,
    poll: roomWatched,
  });
  const day = useDay(dateInput(from), zone, dayMode && !hq, roomWatched);
  // The week holding today lists today's tasks beside it (ticked and added there as in the day view).
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const weekHasToday = !dayMode && !hq && today >= from && today < to;
  const todays = useDay(dateInput(today), zone, weekHasToday);
  const events =
    dayMode && !hq
      ? { ...day, data: day.data ? { items: day.data.events, warnings: day.data.warnings } : undefined }
      : week;
  const openEvent =
    dialog?.mode === 'edit' ? (events.data?.items.find((e) => e.id === dialog.event.id) ?? dialog.event) : undefined;
  const roomPending = openEvent?.telehealthRoom?.status === 'pending';
  useEffect(() => {
    setRoomWatched(roomPending);
    if (!roomPending) return;
    const stop = setTimeout(() => setRoomWatched(false), ROOM_POLL_FOR_MS);
    return () => clearTimeout(stop);
  }, [roomPending]);
  const calendars = useCalendars();
  const connections = useConnections();
  const connect = useConnect();
  const [dismissed, setDismissed] = useState<string | null>(null);
  const ref = useRef<FullCalendar>(null);
  const gridRef = useRef<HTMLDivElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);

  const cals = calendars.data?.items ?? [];
  const fromMs = from.getTime();
  useEffect(() => {
    ref.current?.getApi().changeView(phone ? 'listDay' : dayMode ? 'timeGridDay' : 'timeGridWeek', new Date(fromMs));
  }, [fromMs, phone, dayMode]);

  useEffect(() => {
    if (scope !== 'organization' || !hqRefused) return;
    void navigate({ to: '/calendar', search: (prev) => ({ ...prev, scope: undefined }), replace: true });
  }, [scope, hqRefused, navigate]);

  // Back from the provider's consent page: say so once, show the account in the list, drop the flag.
  useEffect(() => {
    if (!connected) return;
    notifySuccess(`${PROVIDER_LABEL[connected]} account connected`, 'Its calendars now show in the week.');
    document.getElementById('connections-title')?.scrollIntoView({ block: 'center' });
    void navigate({ to: '/calendar', search: (prev) => ({ ...prev, connected: undefined }), replace: true });
  }, [connected, navigate]);

  const search = (d: Date) => ({
    date: dateInput(d),
    view: view === 'day' ? ('day' as const) : undefined,
    scope: hq ? ('organization' as const) : undefined,
    patient,
  });
  const go = (d: Date) => navigate({ to: '/calendar', search: search(d) });
  const step = dayMode ? 1 : 7;
  const workspaceIds = [...new Set((events.data?.items ?? []).map((e) => e.workspaceId))].sort();
  const workspaceColor = (id: string) =>
    WORKSPACE_COLORS[Math.max(0, workspaceIds.indexOf(id)) % WORKSPACE_COLORS.length];
  const workspaceName = (id: string) => me.workspaces.find((w) => w.id === id)?.name ?? 'Another location';

  const items: EventInput[] = (events.data?.items ?? []).map((e) => ({
    id: e.id,
    title: e.title || '(no title)',
    // An all-day event is its dates (given at 00:00Z): as dates, so it shows on the same day in every zone.
    start: e.allDay ? e.start.slice(0, 10) : shownZone.shown(e.start),
    end: e.allDay ? e.end.slice(0, 10) : shownZone.shown(e.end),
    allDay: e.allDay,
    borderColor: hq ? workspaceColor(e.workspaceId) : colorOf(cals, e.calendar),
    backgroundColor: 'var(--event-bg)',
    textColor: 'var(--text)',
    classNames: [`event-${e.provider}`, e.status === 'completed' ? 'event-completed' : ''],
    extendedProps: { source: e },
    // Dragged to another time or stretched: only this workspace's events, and never between all-day and timed.
    // All-day events are changed in their dialog (a dragged day is a local midnight, not the day the providers take).
    editable: !phone && !e.allDay && e.workspaceId === me.workspace.id && e.status !== 'cancelled',
  }));

  // An event deleted (or drawn anew) under the focus hands it to its neighbour that day, else to "New event".
  const { afterDialogClosed } = useKeepEventFocus(gridRef, events.data?.items ?? [], () => {
    const button = document.getElementById('calendar-new-event');
    if (button instanceof HTMLButtonElement && !button.disabled) button.focus();
    else headingRef.current?.focus();
  });
  useEffect(() => {
    if (!dialog) return afterDialogClosed();
  }, [dialog, afterDialogClosed]);

  // Working hours by default, widened so that no event falls outside the grid.
  const hours = useMemo(() => {
    let min = 7;
    let max = 20;
    const first = new Date(fromMs);
    const last = addDays(first, dayMode ? 1 : 7);
    for (const e of events.data?.items ?? []) {
      if (e.allDay) continue;
      const start = shownZone.shown(e.start);
      const end = shownZone.shown(e.end);
      if (start < first || start >= last) continue;
      min = Math.min(min, start.getHours());
      max = Math.max(max, end.getDate() !== start.getDate() ? 24 : end.getHours() + (end.getMinutes() ? 1 : 0));
    }
    const pad = (h: number) => `${String(h).padStart(2, '0')}:00:00`;
    return { min: pad(min), max: pad(Math.min(24, max)) };
  }, [events.data, fromMs, dayMode, shownZone]);

  const warnings = events.data?.warnings ?? [];
  const warningKey = warnings.map((w) => `${w.provider}:${w.code}`).join(',');
  const failing = [
    ...new Set(
      warnings
        .filter((w) => w.code !== 'reauth_required')
        .map((w) => `${PROVIDER_LABEL[w.provider] ?? w.provider} ${WARNING_WORDS[w.code] ?? 'could not be loaded'}`),
    ),
  ];
  // The week's answer may be the first to learn that a connection needs signing in again (its
  // refresh was refused just now): read the connections again so the banner shows at once.
  const reauthWarned = warnings.some((w) => w.code === 'reauth_required');
  const refetchConnections = connections.refetch;
  useEffect(() => {
    if (reauthWarned) void refetchConnections();
  }, [reauthWarned, refetchConnections]);
  const reauth = (connections.data?.items ?? []).filter((c) => c.status === 'reauth_required');
  const canAddMore = capabilities.data
    ? capabilities.data.allowed.bothProviders || (connections.data?.items.length ?? 0) === 0
    : true;
  const noCalendars = calendars.isSuccess && cals.length === 0;

  const openCreate = (start: Date, end: Date, allDay = false) => {
    if (cals.length === 0) return;
    setDialog({ mode: 'create', start, end, allDay, patientId: patient });
  };
  const onSelect = (arg: DateSelectArg) => {
    ref.current?.getApi().unselect();
    openCreate(arg.start, arg.end, arg.allDay);
  };
  const onDateClick = (arg: DateClickArg) =>
    openCreate(arg.date, new Date(arg.date.getTime() + 30 * 60_000), arg.allDay);
  const onEventClick = (arg: EventClickArg) => {
    arg.jsEvent.preventDefault();
    setDialog({ mode: 'edit', event: arg.event.extendedProps.source as CalendarEvent });
  };
  // Moving by drag (or stretching) changes that event's times only (one occurrence of a series); a
  // refusal (a conflict, a provider's no) puts it back where it was and says why.
  const patch = usePatchEvent();
  const onMoved = (arg: EventDropArg | EventResizeDoneArg) => {
    const source = arg.event.extendedProps.source as CalendarEvent;
    const { start, end } = arg.event;
    if (!start || !end || arg.event.allDay !== source.allDay) return arg.revert();
    const [startAt, endAt] = [shownZone.instant(start), shownZone.instant(end)];
    // A drop into the past is almost always a slip of the mouse: it is put back. (A visit that really
    // happened at another time is changed in its dialog.)
    // (An all-day event's day has passed only once it is over: today's midnight is not the past.)
    const over = arg.event.allDay ? endAt.getTime() <= Date.now() : startAt.getTime() < Date.now();
    if (over && start.getTime() !== arg.oldEvent.start?.getTime()) {
      arg.revert();
      return notifyError(
        null,
        'Not moved',
        () => 'That time has passed. To record when a past visit really took place, open it and change its time.',
      );
    }
    patch.mutate(
      {
        event: source.id,
        draft: { start: startAt.toISOString(), end: endAt.toISOString(), allDay: source.allDay, timeZone: zone },
      },
      {
        onSuccess: () =>
          notifySuccess(
            'Moved',
            `${source.title || 'The event'}${source.recurringEventId ? ' (this occurrence)' : ''} is now at ${start.toLocaleString(undefined, { weekday: 'short', hour: 'numeric', minute: '2-digit' })}.`,
          ),
        onError: (error) => {
          arg.revert();
          notifyError(error, 'Not moved', messageOf);
        },
      },
    );
  };
  const newEvent = () => {
    const start = new Date(from);
    const now = shownZone.now();
    if (now >= from && now < to) start.setTime(now.getTime());
    start.setHours(Math.max(9, start.getHours() + 1), 0, 0, 0);
    openCreate(start, new Date(start.getTime() + 30 * 60_000));
  };

  return (
    <section className="page calendar-page" aria-labelledby="page-title" data-testid="calendar-page">
      <header className="page-header calendar-header">
        <div>
          <h1 id="page-title" ref={headingRef} tabIndex={-1}>
            Calendar
          </h1>
          <p className="muted" data-testid="calendar-range">
            {dayMode ? formatDay(from) : formatRange(from, to)}
          </p>
          <ZoneNote shownZone={shownZone} from={from} to={to} />
        </div>
        <nav className="calendar-nav" aria-label="Choose dates">
          {!phone ? (
            <span className="calendar-views">
              <Link
                to="/calendar"
                search={{ date: dateInput(from), scope, patient }}
                // Exact: in the day view (same path, more search) the week is not the current view.
                activeOptions={{ exact: true }}
                aria-current={dayMode ? undefined : 'page'}
                onClick={() => rememberView('week')}
                data-testid="view-week"
              >
                Week
              </Link>
              <Link
                to="/calendar"
                // Today when it is in the week shown, else the week's first day.
                search={{ date: dateInput(dayOfWeekShown), view: 'day', patient }}
                aria-current={dayMode ? 'page' : undefined}
                onClick={() => rememberView('day')}
                data-testid="view-day"
              >
                Day
              </Link>
            </span>
          ) : null}
          {capabilities.data?.allowed.hqView && (phone || !dayMode) ? (
            <Check
              isSelected={hq}
              onChange={(all) =>
                navigate({
                  to: '/calendar',
                  search: { date: dateInput(from), scope: all ? 'organization' : undefined },
                })
              }
              testId="all-locations"
            >
              All locations
            </Check>
          ) : null}
          <Button
            variant="secondary"
            size="small"
            onPress={() => go(addDays(from, -step))}
            aria-label={dayMode ? 'Previous day' : 'Previous week'}
            data-testid="calendar-prev"
          >
            ‹
          </Button>
          <Button variant="secondary" size="small" onPress={() => go(shownZone.now())} data-testid="calendar-today">
            Today
          </Button>
          <Button
            variant="secondary"
            size="small"
            onPress={() => go(addDays(from, step))}
            aria-label={dayMode ? 'Next day' : 'Next week'}
            data-testid="calendar-next"
          >
            ›
          </Button>
          <DateInput
            className="calendar-go-to"
            aria-label="Go to date"
            value={dateInput(dayOfWeekShown)}
            onCommit={(day) => day && go(parseDateParam(day, now))}
            data-testid="calendar-go-to"
          />
          <Button id="calendar-new-event" onPress={newEvent} isDisabled={cals.length === 0} data-testid="new-event">
            New event
          </Button>
        </nav>
      </header>

      {patient ? (
        <BookingFor
          patientId={patient}
          onDone={() => navigate({ to: '/calendar', search: { ...search(from), patient: undefined } })}
        />
      ) : null}
      {reauth.map((c) => (
        <div key={c.id} className="notice notice-error calendar-banner" role="alert" data-testid="reauth-banner">
          <p>
            Your {PROVIDER_LABEL[c.provider]} connection ({c.accountEmail}) needs you to sign in again; its events are
            not shown until then.
          </p>
          <Button
            size="small"
            onPress={() => connect.mutate({ provider: c.provider, connectionId: c.id })}
            isDisabled={connect.isPending}
          >
            Reconnect {PROVIDER_LABEL[c.provider]}
          </Button>
        </div>
      ))}
      {failing.length && dismissed !== warningKey ? (
        <div className="notice notice-info calendar-banner" role="status" data-testid="provider-warning">
          <p>{failing.join('; ')}. Showing the other calendars.</p>
          <Button
            size="small"
            variant="ghost"
            onPress={() => setDismissed(warningKey)}
            aria-label="Dismiss this notice"
          >
            Dismiss
          </Button>
        </div>
      ) : null}
      {events.isError ? <ErrorNotice error={events.error} onRetry={() => events.refetch()} /> : null}

      <div className={`calendar-layout${dayMode ? '' : ' calendar-layout-week'}`}>
        <div className="calendar-main card">
          {events.isPending || calendars.isPending ? <Loading label="Loading the calendar…" /> : null}
          {noCalendars ? (
            <p className="muted calendar-empty" data-testid="calendar-empty">
              No calendars yet. Connect a Google or Microsoft account to start.
            </p>
          ) : null}
          <div
            ref={gridRef}
            className={events.isFetching ? 'calendar-grid calendar-grid-busy' : 'calendar-grid'}
            data-testid="calendar-grid"
          >
            <FullCalendar
              ref={ref}
              plugins={[timeGridPlugin, interactionPlugin, listPlugin]}
              initialView={phone ? 'listDay' : dayMode ? 'timeGridDay' : 'timeGridWeek'}
              initialDate={from}
              headerToolbar={false}
              firstDay={1}
              nowIndicator
              // The now line and today's column are the display zone's (the events are shown Dates too).
              now={shownZone.now}
              selectable={!noCalendars}
              selectMirror
              eventInteractive
              height="auto"
              slotMinTime={hours.min}
              slotMaxTime={hours.max}
              scrollTime="08:00:00"
              allDayText="All day"
              noEventsText="Nothing booked this day."
              events={items}
              eventContent={(arg) => (
                <EventChip
                  arg={arg}
                  where={
                    hq
                      ? workspaceName((arg.event.extendedProps.source as CalendarEvent | undefined)?.workspaceId ?? '')
                      : undefined
                  }
                />
              )}
              // FullCalendar makes a time-grid event focusable (Enter and Space open it) but gives it no
              // role: it is a button, named by its chip. (The day list's rows hold a real button instead.)
              eventDidMount={({ el, isMirror, view }) => {
                if (!isMirror && !view.type.startsWith('list')) el.setAttribute('role', 'button');
              }}
              // Only events too low for two lines (15 minutes) are drawn short: their title on one line.
              eventShortHeight={20}
              // In the week's narrow columns an event shows its start only (its height shows the end), so
              // the title (often "Visit: patient's name") gets the room.
              // The phone's day list writes times as the rest of the app does ("8:30 AM – 8:45 AM", not "8:30am - 8:45am").
              defaultRangeSeparator=" – "
              views={{
                timeGridWeek: { displayEventEnd: false },
                listDay: { eventTimeFormat: { hour: 'numeric', minute: '2-digit' } },
              }}
              select={onSelect}
              dateClick={onDateClick}
              eventClick={onEventClick}
              eventDrop={onMoved}
              eventResize={onMoved}
            />
          </div>
        </div>
        <aside className="calendar-side">
          {dayMode && day.data ? <TasksSidebar day={from} tasks={day.data.tasks} events={day.data.events} /> : null}
          {weekHasToday && todays.data ? (
            <TasksSidebar day={today} tasks={todays.data.tasks} events={todays.data.events} heading="Tasks for today" />
          ) : null}
          <section className="card" aria-labelledby="legend-title">
            <h2 id="legend-title">{hq ? 'Locations' : 'Calendars'}</h2>
            <ul className="legend" data-testid="calendar-legend">
              {hq
                ? workspaceIds.map((id) => (
                    <li key={id}>
                      <span className="legend-swatch" style={{ background: workspaceColor(id) }} aria-hidden="true" />
                      <span>{workspaceName(id)}</span>
                    </li>
                  ))
                : null}
              {(hq ? [] : cals).map((c) => (
                <li key={c.id}>
                  <span className="legend-swatch" style={{ background: colorOf(cals, c.id) }} aria-hidden="true" />
                  <span>
                    {c.name === c.accountEmail ? PROVIDER_LABEL[c.provider] : c.name}{' '}
                    <span className="muted">{c.accountEmail}</span>
                  </span>
                </li>
              ))}
            </ul>
          </section>
          {connections.isSuccess ? (
            <ConnectionsPanel
              connections={connections.data.items}
              canAddMore={canAddMore}
              othersShown={cals.some((c) => !connections.data.items.some((x) => x.id === c.connectionId))}
            />
          ) : null}
        </aside>
      </div>
      {dialog ? (
        <EventDialog
          state={dialog}
          // The event as the calendar reads it now (its video room may have become ready while it is open).
          current={openEvent}
          calendars={cals}
          capabilities={capabilities.data}
          readOnlyFrom={
            dialog.mode === 'edit' && dialog.event.workspaceId !== me.workspace.id
              ? workspaceName(dialog.event.workspaceId)
              : undefined
          }
          onClose={() => setDialog(null)}
          // A visit booked or moved to a day out of view: the calendar goes there, so it can be seen.
          onSaved={(start) => {
            if (start < from || start >= to) go(start);
          }}
        />
      ) : null}
    </section>
  );
}
