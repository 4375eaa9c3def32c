// iMIP invitations (RFC 5545 + RFC 6047): guests get a `text/calendar; method=REQUEST` part and an
// invite.ics attachment through the mail queue (sent after commit); changes send a new REQUEST with
// a higher SEQUENCE, cancellations (and removed guests) a CANCEL. The UID is stable per event.
// Times are in the event's zone with its VTIMEZONE, so a repeating visit keeps its local time.
// A change to one occurrence of a series is sent with the series' UID and that occurrence's
// RECURRENCE-ID (RFC 5545 §3.8.4.4), so guests' calendars change that one date and keep the rest.
// What each occurrence holds apart from the rule is kept, so a REQUEST for the whole series says
// how it stands (RFC 5546 §3.2.2): an EXDATE per cancelled occurrence and an override VEVENT
// (same UID and SEQUENCE, its RECURRENCE-ID and own times) per moved or changed one.

import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import { and, eq, sql } from 'drizzle-orm';
import ical, {
  formatDate,
  formatDateTZ,
  ICalAttendeeRole,
  ICalAttendeeStatus,
  ICalCalendarMethod,
} from 'ical-generator';
import rrulePkg from 'rrule';
import type { Tx } from '../../platform/db/client.js';
import { inList } from '../../platform/db/lists.js';
import { enqueueMail } from '../../platform/mail/mailer.js';
import { occurrences as occurrencesOf } from '../../platform/recurrence.js';
import { fromFloating, isTimeZone, toFloating } from '../../platform/zoned-time.js';
import type { CalendarEvent } from './schema.js';
import {
  calendarInvitations,
  type InvitationAnswers,
  type InvitedFields,
  type InvitedOccurrence,
  type InvitedSeries,
} from './tables.js';

export const uidOf = (eventId: string) => `${eventId.slice(4)}@atrium`;

type Method = 'REQUEST' | 'CANCEL';

/** A series' occurrences as they differ from its rule: cancelled ones (EXDATE) and moved or changed ones. */
interface Exceptions {
  cancelled: string[];
  overrides: { event: CalendarEvent; attendees: string[] }[];
}
const NO_EXCEPTIONS: Exceptions = { cancelled: [], overrides: [] };

/** The series' own recurrence lines (RRULE, and any EXDATE/RDATE the provider keeps with it). */
const recurrenceLines = (event: CalendarEvent) =>
  (event.recurrence ?? []).filter((l) => /^(RRULE|EXDATE|RDATE)[;:]/i.test(l));

/**
 * The iCalendar text of one message about `event` (exported for tests and the REPLY matcher's peers).
 * For a whole series, `exceptions` adds its cancelled occurrences as EXDATEs and its moved or changed
 * ones as override VEVENTs.
 */
