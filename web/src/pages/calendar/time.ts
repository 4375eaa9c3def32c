/**
 * Dates and times for the calendar pages, in the display zone: the clinic's (the workspace's time zone) when it
 * has one, else the browser's.
 *
 * The pages work on "shown" Dates: Dates whose *local* fields (getHours, getDate, …) are the wall clock in the
 * display zone. FullCalendar stays in its default 'local' mode and the local-Date arithmetic here (mondayOf,
 * dateInput, addDays, the form's inputs) is unchanged; instants from the API become shown Dates with `toShown`,
 * and Dates from the page (a slot clicked, an event dragged, the form's date and time) become instants again with
 * `toInstant`, only where they cross to or from the API. (FullCalendar's own `timeZone` option would need a
 * plugin and Luxon, and every other date on the page, the form's inputs, the week's bounds and the day's tasks,
 * would still need converting by hand.)
 */
import { tzOffset } from '@date-fns/tz';

export const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const canonical = new Map<string, string | null>();
/** The zone's name as Intl spells it (an alias and its zone made one), or null when Intl does not know it. */
function canonicalZone(zone: string): string | null {
  let name = canonical.get(zone);
  if (name === undefined) {
    try {
      name = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    } catch {
      name = null;
    }
    canonical.set(zone, name);
  }
  return name;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
/** How far `zone`'s clocks are ahead of UTC at `at`, in ms (@date-fns/tz reads it from Intl). */
const offsetAt = (zone: string, at: number) => Math.round(tzOffset(zone, new Date(at)) * MINUTE);

/** The wall clock in `zone` at `at`, as a local Date. */
function wallClock(at: number, zone: string): Date {
  const wall = new Date(at + offsetAt(zone, at));
  return new Date(
    wall.getUTCFullYear(),
    wall.getUTCMonth(),
    wall.getUTCDate(),
    wall.getUTCHours(),
    wall.getUTCMinutes(),
    wall.getUTCSeconds(),
    wall.getUTCMilliseconds(),
  );
}

/**
 * A local Date's fields read as the wall clock in `zone`. The instants that can have that wall clock are found
 * with the offsets a day before and a day after (no zone changes its offset twice within two days), so the
 * answer never depends on the browser's own zone (@date-fns/tz's TZDate constructor does, when the browser's
 * zone changes its clocks the same night).
 */
function instantOf(shown: Date, zone: string): Date {
  const wall = Date.UTC(
    shown.getFullYear(),
    shown.getMonth(),
    shown.getDate(),
    shown.getHours(),
    shown.getMinutes(),
    shown.getSeconds(),
    shown.getMilliseconds(),
  );
  const before = offsetAt(zone, wall - DAY);
  const after = offsetAt(zone, wall + DAY);
  const fits = [wall - before, wall - after].filter((at) => offsetAt(zone, at) === wall - at);
  // Repeated (an autumn night): the first of the two. Skipped (a spring night): read with the offset from before
  // the change, which lands the gap's length later, as JavaScript's own Date and Temporal's 'compatible' do.
  return new Date(fits.length > 0 ? Math.min(...fits) : wall - before);
}

/**
 * The browser's own zone needs no converting (and then times are exactly what they always were). Asked at each
 * conversion: a device's zone can change while the page is open (Chromium changes a live page's zone).
 */
const isBrowserZone = (zone: string) => canonicalZone(zone) === canonicalZone(localZone());

/**
 * `instant` as a shown Date: its local fields are the wall clock in `zone` (13:30Z in America/New_York in
 * November: a Date reading 08:30 wherever the browser is).
 *
 * One limit of shown Dates: a wall time that the *browser's* own zone skips (its spring-forward hour, when it
 * has one and it is not the display zone's) cannot be a local Date there, and shows an hour later.
 */
export function toShown(instant: Date | string | number, zone: string): Date {
  const at = new Date(instant).getTime();
  return isBrowserZone(zone) ? new Date(at) : wallClock(at, zone);
}

/**
 * The instant a shown Date stands for: its local fields read as the wall clock in `zone`. At DST changes (the
 * rule of JavaScript's own Date and of Temporal's 'compatible'): a time the zone skips (2:30 on 2026-03-08 in New
 * York) is read as if the clock had not yet sprung forward, so it lands the gap's length later (3:30 EDT); a time
 * the zone repeats (1:30 on 2026-11-01) is the first of the two (1:30 EDT).
 */
export function toInstant(shown: Date, zone: string): Date {
  return isBrowserZone(zone) ? new Date(shown.getTime()) : instantOf(shown, zone);
}

/** The display zone and how to cross it; made by `displayZone` (in a page, `useDisplayZone`). */
export interface DisplayZone {
  /** The IANA zone calendar times are shown and entered in (sent as `timeZone` with drafts and day reads). */
  zone: string;
  /** The browser's own zone, when this was made. */
  browser: string;
  /** True when `zone` is the clinic's (the workspace's) and not the same as `browser`. */
  clinic: boolean;
  shown: (instant: Date | string | number) => Date;
  instant: (shown: Date) => Date;
  /** The time now, shown (today's column, the now line, "Today"). */
  now: () => Date;
}

/**
 * The one decision of which zone the calendar pages use: the workspace's when it has one that Intl knows, else
 * the browser's (as it always was). `browser` and `clinic` are as of now (`useDisplayZone` makes it again when the
 * device's zone changes); the conversions ask the browser's zone each time, so one kept from before the change
 * (a dialog left open) still converts right.
 */
export function displayZone(workspaceZone: string | null | undefined, browser = localZone()): DisplayZone {
  const zone = workspaceZone && canonicalZone(workspaceZone) ? workspaceZone : browser;
  const shown = (instant: Date | string | number) => toShown(instant, zone);
  return {
    zone,
    browser,
    clinic: canonicalZone(zone) !== canonicalZone(browser),
    shown,
    instant: (d) => toInstant(d, zone),
    now: () => shown(Date.now()),
  };
}

/** "New York time (EST)", "Kolkata time (GMT+5:30)", "UTC": the zone by its city and its abbreviation then. */
export function describeZone(zone: string, at: Date | number = Date.now(), until?: Date | number): string {
  const short = (when: Date | number) => {
    try {
      return (
        new Intl.DateTimeFormat(undefined, { timeZone: zone, timeZoneName: 'short' })
          .formatToParts(when)
          .find((p) => p.type === 'timeZoneName')?.value ?? null
      );
    } catch {
      return null;
    }
  };
  const first = short(at);
  // A week that crosses a DST change has both ("EDT/EST").
  const last = until === undefined ? first : short(until);
  const abbreviation = first && last && first !== last ? `${first}/${last}` : first;
  const city =
    zone.includes('/') && !zone.startsWith('Etc/') ? zone.slice(zone.lastIndexOf('/') + 1).replace(/_/g, ' ') : null;
  if (!city) return abbreviation ?? zone;
  return abbreviation ? `${city} time (${abbreviation})` : `${city} time`;
}

/**
 * "Times in New York time (EST), the clinic's": said beside times shown in the clinic's zone on a device in another
 * (the dialogs and the patient record; the calendar's own label also names the device's zone). Null otherwise.
 */
export function clinicZoneNote(shownZone: DisplayZone, at: Date | number = Date.now()): string | null {
  return shownZone.clinic ? `Times in ${describeZone(shownZone.zone, at)}, the clinic's` : null;
}

const pad = (n: number) => String(n).padStart(2, '0');
export const dateInput = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
export const timeInput = (d: Date) => `${pad(d.getHours())}:${pad(d.getMinutes())}`;

/**
 * When an event starts or ends, shown (in `zone`). An all-day event's times are its dates (the API gives them at
 * 00:00Z): the date itself at local midnight, so that it is the same day in every zone.
 */
export function shownTime(iso: string, allDay: boolean, zone: string): Date {
  if (!allDay) return toShown(iso, zone);
  const [y, m, d] = iso.slice(0, 10).split('-').map(Number);
  return new Date(y ?? 1970, (m ?? 1) - 1, d ?? 1);
}

/** `YYYY-MM-DD` + `HH:MM` → a shown Date (invalid input → null); `toInstant` makes it the time it stands for. */
export function fromInputs(date: string, time: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const t = /^(\d{2}):(\d{2})$/.exec(time);
  if (!m || !t) return null;
  const d = new Date(+m[1], +m[2] - 1, +m[3], +t[1], +t[2]);
  return Number.isNaN(d.getTime()) ? null : d;
}

const minutesOf = (hhmm: string) => {
  const m = /^(\d{2}):(\d{2})$/.exec(hhmm);
  return m ? +m[1] * 60 + +m[2] : null;
};

/**
 * The end time after the start moved from `oldStart` to `newStart`: the visit keeps its length (a
 * 10:00–10:30 visit moved to 14:00 ends at 14:30), never past 23:59. An unreadable or non-positive
 * length leaves the end as it was.
 */
export function keepLength(oldStart: string, oldEnd: string, newStart: string): string {
  const [a, b, c] = [minutesOf(oldStart), minutesOf(oldEnd), minutesOf(newStart)];
  if (a === null || b === null || c === null || b <= a) return oldEnd;
  const end = Math.min(c + (b - a), 23 * 60 + 59);
  return `${pad(Math.floor(end / 60))}:${pad(end % 60)}`;
}

/** The day a `YYYY-MM-DD` names, else `today` (shown Dates both). */
export function parseDateParam(value: string | undefined, today: Date): Date {
  const m = value ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  const d = m ? new Date(+m[1], +m[2] - 1, +m[3]) : new Date(today);
  return Number.isNaN(d.getTime()) ? new Date(today) : d;
}

/**
 * Monday 00:00 of the week holding `d`. Made from the Monday's own date: a day whose midnight the browser's zone
 * skips (Santiago's 2026-09-06, Cairo's 2026-04-24) starts at 1:00, and an hour moved back from it would stay 1:00.
 */
export function mondayOf(d: Date): Date {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() - ((d.getDay() + 6) % 7));
}

