// The calendar emulators' shared model: accounts with calendars and events, series expanded into
// instances with per-occurrence exceptions. Each emulator maps it to its provider's JSON.
import { randomBytes } from 'node:crypto';
import { fromFloating, occurrences, parseIdStamp, stamp } from './recurrence.js';

export type Response = 'needsAction' | 'accepted' | 'declined' | 'tentative';

export interface Attendee {
  email: string;
  name: string | null;
  response: Response;
}

/** What an occurrence may change on its own (Google: an exception; Graph: type "exception"). */
export interface Override {
  title?: string;
  description?: string | null;
  location?: string | null;
  startMs?: number;
  endMs?: number;
  attendees?: Attendee[];
  cancelled?: boolean;
  transparency?: Transparency;
  showAs?: GraphShowAs;
}

/** Google's `transparency` (absent: opaque, the API's default). */
export type Transparency = 'opaque' | 'transparent';
/** Graph's `showAs` (absent: busy, Graph's default). */
export const GRAPH_SHOW_AS = ['free', 'tentative', 'busy', 'oof', 'workingElsewhere', 'unknown'] as const;
export type GraphShowAs = (typeof GRAPH_SHOW_AS)[number];

export interface EmuEvent {
  id: string;
  /** Microsoft Graph's `transactionId`: a create repeated with it returns the event it made. */
  transactionId?: string;
  calendarId: string;
  title: string;
  description: string | null;
  location: string | null;
  startMs: number;
  endMs: number;
  timeZone: string;
  /** The zone's name as the client wrote it, when the provider echoes that (Graph: a Windows name). */
  zoneName?: string;
  /** Google: a timed event given without a timeZone (shown without one; the calendar's zone applies). */
  zoneUnset?: boolean;
  allDay: boolean;
  recurrence: string[] | null;
  /** The provider's own recurrence object as it was sent (Graph pattern + range), echoed back. */
  providerRecurrence?: unknown;
  attendees: Attendee[];
  organizer: string;
  conference: { kind: 'meet' | 'teams'; id: string } | null;
  cancelled: boolean;
  /** Google's free/busy flag as the client set it; an occurrence may hold its own (an exception). */
  transparency?: Transparency;
  /** Google's `eventType`, fixed at insert (absent: "default"). */
  eventType?: string;
  /** Graph's free/busy flag as the client set it; an occurrence may hold its own. */
  showAs?: GraphShowAs;
  /** Keyed by the occurrence's original start (epoch ms, as a string). */
  exceptions: Record<string, Override>;
  extended?: unknown;
  created: string;
  updated: string;
  sequence: number;
}

export interface EmuCalendar {
  id: string;
  name: string;
  primary: boolean;
  timeZone: string;
  color: string;
}

export interface Account {
  email: string;
  calendars: EmuCalendar[];
  events: EmuEvent[];
}

/** One event or one occurrence of a series, as listed. */
export interface Instance extends EmuEvent {
  recurringEventId: string | null;
  originalStartMs: number | null;
}

const ALPHABET = 'abcdefghijklmnopqrstuv0123456789';
export const newEventId = () => Array.from(randomBytes(20), (b) => ALPHABET[b % ALPHABET.length]).join('');

export function newAccount(email: string, primaryId: string, name: string): Account {
  return {
    email,
    calendars: [{ id: primaryId, name, primary: true, timeZone: 'UTC', color: '#039be5' }],
    events: [],
  };
}

const overlaps = (e: { startMs: number; endMs: number }, from: number, to: number) => e.startMs < to && e.endMs > from;

function instanceOf(event: EmuEvent, originalStartMs: number): Instance {
  const override = event.exceptions[String(originalStartMs)] ?? {};
  const startMs = override.startMs ?? originalStartMs;
  return {
    ...event,
    ...override,
    id: `${event.id}_${stamp(originalStartMs)}`,
    startMs,
    endMs: override.endMs ?? startMs + (event.endMs - event.startMs),
    recurrence: null,
    providerRecurrence: undefined,
    exceptions: {},
    cancelled: override.cancelled === true,
    recurringEventId: event.id,
    originalStartMs,
  };
}

