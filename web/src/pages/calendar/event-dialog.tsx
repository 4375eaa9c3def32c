/**
 * Create or edit an event in place (a dialog over the week, never a page change). A recurring
 * event asks whether a change or a deletion is for this occurrence or the whole series.
 */
import { Link } from '@tanstack/react-router';
import { type FormEvent, useEffect, useId, useMemo, useRef, useState } from 'react';
import { ApiError, describeError } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog, ConfirmDialog } from '../../components/ui/dialog.js';
import { Check } from '../../components/ui/form.js';
import { notifyError, notifySuccess } from '../../components/ui/toast.js';
import { PatientPicker } from '../patients/patient-picker.js';
import {
  type CalendarEvent,
  type CalendarInfo,
  type Capabilities,
  CONFERENCE_LABEL,
  type Conference,
  type Draft,
  PROVIDER_LABEL,
  SHOW_AS_LABEL,
  type ShowAs,
  useCreateEvent,
  useDeleteEvent,
  usePatchEvent,
  useProviderMatch,
} from './calendar-api.js';
import {
  clinicZoneNote,
  dateInput,
  describeRecurrence,
  fromInputs,
  keepLength,
  REPEATS,
  type Repeat,
  shownTime,
  timeInput,
} from './time.js';
import { useDisplayZone } from './use-display-zone.js';

type ProblemField = 'title' | 'date' | 'end' | 'attendees' | 'patient';

/** A new event's `start` and `end` are shown Dates (time.ts): the slot as the calendar shows it. */
export type EventDialogState =
  | { mode: 'create'; start: Date; end: Date; allDay?: boolean; patientId?: string }
  | { mode: 'edit'; event: CalendarEvent };

/** Conferencing the tier allows and the calendar's provider can hold (contract §5.2). */
function conferenceChoices(capabilities: Capabilities | undefined, provider: string | undefined): Conference[] {
  const allowed = capabilities?.allowed;
  if (!allowed || !provider) return [];
  const out: Conference[] = [];
  if (allowed.meet && provider === 'google') out.push('meet');
  if (allowed.teams && provider === 'microsoft') out.push('teams');
  if (allowed.zoom) out.push('zoom');
  return out;
}

const FRIENDLY: Record<string, string> = {
  reauth_required: 'This calendar’s connection needs you to sign in again (Reconnect above), then try again.',
  tier_required: 'Your plan does not include that. Choose another video option.',
  conference_unavailable: 'That video option is not available on this calendar.',
  rate_limited: 'The calendar provider asks us to slow down. Try again in a moment.',
  provider_timeout: 'The calendar provider did not answer in time. Try again.',
  provider_unavailable: 'The calendar provider is unavailable right now. Try again shortly.',
  event_not_found: 'This event no longer exists. It may have been deleted elsewhere.',
  scheduling_conflict:
    'The provider or the patient already has an appointment at this time. Choose another time or provider.',
};
/** A failed calendar write in words for the person who tried it. */
export const messageOf = (error: unknown) =>
  error instanceof ApiError && FRIENDLY[error.code] ? FRIENDLY[error.code] : describeError(error);

/**
 * The fields of a change that differ from the event as it is; `times` only when the form's date or times were
 * changed (never for a whole series).
 */
function changedFields(
  event: CalendarEvent,
  fields: { title: string; location: string | null; description: string | null; attendees: { email: string }[] },
  times: { start: string; end: string; allDay: boolean; timeZone: string } | null,
): Draft {
  const draft: Draft = {};
  // Compared as the form shows them (trimmed, empty as none), so a field nobody touched is never sent.
  const shown = (text: string | null | undefined) => text?.trim() || null;
  if (fields.title !== (event.title ?? '').trim()) draft.title = fields.title;
  if (fields.location !== shown(event.location)) draft.location = fields.location;
  if (fields.description !== shown(event.description)) draft.description = fields.description;
  const guests = (list: { email: string }[]) =>
    list
      .map((a) => a.email.toLowerCase())
      .sort()
      .join(',');
  if (guests(fields.attendees) !== guests(event.attendees)) draft.attendees = fields.attendees;
  if (times) Object.assign(draft, times);
  return draft;
}