export const addDays = (d: Date, days: number) => {
  const out = new Date(d);
  out.setDate(out.getDate() + days);
  return out;
};

/** The time of a shown Date, "8:30 AM". */
export const formatTime = (shown: Date) =>
  new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }).format(shown);

export const formatDay = (d: Date) =>
  new Intl.DateTimeFormat(undefined, { weekday: 'long', month: 'long', day: 'numeric' }).format(d);

export function formatRange(from: Date, to: Date): string {
  const f = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
  return `${f.format(from)} – ${f.format(addDays(to, -1))}, ${to.getFullYear()}`;
}

/** Repeat choices of the form, as RRULE lines. */
export const REPEATS = {
  none: { label: 'Does not repeat', rule: null },
  daily: { label: 'Every day', rule: 'RRULE:FREQ=DAILY' },
  weekdays: { label: 'Every weekday (Mon–Fri)', rule: 'RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' },
  weekly: { label: 'Every week', rule: 'RRULE:FREQ=WEEKLY' },
  biweekly: { label: 'Every 2 weeks', rule: 'RRULE:FREQ=WEEKLY;INTERVAL=2' },
  monthly: { label: 'Every month', rule: 'RRULE:FREQ=MONTHLY' },
} as const;
export type Repeat = keyof typeof REPEATS;