const DAY_MS = 86_400_000;

/**
 * Events and occurrences of a calendar overlapping [from, to), sorted by start; cancelled ones only
 * when asked. `allDayZone`: all-day events are stored as their dates (at 00:00Z) and overlap the
 * window as those days in this zone (Google: the calendar's), not in UTC.
 */
export function expand(
  account: Account,
  calendarId: string,
  from: number,
  to: number,
  withCancelled = false,
  allDayZone?: string,
): Instance[] {
  const out: Instance[] = [];
  const inWindow = (e: { startMs: number; endMs: number; allDay: boolean }) =>
    allDayZone && e.allDay
      ? overlaps({ startMs: fromFloating(e.startMs, allDayZone), endMs: fromFloating(e.endMs, allDayZone) }, from, to)
      : overlaps(e, from, to);
  for (const event of account.events) {
    if (event.calendarId !== calendarId) continue;
    if (!event.recurrence) {
      if (inWindow(event) && (withCancelled || !event.cancelled)) {
        out.push({ ...event, recurringEventId: null, originalStartMs: null });
      }
      continue;
    }
    if (event.cancelled && !withCancelled) continue;
    const duration = event.endMs - event.startMs;
    // A day either side: an all-day occurrence's day in the zone may begin up to 14 hours from 00:00Z.
    const pad = allDayZone && event.allDay ? DAY_MS : 0;
    const seen = new Set<number>();
    for (const original of occurrences(
      event.recurrence,
      event.startMs,
      event.timeZone,
      from - duration - pad,
      to + pad,
    )) {
      seen.add(original);
      const instance = instanceOf(event, original);
      if (inWindow(instance) && (withCancelled || !instance.cancelled)) out.push(instance);
    }
    // An occurrence moved into the window from outside it.
    for (const key of Object.keys(event.exceptions)) {
      const original = Number(key);
      if (seen.has(original) || event.exceptions[key].startMs === undefined) continue;
      const instance = instanceOf(event, original);
      if (inWindow(instance) && (withCancelled || !instance.cancelled) && isOccurrence(event, original)) {
        out.push(instance);
      }
    }
  }
  return out.sort((a, b) => a.startMs - b.startMs || a.id.localeCompare(b.id));
}

export function isOccurrence(event: EmuEvent, originalStartMs: number): boolean {
  if (!event.recurrence) return false;
  return occurrences(event.recurrence, event.startMs, event.timeZone, originalStartMs, originalStartMs + 1).includes(
    originalStartMs,
  );
}

export type Target =
  | { kind: 'event'; event: EmuEvent }
  | { kind: 'instance'; event: EmuEvent; originalStartMs: number; instance: Instance };

/** An event id or an instance id (`<series>_<yyyymmddThhmmssZ>`) of the account; calendar optional. */
export function findTarget(account: Account, id: string, calendarId?: string): Target | undefined {
  const inCalendar = (e: EmuEvent) => calendarId === undefined || e.calendarId === calendarId;
  const direct = account.events.find((e) => e.id === id && inCalendar(e));
  if (direct) return { kind: 'event', event: direct };
  const cut = id.lastIndexOf('_');
  if (cut <= 0) return undefined;
  const series = account.events.find((e) => e.id === id.slice(0, cut) && inCalendar(e));
  const original = parseIdStamp(id.slice(cut + 1));
  if (!series || original === undefined || !isOccurrence(series, original)) return undefined;
  return { kind: 'instance', event: series, originalStartMs: original, instance: instanceOf(series, original) };
}

export const meetCode = () => {
  const letters = () => Array.from(randomBytes(4), (b) => 'abcdefghijklmnopqrstuvwxyz'[b % 26]);
  const a = letters();
  const b = letters();
  const c = letters();
  return `${a.slice(0, 3).join('')}-${b.join('')}-${c.slice(0, 3).join('')}`;
};