export function buildIcs(
  event: CalendarEvent,
  method: Method,
  sequence: number,
  attendees: string[],
  organizer: { name: string; email: string },
  exceptions: Exceptions = NO_EXCEPTIONS,
): string {
  const occurrence = Boolean(event.recurringEventId && event.originalStart);
  const cal = ical({ prodId: { company: 'Atrium', product: 'Calendar', language: 'EN' } });
  cal.method(method === 'REQUEST' ? ICalCalendarMethod.REQUEST : ICalCalendarMethod.CANCEL);
  const zoned = event.timeZone && event.timeZone !== 'UTC' && !event.allDay;
  // ical-generator writes a zoned time from the Date's UTC fields: hand it the wall clock.
  const at = (iso: string) => (zoned ? new Date(toFloating(Date.parse(iso), event.timeZone)) : new Date(iso));
  const exdate = (iso: string) =>
    event.allDay
      ? `EXDATE;VALUE=DATE:${formatDate(null, at(iso), true)}`
      : formatDateTZ(null, 'EXDATE', at(iso), zoned ? { timezone: event.timeZone } : {});
  const lines = recurrenceLines(event);
  const repeating =
    occurrence || !lines.some((l) => /^RRULE[;:]/i.test(l))
      ? undefined
      : [...lines, ...exceptions.cancelled.map(exdate)].join('\r\n');
  const add = (e: CalendarEvent, guests: string[], rule?: string) =>
    cal.createEvent({
      id: uidOf(e.recurringEventId && e.originalStart ? e.recurringEventId : e.id),
      recurrenceId: e.recurringEventId && e.originalStart ? at(e.originalStart) : undefined,
      sequence,
      start: at(e.start),
      end: at(e.end),
      allDay: e.allDay,
      timezone: zoned ? e.timeZone : undefined,
      summary: e.title,
      description: e.description ?? undefined,
      location: e.location ?? e.conference?.joinUrl ?? undefined,
      url: e.conference?.joinUrl ?? e.telehealth?.joinUrl ?? undefined,
      // Replies go to the workspace's inbound address, so any guest's mail client can answer.
      organizer,
      attendees: guests.map((email) => ({
        email,
        rsvp: method === 'REQUEST',
        role: ICalAttendeeRole.REQ,
        status: ICalAttendeeStatus.NEEDSACTION,
      })),
      repeating: rule,
      status: method === 'CANCEL' ? ('CANCELLED' as never) : undefined,
    });
  add(event, attendees, repeating);
  for (const override of exceptions.overrides) add(override.event, override.attendees);
  let text = cal.toString();
  // An all-day occurrence is named by its date, as DTSTART is (RFC 5545 §3.8.4.4: same value type).
  if (event.allDay) text = text.replace(/^RECURRENCE-ID:(\d{8})T\d{6}Z?\r$/gm, 'RECURRENCE-ID;VALUE=DATE:$1\r');
  if (zoned) {
    // RFC 5545 wants the zone defined in the object: add its VTIMEZONE before the event.
    const vtimezone = getVtimezoneComponent(event.timeZone);
    if (vtimezone) text = text.replace('BEGIN:VEVENT', `${vtimezone.trim().replace(/\r?\n/g, '\r\n')}\r\nBEGIN:VEVENT`);
  }
  return text;
}

// rrule is CommonJS: under Node's own ESM loader (npm start) only its default export exists.
const { RRule } = rrulePkg;
const DAY_MS = 86_400_000;

/**
 * When the event is, as a guest reads it in the e-mail's text: in the event's own zone, named ("Tuesday, October
 * 20, 2026, 9:00 – 10:00 AM EDT (America/New_York)"), an all-day event by its dates, and a series' rule in words
 * ("every week for 3 times"). The attached invitation carries the exact times for the guest's calendar; this is
 * for the person reading the mail, who was shown a UTC timestamp before.
 */
export function describeWhen(
  event: Pick<CalendarEvent, 'start' | 'end' | 'allDay' | 'timeZone' | 'recurrence'>,
  withRule = true,
): string {
  const start = new Date(event.start);
  const end = new Date(event.end);
  let when: string;
  if (event.allDay) {
    // All-day times are dates at 00:00Z; the end is the day after the last one.
    const dates = new Intl.DateTimeFormat('en-US', {
      timeZone: 'UTC',
      weekday: 'long',
      year: 'numeric',
      month: 'long',
      day: 'numeric',
    });
    const last = new Date(Math.max(start.getTime(), end.getTime() - DAY_MS));
    when = `${dates.formatRange(start, last)} (all day)`;
  } else {
    const zone = event.timeZone && isTimeZone(event.timeZone) ? event.timeZone : 'UTC';
    const times = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'long',
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
    });
    when = `${times.formatRange(start, end)}${zone === 'UTC' ? '' : ` (${zone})`}`;
  }
  // ICU puts thin and narrow no-break spaces around the dash and before AM/PM: plain ones read the same everywhere.
  when = when.replace(/[\u2009\u202f]/g, ' ');
  const rule = withRule ? event.recurrence?.find((line) => line.startsWith('RRULE:')) : undefined;
  if (!rule) return when;
  try {
    return `${when}, repeating ${RRule.fromString(rule).toText()}`;
  } catch {
    return `${when}, repeating`;
  }
}

