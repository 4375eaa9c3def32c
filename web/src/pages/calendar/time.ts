/** Local dates and times for the calendar forms (the browser's zone). */

export const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const pad = (n: number) => String(n).padStart(2, '0');
export const dateInput = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
export const timeInput = (d: Date) => `${pad(d.getHours())}:${pad(d.getMinutes())}`;

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