export function EventDialog({
  state,
  current,
  calendars,
  capabilities,
  onClose,
  onSaved,
  readOnlyFrom,
}: {
  state: EventDialogState;
  /**
   * The edited event as last read (the calendar reads it again while its video room is being made): its join
   * links and room state follow it; the form keeps what was opened, so nothing typed is overwritten.
   */
  current?: CalendarEvent;
  calendars: CalendarInfo[];
  capabilities: Capabilities | undefined;
  onClose: () => void;
  /** After a create or change: where the event now starts (the page goes there if it is out of view). */
  onSaved?: (start: Date) => void;
  /** The event belongs to another location (the HQ view): shown, not changed here. */
  readOnlyFrom?: string;
}) {
  const ids = {
    title: useId(),
    calendar: useId(),
    date: useId(),
    start: useId(),
    end: useId(),
    repeat: useId(),
    showAs: useId(),
    showAsHint: useId(),
    video: useId(),
    location: useId(),
    description: useId(),
    attendees: useId(),
    problem: useId(),
    deleteWait: useId(),
    zone: useId(),
  };
  const editing = state.mode === 'edit' ? state.event : null;
  // The form's date and times are the display zone's; what is sent is the instants they stand for.
  const shownZone = useDisplayZone();
  // A new event starts with its title: typing right after "New event" (or a click on a slot) goes there.
  const titleRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!editing) titleRef.current?.focus();
  }, [editing]);
  const initialStart = editing
    ? shownTime(editing.start, editing.allDay, shownZone.zone)
    : (state as { start: Date }).start;
  const initialEnd = editing ? shownTime(editing.end, editing.allDay, shownZone.zone) : (state as { end: Date }).end;
  const writable = calendars;
  const [title, setTitle] = useState(editing?.title ?? '');
  const [calendarId, setCalendarId] = useState(
    editing?.calendar ?? writable.find((c) => c.primary)?.id ?? writable[0]?.id ?? '',
  );
  // The date and times as the form opened with them: an edit sends times only when these were changed. (Turned
  // into an instant and back, a time the clinic's clocks repeat, 1:30 EST on 2026-11-01 in New York, would come
  // back as the first 1:30, EDT, and look changed.)
  const [opened] = useState(() => ({
    date: dateInput(initialStart),
    start: timeInput(initialStart),
    end: timeInput(initialEnd),
    allDay: editing?.allDay ?? (state.mode === 'create' && state.allDay === true),
  }));
  const [date, setDate] = useState(opened.date);
  const [startTime, setStartTime] = useState(opened.start);
  const [endTime, setEndTime] = useState(opened.end);
  const [allDay, setAllDay] = useState(opened.allDay);
  const [repeat, setRepeat] = useState<Repeat>('none');
  // Editing: the event's own. A new event follows All day (busy when timed, free when all-day, as Google Calendar
  // and Outlook do) until someone chooses.
  const [showAsChoice, setShowAsChoice] = useState<ShowAs | null>(editing?.showAs ?? null);
  const showAs: ShowAs = showAsChoice ?? (allDay ? 'free' : 'busy');
  const [video, setVideo] = useState<Conference | 'none'>(editing?.conference?.product ?? 'none');
  const [location, setLocation] = useState(editing?.location ?? '');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [attendees, setAttendees] = useState(editing?.attendees.map((a) => a.email).join(', ') ?? '');
  const [patientId, setPatientId] = useState(
    editing?.patientId ?? (state.mode === 'create' ? (state.patientId ?? '') : ''),
  );
  const [hostUserId, setHostUserId] = useState<string | null>(editing?.hostUserId ?? null);
  // What the Patient field shows when no patient is chosen from its list (refused on save, never dropped).
  const [patientText, setPatientText] = useState('');
  const [scope, setScope] = useState<'occurrence' | 'series'>('occurrence');
  const [confirmDelete, setConfirmDelete] = useState(false);
  // What is wrong, and with which field (marked invalid, described by the message, and focused).
  const [problem, setProblemState] = useState<{ text: string; field?: ProblemField } | null>(null);
  const fieldRefs = {
    title: titleRef,
    date: useRef<HTMLInputElement>(null),
    end: useRef<HTMLInputElement>(null),
    attendees: useRef<HTMLInputElement>(null),
    patient: useRef<HTMLInputElement>(null),
  };
  const setProblem = (text: string | null, field?: ProblemField) => setProblemState(text ? { text, field } : null);
  // Focused once it is marked (invalid, described by the message), so that it is read out as such.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the refs are stable; each new problem is the trigger
  useEffect(() => {
    if (problem?.field) fieldRefs[problem.field].current?.focus();
  }, [problem]);
  // `also`: what else describes the field (the zone its time is in).
  const invalid = (field: ProblemField, also?: string) =>
    problem?.field === field
      ? { 'aria-invalid': true, 'aria-describedby': also ? `${ids.problem} ${also}` : ids.problem }
      : also
        ? { 'aria-describedby': also }
        : {};
  const create = useCreateEvent();
  const patch = usePatchEvent();
  const remove = useDeleteEvent();
  const calendar = calendars.find((c) => c.id === calendarId);
  const choices = useMemo(
    () => conferenceChoices(capabilities, calendar?.provider),
    [capabilities, calendar?.provider],
  );
  const recurring = Boolean(editing?.recurringEventId);
  // Who is free for this patient in this slot (Advanced+): a new appointment only.
  const slotStart = fromInputs(date, allDay ? '00:00' : startTime);
  const slotEnd = fromInputs(date, allDay ? '23:59' : endTime);
  const matchSlot =
    !editing && patientId && capabilities?.allowed.patientAware && slotStart && slotEnd && slotEnd > slotStart
      ? {
          patientId,
          start: shownZone.instant(slotStart).toISOString(),
          end: shownZone.instant(slotEnd).toISOString(),
        }
      : null;
  const match = useProviderMatch(matchSlot);
  // On a device in another zone: the date and times are the clinic's, and the form says so. (An all-day event's
  // date is the same day in every zone.)
  const zoneNote = allDay ? null : clinicZoneNote(shownZone, slotStart ? shownZone.instant(slotStart) : Date.now());
  const zoneHint = zoneNote ? ids.zone : undefined;
  const pickProvider = (userId: string) => {
    const found = match.data?.items.find((m) => m.userId === userId);
    setHostUserId(userId);
    if (found?.calendarId && calendars.some((c) => c.id === found.calendarId)) setCalendarId(found.calendarId);
  };
  // Until someone chooses, the best free provider (the patient's preferred one first) is chosen.
  const best = match.data?.items.find((m) => m.free && m.calendarId)?.userId;
  // biome-ignore lint/correctness/useExhaustiveDependencies: picks once per new answer, not on every render
  useEffect(() => {
    if (!hostUserId && best) pickProvider(best);
  }, [best]);
  const seriesScope = recurring && scope === 'series';
  // A single event (not a series, not one occurrence of one) may still get a patient or start repeating.
  const single = !!editing && !editing.recurringEventId && !editing.recurrence?.length;
  const saving = create.isPending || patch.isPending;
  const pending = saving || remove.isPending;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    // A second press while the first is on its way changes nothing (the button stays focusable meanwhile).
    if (pending) return;
    setProblem(null);
    const start = allDay ? fromInputs(date, '00:00') : fromInputs(date, startTime);
    const end = allDay ? fromInputs(date, '00:00') : fromInputs(date, endTime);
    if (!title.trim()) return setProblem('Give the event a title.', 'title');
    if (!start || !end) return setProblem('Choose a date and times.', 'date');
    // An all-day event keeps its number of days (the form names its first day only); a new one is one day.
    if (allDay) {
      const days = editing?.allDay
        ? Math.max(1, Math.round((Date.parse(editing.end) - Date.parse(editing.start)) / 86_400_000))
        : 1;
      end.setDate(end.getDate() + days);
    }
    if (end <= start) return setProblem('The event must end after it starts.', allDay ? 'date' : 'end');
    const emails = attendees
      .split(/[,;\s]+/)
      .map((a) => a.trim())
      .filter(Boolean);
    const bad = emails.find((a) => !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(a));
    if (bad) return setProblem(`“${bad}” is not an e-mail address.`, 'attendees');
    if (!patientId && patientText.trim()) {
      return setProblem(
        `No patient is chosen for “${patientText.trim()}”: pick one from the list, or clear the field.`,
        'patient',
      );
    }
    const fields = {
      title: title.trim(),
      location: location.trim() || null,
      description: description.trim() || null,
      attendees: emails.map((email) => ({ email })),
    };
    const times = {
      start: shownZone.instant(start).toISOString(),
      end: shownZone.instant(end).toISOString(),
      allDay,
      timeZone: shownZone.zone,
    };
    // A change sends only what changed: a field sent for one occurrence becomes that occurrence's own
    // (a later rename of the whole series would pass it by), so moving one visit sends its times only.
    // (An all-day event's times are its date: its start and end times are not in the form.)
    const timesChanged =
      date !== opened.date ||
      allDay !== opened.allDay ||
      (!allDay && (startTime !== opened.start || endTime !== opened.end));
    const draft: Draft = editing
      ? changedFields(editing, fields, seriesScope || !timesChanged ? null : times)
      : { ...fields };
    if (!editing && patientId) {
      draft.patientId = patientId;
      const host = hostUserId ?? calendar?.hostUserId;
      if (host) draft.hostUserId = host;
    }
    if (!editing) Object.assign(draft, times);
    if (single && editing && patientId !== (editing.patientId ?? '')) draft.patientId = patientId || null;
    const rule = REPEATS[repeat].rule;
    // A new repeat rule goes with the times it starts from (Microsoft needs them to place the series).
    if (single && rule) Object.assign(draft, times, { recurrence: [rule] });
    if (!editing || showAs !== editing.showAs) draft.showAs = showAs;
    const currentVideo = editing?.conference?.product ?? 'none';
    if (!editing || video !== currentVideo) draft.conference = video === 'none' ? null : video;
    if (editing && Object.keys(draft).length === 0) return onClose();
    if (!editing) {
      if (rule) draft.recurrence = [rule];
      create.mutate(
        { calendar: calendarId, draft },
        {
          onSuccess: (made) => {
            notifySuccess('Event created', `${title.trim()} is on ${calendar?.name ?? 'the calendar'}.`);
            onClose();
            onSaved?.(shownTime(made.event.start, made.event.allDay, shownZone.zone));
          },
          onError: (error) => setProblem(messageOf(error)),
        },
      );
    } else {
      const target = seriesScope && editing.recurringEventId ? editing.recurringEventId : editing.id;
      patch.mutate(
        { event: target, draft },
        {
          onSuccess: (changed) => {
            notifySuccess(seriesScope ? 'Series updated' : 'Event updated');
            onClose();
            // A whole series answers its first occurrence: no reason to go there.
            if (!seriesScope) onSaved?.(shownTime(changed.event.start, changed.event.allDay, shownZone.zone));
          },
          onError: (error) => setProblem(messageOf(error)),
        },
      );
    }
  };

  const doDelete = () => {
    if (!editing) return;
    const target = seriesScope && editing.recurringEventId ? editing.recurringEventId : editing.id;
    remove.mutate(target, {
      onSuccess: () => {
        notifySuccess(seriesScope ? 'Series deleted' : 'Event deleted');
        setConfirmDelete(false);
        onClose();
      },
      onError: (error) => {
        setConfirmDelete(false);
        notifyError(error, messageOf(error));
      },
    });
  };

  // One room to meet in: the provider's call, whose link the patient's invitation carries. Atrium's
  // own telehealth room is the stand-by when the visit has no call (or the provider's fails).
  const shown = editing ? (current ?? editing) : null;
  const joins = [
    shown?.conference
      ? {
          label: `Join ${CONFERENCE_LABEL[shown.conference.product]}`,
          url: shown.conference.joinUrl,
          primary: true,
        }
      : null,
    shown?.telehealth
      ? {
          label: shown.conference ? 'Stand-by room (Atrium telehealth)' : 'Join telehealth room',
          url: shown.telehealth.joinUrl,
          primary: !shown.conference,
        }
      : null,
  ].filter((j): j is { label: string; url: string; primary: boolean } => j !== null);

  return (
    <AppDialog
      title={editing ? 'Event' : 'New event'}
      isOpen
      onOpenChange={(open) => (!open ? onClose() : undefined)}
      size="medium"
      testId="event-dialog"
    >
      <form className="form calendar-form" onSubmit={submit} noValidate data-testid="event-form">
        {joins.length || editing?.patientId || recurring ? (
          <div className="event-facts">
            {joins.map((j) => (
              <a
                key={j.url}
                className={`button ${j.primary ? 'button-primary' : 'button-secondary'} join-link`}
                href={j.url}
                target="_blank"
                rel="noreferrer"
                data-testid="join-link"
              >
                {j.label}
              </a>
            ))}
            {editing?.patientId ? (
              <Link to="/patients/$patientId" params={{ patientId: editing.patientId }} className="patient-link">
                Open patient record
              </Link>
            ) : null}
            {recurring ? (
              <span className="muted">
                {describeRecurrence(editing?.recurrence ?? null) ?? 'Part of a repeating series'}
              </span>
            ) : null}
          </div>
        ) : null}
        <RoomStatus event={shown} />
        {readOnlyFrom ? (
          <p className="notice notice-info readonly-note" data-testid="readonly-note">
            This event belongs to {readOnlyFrom}. Switch to that workspace to change it.
          </p>
        ) : null}
        <div className="field">
          <label htmlFor={ids.title}>
            Title <span className="required">*</span>
          </label>
          <input
            id={ids.title}
            ref={titleRef}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            maxLength={500}
            required
            {...invalid('title')}
            data-testid="event-title"
          />
        </div>
        {(!editing || single) && !readOnlyFrom ? (
          <PatientPicker
            label="Patient (optional)"
            patientId={patientId || undefined}
            onChange={(id) => {
              setPatientId(id);
              setHostUserId(null);
            }}
            onTextChange={setPatientText}
            inputRef={fieldRefs.patient}
            invalid={invalid('patient')}
            testId="event-patient"
            optionTestId="event-patient-option"
          />
        ) : null}
        {matchSlot ? (
          <fieldset className="field provider-match" data-testid="provider-match">
            <legend>Provider</legend>
            {match.isPending ? <p className="muted">Checking who is free…</p> : null}
            {match.isError ? <p className="field-error">{describeError(match.error)}</p> : null}
            {match.data?.items.length === 0 ? <p className="muted">No providers in this workspace yet.</p> : null}
            {match.data?.items.map((m) => (
              <label key={m.userId} className="provider-option" data-testid="provider-option">
                <input
                  type="radio"
                  name="provider"
                  checked={hostUserId === m.userId}
                  onChange={() => pickProvider(m.userId)}
                  disabled={!m.calendarId}
                />
                <span className="provider-name">{m.name}</span>
                <span className={m.free ? 'badge match-free' : 'badge badge-free'}>{m.free ? 'Free' : 'Busy'}</span>
                {m.preferred ? <span className="badge provider-preferred">Preferred</span> : null}
                <span className="muted provider-reasons">{m.reasons.join(' · ')}</span>
              </label>
            ))}
          </fieldset>
        ) : null}
        <div className="field">
          <label htmlFor={ids.calendar}>Calendar</label>
          <select
            id={ids.calendar}
            value={calendarId}
            onChange={(e) => setCalendarId(e.target.value)}
            disabled={Boolean(editing)}
            data-testid="event-calendar"
          >
            {calendars.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name === c.accountEmail ? c.name : `${c.name} (${c.accountEmail})`} · {PROVIDER_LABEL[c.provider]}
              </option>
            ))}
          </select>
        </div>
        {recurring ? (
          <fieldset className="field scope-choice" data-testid="scope-choice">
            <legend>Apply changes to</legend>
            <label>
              <input
                type="radio"
                name="scope"
                checked={scope === 'occurrence'}
                onChange={() => setScope('occurrence')}
              />{' '}
              This event only
            </label>
            <label>
              <input
                type="radio"
                name="scope"
                checked={scope === 'series'}
                onChange={() => setScope('series')}
                data-testid="scope-series"
              />{' '}
              All events in the series
            </label>
            {seriesScope ? (
              <p className="field-hint">
                Times change one event at a time; the other details change for the whole series.
              </p>
            ) : null}
          </fieldset>
        ) : null}
        <div className="form-row calendar-when">
          <div className="field">
            <label htmlFor={ids.date}>Date</label>
            <input
              id={ids.date}
              ref={fieldRefs.date}
              type="date"
              value={date}
              {...invalid('date', zoneHint)}
              onChange={(e) => setDate(e.target.value)}
              disabled={seriesScope}
              data-testid="event-date"
            />
          </div>
          {!allDay ? (
            <>
              <div className="field">
                <label htmlFor={ids.start}>Starts</label>
                <input
                  id={ids.start}
                  type="time"
                  value={startTime}
                  aria-describedby={zoneHint}
                  onChange={(e) => {
                    // Moving the start moves the end with it: the visit keeps its length.
                    setEndTime(keepLength(startTime, endTime, e.target.value));
                    setStartTime(e.target.value);
                  }}
                  disabled={seriesScope}
                  data-testid="event-start"
                />
              </div>
              <div className="field">
                <label htmlFor={ids.end}>Ends</label>
                <input
                  id={ids.end}
                  ref={fieldRefs.end}
                  type="time"
                  value={endTime}
                  {...invalid('end', zoneHint)}
                  onChange={(e) => setEndTime(e.target.value)}
                  disabled={seriesScope}
                  data-testid="event-end"
                />
              </div>
            </>
          ) : null}
        </div>
        {zoneNote ? (
          <p className="field-hint" id={ids.zone} data-testid="event-zone">
            {zoneNote}
          </p>
        ) : null}
        <Check isSelected={allDay} onChange={setAllDay} testId="event-all-day">
          All day
        </Check>
        <div className="field">
          <label htmlFor={ids.showAs}>Show as</label>
          <select
            id={ids.showAs}
            value={showAs}
            onChange={(e) => setShowAsChoice(e.target.value as ShowAs)}
            aria-describedby={ids.showAsHint}
            data-testid="event-show-as"
          >
            {(['busy', 'free'] as const).map((v) => (
              <option key={v} value={v}>
                {SHOW_AS_LABEL[v]}
              </option>
            ))}
          </select>
          <p className="field-hint" id={ids.showAsHint}>
            {showAs === 'busy'
              ? 'Nobody can book a visit with this calendar’s clinician at that time.'
              : patientId
                ? 'A patient’s visit keeps its clinician and patient busy, whatever this says.'
                : 'Visits can still be booked with this calendar’s clinician at that time.'}
          </p>
        </div>
        {(!editing || single) && !readOnlyFrom ? (
          <div className="field">
            <label htmlFor={ids.repeat}>Repeat</label>
            <select
              id={ids.repeat}
              value={repeat}
              onChange={(e) => setRepeat(e.target.value as Repeat)}
              data-testid="event-repeat"
            >
              {Object.entries(REPEATS).map(([key, r]) => (
                <option key={key} value={key}>
                  {r.label}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        <div className="field">
          <label htmlFor={ids.video}>Video call</label>
          <select
            id={ids.video}
            value={video}
            onChange={(e) => setVideo(e.target.value as Conference | 'none')}
            data-testid="event-video"
          >
            <option value="none">None</option>
            {choices.map((c) => (
              <option key={c} value={c}>
                {CONFERENCE_LABEL[c]}
              </option>
            ))}
            {video !== 'none' && !choices.includes(video) ? (
              <option value={video}>{CONFERENCE_LABEL[video]}</option>
            ) : null}
          </select>
          {capabilities && !capabilities.allowed.zoom ? (
            <p className="field-hint">Zoom comes with the Advanced plan.</p>
          ) : null}
        </div>
        <div className="field">
          <label htmlFor={ids.location}>Location</label>
          <input id={ids.location} value={location} onChange={(e) => setLocation(e.target.value)} maxLength={1000} />
        </div>
        <div className="field">
          <label htmlFor={ids.attendees}>Guests</label>
          <input
            id={ids.attendees}
            ref={fieldRefs.attendees}
            value={attendees}
            {...invalid('attendees')}
            onChange={(e) => setAttendees(e.target.value)}
            placeholder="name@example.com, …"
          />
          <p className="field-hint">E-mail addresses, separated by commas.</p>
        </div>
        <div className="field">
          <label htmlFor={ids.description}>Notes</label>
          <textarea
            id={ids.description}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            rows={3}
            maxLength={8000}
          />
        </div>
        {problem ? (
          <p className="field-error" role="alert" id={ids.problem} data-testid="event-error">
            {problem.text}
          </p>
        ) : null}
        {editing && saving ? (
          // Save, then Delete, on the same event: the save goes first, and Delete says why it is unavailable.
          <p className="field-hint" id={ids.deleteWait} data-testid="event-delete-wait">
            Delete is unavailable while your changes are being saved.
          </p>
        ) : null}
        <div className="form-actions">
          {editing && !readOnlyFrom ? (
            // Unavailable (not disabled, so the focus stays on it) while a save is on its way, saying why.
            <Button
              variant="danger"
              className="event-delete"
              isPending={saving}
              aria-describedby={saving ? ids.deleteWait : undefined}
              onPress={() => setConfirmDelete(true)}
              data-testid="event-delete"
            >
              Delete
            </Button>
          ) : null}
          {/* An open appointment's safe way out is Close: "Cancel" read as cancelling the visit (UX review). */}
          <Button variant="secondary" onPress={onClose} data-testid="event-close">
            {editing ? 'Close' : 'Cancel'}
          </Button>
          {/* Pending, not disabled: a disabled button would drop the focus to the page while it saves. */}
          <Button type="submit" isPending={pending} isDisabled={Boolean(readOnlyFrom)} data-testid="event-save">
            {pending ? 'Saving…' : editing ? 'Save' : 'Create'}
          </Button>
        </div>
      </form>
      <ConfirmDialog
        title={seriesScope ? 'Delete the whole series?' : 'Delete this event?'}
        description={
          seriesScope
            ? `Every event of “${editing?.title ?? ''}” is removed from the calendar.`
            : `“${editing?.title ?? ''}” is removed from the calendar${recurring ? '; the rest of the series stays' : ''}.`
        }
        confirmLabel="Delete"
        isOpen={confirmDelete}
        onOpenChange={setConfirmDelete}
        onConfirm={doDelete}
        pending={remove.isPending}
        confirmTestId="confirm-delete-event"
      />
    </AppDialog>
  );
}

/**
 * Atrium's video room while it cannot be joined: still being made (the provider is slow or out; the job keeps
 * trying while the visit needs it), or given up. A joinable room is a join link above instead. The API has no
 * way to ask for a failed room again, so none is offered.
 */
function RoomStatus({ event }: { event: CalendarEvent | null }) {
  const room = event?.telehealthRoom;
  if (room?.status === 'pending') {
    return (
      <div className="notice notice-info room-status" data-testid="room-status">
        <span className="notice-title">Video room: being prepared</span>
        <span>
          The telehealth room is still being made at the video provider. Its join link shows here once it is ready.
        </span>
      </div>
    );
  }
  if (room?.status === 'failed') {
    return (
      <div className="notice notice-error room-status" data-testid="room-status">
        <span className="notice-title">Video room: could not be made</span>
        <span>
          The video provider did not make the telehealth room in time, and Atrium has stopped trying.
          {event?.conference ? ` The ${CONFERENCE_LABEL[event.conference.product]} call above still works.` : ''}
        </span>
        {room.failureReason ? <span>The provider said: {room.failureReason}</span> : null}
      </div>
    );
  }
  return null;
}