function mailFor(
  event: CalendarEvent,
  method: Method,
  sequence: number,
  to: string[],
  all: string[],
  organizer: { name: string; email: string },
  exceptions: Exceptions = NO_EXCEPTIONS,
) {
  const ics = buildIcs(event, method, sequence, all, organizer, exceptions);
  // An occurrence's subject names its date and time; a series' text its rule too.
  const at = describeWhen(event, false);
  const when = describeWhen(event);
  return {
    to,
    subject:
      method === 'REQUEST'
        ? `${sequence === 0 ? 'Invitation' : 'Updated invitation'}: ${event.title}${event.originalStart ? ` (${at})` : ''}`
        : `Cancelled: ${event.title}${event.originalStart ? ` (${at})` : ''}`,
    text:
      method === 'REQUEST'
        ? `You are invited to "${event.title}".\nWhen: ${when}${event.location ? `\nWhere: ${event.location}` : ''}${event.conference ? `\nJoin: ${event.conference.joinUrl}` : ''}\n\nOpen the attached invitation to add it to your calendar and reply.`
        : `"${event.title}" was cancelled.\nIt was: ${event.originalStart ? at : when}`,
    // nodemailer's icalEvent writes both parts RFC 6047 asks for: the `text/calendar; method=…`
    // alternative and an invite.ics attachment (application/ics). Adding our own would send it twice more.
    icalEvent: { method, content: ics },
  };
}

/** The invitation row of a UID, locked for this transaction (its SEQUENCE moves under the lock). */
async function lockInvitation(tx: Tx, workspaceId: string, uid: string) {
  const [known] = await tx
    .select()
    .from(calendarInvitations)
    .where(and(eq(calendarInvitations.workspaceId, workspaceId), eq(calendarInvitations.uid, uid)))
    .for('update');
  return known;
}

/** The event's guests: lower-cased, once each, the organizer's own calendar account left out. */
const guestsOf = (event: CalendarEvent, organizer: string) => [
  ...new Set(event.attendees.map((a) => a.email.toLowerCase()).filter((e) => e !== organizer.toLowerCase())),
];

/** An occurrence's key: its original start as a UTC instant (what events carry as `originalStart`). */
const occurrenceKey = (iso: string) => new Date(iso).toISOString();

const fieldsOf = (event: CalendarEvent, organizer: string): InvitedFields => ({
  title: event.title,
  description: event.description,
  location: event.location,
  guests: guestsOf(event, organizer),
});

const seriesOf = (event: CalendarEvent, organizer: string): InvitedSeries => ({
  ...fieldsOf(event, organizer),
  timeZone: event.timeZone,
  allDay: event.allDay,
  start: event.start,
  recurrence: recurrenceLines(event),
});

/**
 * Whether `ms` is the original start of an occurrence of a series starting at `start` with these
 * recurrence lines (in `zone`); true when there is no rule to expand, or one we cannot expand (what
 * we do not understand is kept, not forgotten).
 */
function isOccurrence(lines: string[], start: string, zone: string, ms: number): boolean {
  if (!lines.some((l) => /^RRULE[;:]/i.test(l))) return true;
  try {
    return occurrencesOf(lines, Date.parse(start), zone, ms, ms + 1).includes(ms);
  } catch {
    return true;
  }
}

