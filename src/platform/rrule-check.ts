// What a calendar event's RFC 5545 RRULE may say, checked the same way by our calendar API (a 422
// before any provider is called) and by the calendar emulators (a 400, as the providers refuse).
// The rrule library's parser is lenient (it reads `BYDAY=XX` and `FREQ=SECONDLY` without a word),
// so each part is checked here against RFC 5545 §3.3.10 and against what Google and Microsoft
// calendars can hold: events repeat at most daily (Graph has no finer pattern; a time of day is the
// event's start), at most MAX_COUNT times, at an INTERVAL of 1–MAX_INTERVAL.

export const MAX_COUNT = 999;
export const MAX_INTERVAL = 999;

const FREQS = new Set(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);
const DAY = '(MO|TU|WE|TH|FR|SA|SU)';

const int = (text: string, min: number, max: number, signed = false) => {
  if (!(signed ? /^[+-]?\d{1,3}$/ : /^\d{1,4}$/).test(text)) return false;
  const n = Number(text);
  return Math.abs(n) >= min && Math.abs(n) <= max && n !== 0;
};
const list = (text: string, each: (item: string) => boolean) => text !== '' && text.split(',').every(each);

/** Each part's check (RFC 5545 value ranges); parts not listed are refused. */
const PARTS: Record<string, (value: string) => boolean> = {
  FREQ: (v) => FREQS.has(v),
  INTERVAL: (v) => int(v, 1, MAX_INTERVAL),
  COUNT: (v) => int(v, 1, MAX_COUNT),
  UNTIL: (v) => {
    const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z?)?$/.exec(v);
    if (!m || +m[1] < 1) return false;
    const at = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)));
    // A real date and time (no 30 February, no hour 25).
    return at.getUTCDate() === +m[3] && at.getUTCMonth() === +m[2] - 1 && at.getUTCHours() === +(m[4] ?? 0);
  },
  BYDAY: (v) =>
    list(v, (d) => {
      const m = new RegExp(`^([+-]?\\d{1,2})?${DAY}$`).exec(d);
      return !!m && (m[1] === undefined || int(m[1], 1, 53, true));
    }),
  BYMONTHDAY: (v) => list(v, (d) => int(d, 1, 31, true)),
  BYYEARDAY: (v) => list(v, (d) => int(d, 1, 366, true)),
  BYWEEKNO: (v) => list(v, (d) => int(d, 1, 53, true)),
  BYMONTH: (v) => list(v, (d) => int(d, 1, 12)),
  BYSETPOS: (v) => list(v, (d) => int(d, 1, 366, true)),
  WKST: (v) => new RegExp(`^${DAY}$`).test(v),
};

/**
 * Why an RRULE value (the part after `RRULE:`) cannot be a calendar event's repeat rule, in words
 * for a person; `undefined` when it can.
 */
export function rruleProblem(value: string): string | undefined {
  const seen = new Set<string>();
  const values = new Map<string, string>();
  for (const part of value.trim().split(';')) {
    const at = part.indexOf('=');
    const name = (at > 0 ? part.slice(0, at) : part).toUpperCase();
    const v = at > 0 ? part.slice(at + 1).toUpperCase() : '';
    if (name === 'BYHOUR' || name === 'BYMINUTE' || name === 'BYSECOND')
      return 'An event repeats on days; its time of day is its start, so BYHOUR, BYMINUTE and BYSECOND are not taken';
    const check = PARTS[name];
    if (!check) return `${name.slice(0, 20) || 'An empty part'} is not part of a repeat rule`;
    if (seen.has(name)) return `${name} is given twice`;
    seen.add(name);
    values.set(name, v);
    if (!check(v)) {
      if (name === 'FREQ') return 'An event repeats daily, weekly, monthly or yearly (FREQ)';
      if (name === 'COUNT') return `COUNT is from 1 to ${MAX_COUNT}`;
      if (name === 'INTERVAL') return `INTERVAL is from 1 to ${MAX_INTERVAL}`;
      return `${name}=${v.slice(0, 40)} is not valid`;
    }
  }
  if (!seen.has('FREQ')) return 'A repeat rule needs FREQ';
  if (seen.has('COUNT') && seen.has('UNTIL')) return 'A repeat rule ends by COUNT or by UNTIL, not both';
  return combinationProblem(values.get('FREQ') ?? '', values);
}

/**
 * Parts that RFC 5545 §3.3.10 allows only with some frequencies, and BYSETPOS where it could never pick a date:
 * the rrule library steps through every period to the year 9999 looking for a date such a rule never has, which
 * held the process for seconds (a weekly rule picking the 2nd of one weekday; a daily one picking a 2nd date).
 */
function combinationProblem(freq: string, parts: Map<string, string>): string | undefined {
  const byDay = parts.get('BYDAY')?.split(',') ?? [];
  if (freq !== 'MONTHLY' && freq !== 'YEARLY' && byDay.some((d) => /\d/.test(d)))
    return 'BYDAY with a number (such as 2TU, the second Tuesday) is for monthly and yearly rules';
  if (parts.has('BYWEEKNO') && freq !== 'YEARLY') return 'BYWEEKNO is for yearly rules';
  if (parts.has('BYYEARDAY') && freq !== 'YEARLY') return 'BYYEARDAY is for yearly rules';
  if (parts.has('BYMONTHDAY') && freq === 'WEEKLY') return 'BYMONTHDAY is not for weekly rules';
  const setPos = parts.get('BYSETPOS');
  if (setPos === undefined) return undefined;
  if (!['BYDAY', 'BYMONTHDAY', 'BYYEARDAY', 'BYWEEKNO', 'BYMONTH'].some((p) => parts.has(p)))
    return 'BYSETPOS picks among the dates the other BY parts give, and this rule has none';
  // A daily rule's period is one day: only its first or last date (±1, that day itself) can be picked.
  if (freq === 'DAILY' && setPos.split(',').every((n) => Math.abs(Number(n)) !== 1))
    return 'BYSETPOS in a daily rule can only be 1 or -1 (each day is one date)';
  if (freq === 'WEEKLY') {
    const most = Math.max(1, new Set(byDay).size);
    if (setPos.split(',').every((n) => Math.abs(Number(n)) > most))
      return `BYSETPOS=${setPos.slice(0, 40)} asks for more dates than a week of this rule holds (${most})`;
  }
  return undefined;
}
