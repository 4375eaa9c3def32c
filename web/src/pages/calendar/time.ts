/** Local dates and times for the calendar forms (the browser's zone). */

export const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const pad = (n: number) => String(n).padStart(2, '0');
export const dateInput = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
export const timeInput = (d: Date) => `${pad(d.getHours())}:${pad(d.getMinutes())}`;

/**
 * When an event starts or ends as this browser shows it. An all-day event's times are its dates (the API gives
 * them at 00:00Z): the date itself at local midnight, so that it is the same day in every zone.
 */
export function shownTime(iso: string, allDay: boolean): Date {
  if (!allDay) return new Date(iso);
  const [y, m, d] = iso.slice(0, 10).split('-').map(Number);
  return new Date(y ?? 1970, (m ?? 1) - 1, d ?? 1);
}

/** `YYYY-MM-DD` + `HH:MM` in the browser's zone → Date (invalid input → null). */
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

export function parseDateParam(value: string | undefined): Date {
  const m = value ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  const d = m ? new Date(+m[1], +m[2] - 1, +m[3]) : new Date();
  return Number.isNaN(d.getTime()) ? new Date() : d;
}

/** Monday 00:00 of the week holding `d`. */
export function mondayOf(d: Date): Date {
  const out = new Date(d.getFullYear(), d.getMonth(), d.getDate());
  out.setDate(out.getDate() - ((out.getDay() + 6) % 7));
  return out;
}

export const addDays = (d: Date, days: number) => {
  const out = new Date(d);
  out.setDate(out.getDate() + days);
  return out;
};

export const formatTime = (iso: string) =>
  new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }).format(new Date(iso));

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