/** The fields an occurrence holds apart from its series (all of them when the series was never recorded). */
function ownFields(occurrence: InvitedFields, series: InvitedSeries | null): Partial<InvitedFields> {
  const own: Partial<InvitedFields> = {};
  if (occurrence.title !== series?.title) own.title = occurrence.title;
  if (occurrence.description !== series?.description) own.description = occurrence.description;
  if (occurrence.location !== series?.location) own.location = occurrence.location;
  const sameGuests =
    series?.guests.length === occurrence.guests.length && occurrence.guests.every((g) => series.guests.includes(g));
  if (!sameGuests) own.guests = occurrence.guests;
  return own;
}

/**
 * The recorded occurrences that are still occurrences of the series as it now stands (a series moved
 * to another time or given a shorter rule no longer has them, at the provider either).
 */
function stillInSeries(event: CalendarEvent, recorded: Record<string, InvitedOccurrence>) {
  const keys = Object.keys(recorded);
  const lines = recurrenceLines(event);
  if (keys.length === 0 || !lines.some((l) => /^RRULE[;:]/i.test(l))) return {};
  const zone = event.allDay ? 'UTC' : event.timeZone;
  const kept: Record<string, InvitedOccurrence> = {};
  for (const key of keys) {
    if (isOccurrence(lines, event.start, zone, Date.parse(key))) kept[key] = recorded[key];
  }
  return kept;
}

/** The series' cancelled occurrences and its moved or changed ones (series fields under their own). */
function exceptionsOf(event: CalendarEvent, recorded: Record<string, InvitedOccurrence>, guests: string[]): Exceptions {
  const duration = Date.parse(event.end) - Date.parse(event.start);
  const exceptions: Exceptions = { cancelled: [], overrides: [] };
  for (const [key, o] of Object.entries(recorded).sort(([a], [b]) => a.localeCompare(b))) {
    if (o.cancelled) exceptions.cancelled.push(key);
    else if (o.start || o.own) {
      const own = o.own ?? {};
      exceptions.overrides.push({
        event: {
          ...event,
          recurringEventId: event.id,
          originalStart: key,
          recurrence: null,
          start: o.start ?? key,
          end: o.end ?? new Date(Date.parse(key) + duration).toISOString(),
          title: own.title ?? event.title,
          description: own.description !== undefined ? own.description : event.description,
          location: own.location !== undefined ? own.location : event.location,
        },
        attendees: own.guests ?? guests,
      });
    }
  }
  return exceptions;
}

/**
 * Sends what the event's guests need to hear, in the caller's transaction: the first REQUEST, an
 * updated REQUEST (SEQUENCE + 1) to the current guests and a CANCEL to removed ones, or a CANCEL to
 * everyone when the event is cancelled. Nothing is sent for an event that never had guests. An
 * updated series is described as it stands: its cancelled, moved and changed occurrences included.
 */
export async function notifyGuests(
  tx: Tx,
  workspaceId: string,
  event: CalendarEvent,
  organizer: string,
  change: 'created' | 'updated' | 'cancelled',
  /** Where guests' replies go: the workspace's inbound address (the iCalendar ORGANIZER's e-mail). */
  replyTo: string,
): Promise<void> {
  const from = { name: organizer, email: replyTo };
  const uid = uidOf(event.id);
  const guests = guestsOf(event, organizer);
  const known = await lockInvitation(tx, workspaceId, uid);
  if (!known) {
    if (change === 'cancelled' || guests.length === 0) return;
    await tx.insert(calendarInvitations).values({
      workspaceId,
      uid,
      eventId: event.id,
      sequence: 0,
      attendees: guests,
      series: seriesOf(event, organizer),
    });
    await enqueueMail(tx, workspaceId, mailFor(event, 'REQUEST', 0, guests, guests, from));
    return;
  }
  if (known.cancelled) return;
  const sequence = known.sequence + 1;
  const occurrences = change === 'cancelled' ? known.occurrences : stillInSeries(event, known.occurrences);
  if (change === 'cancelled') {
    await enqueueMail(tx, workspaceId, mailFor(event, 'CANCEL', sequence, known.attendees, known.attendees, from));
  } else {
    const removed = known.attendees.filter((a) => !guests.includes(a));
    const exceptions = exceptionsOf(event, occurrences, guests);
    if (guests.length)
      await enqueueMail(tx, workspaceId, mailFor(event, 'REQUEST', sequence, guests, guests, from, exceptions));
    if (removed.length) await enqueueMail(tx, workspaceId, mailFor(event, 'CANCEL', sequence, removed, removed, from));
  }
  await tx
    .update(calendarInvitations)
    .set({
      sequence,
      attendees: change === 'cancelled' ? known.attendees : guests,
      cancelled: change === 'cancelled',
      series: change === 'cancelled' ? known.series : seriesOf(event, organizer),
      occurrences,
      updatedAt: sql`now()`,
    })
    .where(and(eq(calendarInvitations.workspaceId, workspaceId), eq(calendarInvitations.uid, uid)));
}