/** A readable sentence for an event's recurrence lines (best effort). */
export function describeRecurrence(lines: string[] | null): string | null {
  const rule = lines?.find((l) => l.startsWith('RRULE:'));
  if (!rule) return null;
  const known = Object.values(REPEATS).find(
    (r) => r.rule && rule.startsWith(r.rule) && !rule.slice(r.rule.length).includes('BYDAY'),
  );
  if (known) return known.label;
  if (rule.includes('FREQ=WEEKLY')) return 'Repeats weekly';
  if (rule.includes('FREQ=DAILY')) return 'Repeats daily';
  if (rule.includes('FREQ=MONTHLY')) return 'Repeats monthly';
  return 'Repeats';
}

// Screen-reader names have no use for the narrow and thin spaces some locales put in times and ranges.
const plainSpaces = (text: string) => text.replace(/[\u00a0\u2009\u202f]/g, ' ');

/**
 * When an event is, in words a screen reader reads whole: "Tue, Nov 24, 1:30–1:45 PM", "Wed, Dec 9,
 * 11:30 AM–12:15 PM", "Wed, Dec 9, all day", "Wed, Dec 9, 11:00 PM – Thu, Dec 10, 1:00 AM".
 * `end` is exclusive (an all-day event on the 9th ends at midnight of the 10th).
 */
export function describeWhen(start: Date, end: Date | null, allDay: boolean): string {
  const day = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric' });
  const time = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
  const sameDay = (a: Date, b: Date) => dateInput(a) === dateInput(b);
  if (allDay) {
    const last = end && end > start ? addDays(end, -1) : start;
    return plainSpaces(
      sameDay(start, last) ? `${day.format(start)}, all day` : `${day.format(start)} – ${day.format(last)}, all day`,
    );
  }
  if (!end || end <= start) return plainSpaces(`${day.format(start)}, ${time.format(start)}`);
  if (!sameDay(start, end)) {
    return plainSpaces(`${day.format(start)}, ${time.format(start)} – ${day.format(end)}, ${time.format(end)}`);
  }
  // "1:30–1:45 PM": the start drops its AM/PM when the end has the same one.
  const period = (d: Date) => time.formatToParts(d).find((p) => p.type === 'dayPeriod')?.value;
  const startText =
    period(start) && period(start) === period(end)
      ? time
          .formatToParts(start)
          .filter((p) => p.type !== 'dayPeriod')
          .map((p) => p.value)
          .join('')
          .trim()
      : time.format(start);
  return plainSpaces(`${day.format(start)}, ${startText}–${time.format(end)}`);
}