/**
 * One occurrence of an invited series changed or was cancelled: the series' guests get a REQUEST
 * (or CANCEL) for that occurrence alone (series UID + RECURRENCE-ID), with the series' next SEQUENCE,
 * and the change is kept for later REQUESTs of the whole series. Nothing is sent when the series
 * never had guests, was cancelled, or the provider did not say which occurrence this is.
 */
export async function notifyOccurrence(
  tx: Tx,
  workspaceId: string,
  occurrence: CalendarEvent,
  organizer: string,
  change: 'updated' | 'cancelled',
  /** Where guests' replies go: the workspace's inbound address (the iCalendar ORGANIZER's e-mail). */
  replyTo: string,
): Promise<void> {
  const from = { name: organizer, email: replyTo };
  if (!occurrence.recurringEventId || !occurrence.originalStart) return;
  const uid = uidOf(occurrence.recurringEventId);
  const known = await lockInvitation(tx, workspaceId, uid);
  if (!known || known.cancelled) return;
  const sequence = known.sequence + 1;
  const guests = guestsOf(occurrence, organizer);
  const to = change === 'cancelled' || guests.length === 0 ? known.attendees : guests;
  const method = change === 'cancelled' ? 'CANCEL' : 'REQUEST';
  await enqueueMail(tx, workspaceId, mailFor(occurrence, method, sequence, to, to, from));
  const key = occurrenceKey(occurrence.originalStart);
  const before = known.occurrences[key] ?? {};
  const now: InvitedOccurrence =
    change === 'cancelled'
      ? { ...before, cancelled: true }
      : {
          ...before,
          start: occurrence.start,
          end: occurrence.end,
          own: ownFields(fieldsOf(occurrence, organizer), known.series),
        };
  await tx
    .update(calendarInvitations)
    .set({ sequence, occurrences: { ...known.occurrences, [key]: now }, updatedAt: sql`now()` })
    .where(and(eq(calendarInvitations.workspaceId, workspaceId), eq(calendarInvitations.uid, uid)));
}

const PARTSTAT: Record<string, 'accepted' | 'declined' | 'tentative'> = {
  ACCEPTED: 'accepted',
  DECLINED: 'declined',
  TENTATIVE: 'tentative',
};

/**
 * The occurrence a REPLY's RECURRENCE-ID names: an instant, a date (all-day), or a wall-clock time,
 * read in the series' zone. Undefined when it is none of these.
 */
function occurrenceOfReply(recurrenceId: string, series: InvitedSeries | null): string | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(recurrenceId)) return `${recurrenceId}T00:00:00.000Z`;
  const wallClock = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(recurrenceId);
  const ms = Date.parse(wallClock ? `${recurrenceId}Z` : recurrenceId);
  if (Number.isNaN(ms)) return undefined;
  const zone = series && !series.allDay ? series.timeZone : 'UTC';
  return new Date(wallClock && isTimeZone(zone) ? fromFloating(ms, zone) : ms).toISOString();
}

/**
 * A guest's iMIP REPLY (matched by UID and the guest's address among those invited): their answer is
 * kept and shown as the attendee's `responseStatus`. With a `recurrenceId` (RFC 5545 §3.8.4.4: an
 * instant, a `YYYY-MM-DD` date, or a wall-clock time in the series' zone) it answers that occurrence
 * alone; without, the series, whose occurrences without their own answer follow it. Returns false
 * when nothing matched.
 */
export async function recordInvitationReply(
  tx: Tx,
  workspaceId: string,
  reply: { uid: string; attendee: string; partstat: string; recurrenceId?: string | null },
): Promise<boolean> {
  const status = PARTSTAT[reply.partstat.toUpperCase()];
  const attendee = reply.attendee.replace(/^mailto:/i, '').toLowerCase();
  if (!status) return false;
  const known = await lockInvitation(tx, workspaceId, reply.uid);
  if (!known?.attendees.includes(attendee)) return false;
  let change: Partial<typeof calendarInvitations.$inferInsert>;
  if (reply.recurrenceId) {
    const key = occurrenceOfReply(reply.recurrenceId, known.series);
    if (!key) return false;
    // A date that is no occurrence of the series as invited (nor one of its moved or cancelled ones)
    // answers nothing: it is not recorded, and the mail says the REPLY matched no invitation.
    const series = known.series;
    if (
      !known.occurrences[key] &&
      series?.start &&
      series.recurrence &&
      !isOccurrence(series.recurrence, series.start, series.allDay ? 'UTC' : series.timeZone, Date.parse(key))
    )
      return false;
    const occurrence = known.occurrences[key] ?? {};
    change = {
      occurrences: {
        ...known.occurrences,
        [key]: { ...occurrence, replies: { ...occurrence.replies, [attendee]: status } },
      },
    };
  } else {
    change = { replies: { ...known.replies, [attendee]: status } };
  }
  await tx
    .update(calendarInvitations)
    .set({ ...change, updatedAt: sql`now()` })
    .where(and(eq(calendarInvitations.workspaceId, workspaceId), eq(calendarInvitations.uid, reply.uid)));
  return true;
}

interface Answers {
  replies: InvitationAnswers;
  occurrences: Record<string, InvitedOccurrence>;
}

/** Guests' iMIP replies to the invitations of these events (series ids included), by invitation uid. */
export async function repliesOf(tx: Tx, workspaceId: string, eventIds: string[]): Promise<Map<string, Answers>> {
  const uids = [...new Set(eventIds.map(uidOf))];
  if (uids.length === 0) return new Map();
  const rows = await tx
    .select({
      uid: calendarInvitations.uid,
      replies: calendarInvitations.replies,
      occurrences: calendarInvitations.occurrences,
    })
    .from(calendarInvitations)
    .where(and(eq(calendarInvitations.workspaceId, workspaceId), inList(calendarInvitations.uid, uids)));
  return new Map(rows.map((r) => [r.uid, { replies: r.replies, occurrences: r.occurrences }]));
}

/**
 * Guests' replies (from `repliesOf`) over the provider's attendee status, for events that sent
 * invitations: an occurrence shows the answer given for it alone, else the answer to its series.
 */
export function applyReplies(events: CalendarEvent[], byUid: Map<string, Answers>): void {
  if (byUid.size === 0) return;
  for (const e of events) {
    const answers = byUid.get(uidOf(e.id)) ?? (e.recurringEventId ? byUid.get(uidOf(e.recurringEventId)) : undefined);
    if (!answers) continue;
    const own =
      e.recurringEventId && e.originalStart ? answers.occurrences[occurrenceKey(e.originalStart)]?.replies : undefined;
    e.attendees = e.attendees.map((a) => ({
      ...a,
      responseStatus: own?.[a.email.toLowerCase()] ?? answers.replies[a.email.toLowerCase()] ?? a.responseStatus,
    }));
  }
}
