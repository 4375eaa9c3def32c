// RFC 5545 expansion of a series' RRULE/EXDATE/RDATE lines, shared by the calendar emulators and the
// calendar module's conflict check. Occurrences are computed by the rrule library in "floating"
// wall-clock time (the local time of the series' zone written as if it were UTC), then each is
// placed in the zone: a 09:00 series stays at 09:00 local across daylight-saving changes.
import rrulePkg from 'rrule';
import { rruleProblem } from './rrule-check.js';
import { fromFloating, toFloating } from './zoned-time.js';

const { RRule, RRuleSet } = rrulePkg;

/** `20261124T090000` or `20261124T140000Z` or `20261124` → epoch ms (floating unless Z). */
function parseStamp(value: string, timeZone: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?$/.exec(value.trim());
  if (!m) return undefined;
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0));
  return m[7] ? toFloating(ms, timeZone) : ms;
}

export class RecurrenceError extends Error {}

const DAY_MS = 24 * 3600_000;
type RuleOptions = ReturnType<typeof RRule.parseString> & { dtstart: Date };

/** The first day of a 400-year cycle of the Gregorian calendar, which repeats after it (weekdays and ISO weeks too). */
const CYCLE_START = Date.UTC(9600, 0, 1);
const verdicts = new Map<string, boolean>();

/**
 * Whether a rule has no occurrence at all (its parts never meet: 30 February, the 366th day of January, every 7th
 * day when that is never one of its weekdays). The rrule library would step through every period to the year 9999
 * looking for one: seconds for a daily rule, with the process held. Asked over one 400-year cycle, the last one
 * rrule can reach, so no answer takes more than its 400 years: first the parts alone as a yearly rule (a few ms),
 * then the rule itself with its INTERVAL and BYSETPOS, its start moved by whole periods into the cycle. Verdicts
 * are kept per rule and start.
 */
export function neverOccurs(options: RuleOptions): boolean {
  const key = JSON.stringify({ ...options, dtstart: options.dtstart.getTime() });
  const known = verdicts.get(key);
  if (known !== undefined) return known;
  const { Frequency } = rrulePkg;
  const start = options.dtstart;
  const timeOfDay = start.getTime() - Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  const cycle = new Date(CYCLE_START);
  const { count: _count, until: _until, ...unbounded } = options;
  let never = false;
  const ordinals = (options.byweekday as { n?: number }[] | undefined)?.some((d) => typeof d === 'object' && d.n);
  const filtered = options.byweekno || options.byyearday || options.bymonthday || options.byweekday;
  // The parts alone (without ordinals, which mean "of the month" in a monthly rule and "of the year" here).
  if (filtered && !ordinals) {
    const parts = new RRule({
      freq: Frequency.YEARLY,
      dtstart: new Date(CYCLE_START + timeOfDay),
      bymonth: options.bymonth,
      bymonthday: options.bymonthday,
      byyearday: options.byyearday,
      byweekno: options.byweekno,
      byweekday: options.byweekday,
      wkst: options.wkst,
    });
    never = parts.after(cycle, true) === null;
  }
  if (!never) never = new RRule(advanced(unbounded, CYCLE_START)).after(cycle, true) === null;
  if (verdicts.size >= 1000) verdicts.clear();
  verdicts.set(key, never);
  return never;
}

/**
 * The rule with its start moved forward by whole periods (INTERVAL days, weeks, months or years) to a few periods
 * before `floatingFrom`, with what the rule took from its start (the day of the month, the month) written out, so
 * that it has the same occurrences from there on. The rrule library steps through every occurrence from the start
 * to reach a window: a daily series asked about a day in the year 9999 took seconds and held the process (the
 * calendar emulators expand in the API's process). A rule with COUNT keeps its start (its occurrences are counted
 * from it; at most 999). Exported for its tests.
 */
export function advanced(options: RuleOptions, floatingFrom: number): RuleOptions {
  const start = options.dtstart;
  if (options.count != null || options.freq === undefined || floatingFrom - start.getTime() < 400 * DAY_MS) {
    return options;
  }
  const interval = Math.max(1, options.interval ?? 1);
  // rrule takes these from the start when the rule names none of them (RFC 5545 §3.3.10): kept as they were.
  const derives = !(options.byweekno || options.byyearday || options.bymonthday || options.byweekday);
  const { Frequency } = rrulePkg;
  const atTime = (year: number, month: number) =>
    new Date(Date.UTC(year, month, 1, start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds()));
  switch (options.freq) {
    case Frequency.DAILY:
    case Frequency.WEEKLY: {
      // Whole periods keep the weekday and a week's place in an INTERVAL of weeks (WKST included).
      const period = (options.freq === Frequency.DAILY ? 1 : 7) * interval * DAY_MS;
      const periods = Math.floor((floatingFrom - start.getTime()) / period) - 2;
      return periods > 0 ? { ...options, dtstart: new Date(start.getTime() + periods * period) } : options;
    }
    case Frequency.MONTHLY: {
      const months =
        (new Date(floatingFrom).getUTCFullYear() - start.getUTCFullYear()) * 12 +
        new Date(floatingFrom).getUTCMonth() -
        start.getUTCMonth();
      const periods = Math.floor(months / interval) - 2;
      if (periods <= 0) return options;
      return {
        ...options,
        ...(derives ? { bymonthday: [start.getUTCDate()] } : {}),
        dtstart: atTime(start.getUTCFullYear(), start.getUTCMonth() + periods * interval),
      };
    }
    case Frequency.YEARLY: {
      const periods = Math.floor((new Date(floatingFrom).getUTCFullYear() - start.getUTCFullYear()) / interval) - 2;
      if (periods <= 0) return options;
      return {
        ...options,
        ...(derives ? { bymonthday: [start.getUTCDate()], bymonth: options.bymonth ?? [start.getUTCMonth() + 1] } : {}),
        dtstart: atTime(start.getUTCFullYear() + periods * interval, 0),
      };
    }
    default:
      return options;
  }
}

/**
 * Original starts (epoch ms instants) of a series' occurrences whose start lies in [fromMs, toMs),
 * for a series starting at `startMs` in `timeZone` with RRULE/EXDATE/RDATE `lines`.
 */
export function occurrences(
  lines: string[],
  startMs: number,
  timeZone: string,
  fromMs: number,
  toMs: number,
): number[] {
  const dtstart = new Date(toFloating(startMs, timeZone));
  const set = new RRuleSet();
  for (const raw of lines) {
    const line = raw.trim();
    const [head, value = ''] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1)];
    const name = head.split(';')[0].toUpperCase();
    const zone = /TZID=([^;:]+)/i.exec(head)?.[1] ?? timeZone;
    if (name === 'RRULE') {
      // Refused as the providers refuse it (and so an hourly or secondly series cannot stall a list).
      const problem = rruleProblem(value);
      if (problem) throw new RecurrenceError(`Invalid recurrence rule: ${problem}`);
      let options: ReturnType<typeof RRule.parseString>;
      try {
        options = RRule.parseString(value);
      } catch {
        throw new RecurrenceError(`Invalid recurrence rule: ${line}`);
      }
      if (options.freq === undefined) throw new RecurrenceError(`Invalid recurrence rule: ${line}`);
      if (options.until) options.until = new Date(toFloating(options.until.getTime(), timeZone));
      if (neverOccurs({ ...options, dtstart }))
        throw new RecurrenceError('Invalid recurrence rule: no date ever matches all of its parts');
      const floatingFrom = toFloating(fromMs, timeZone) - 2 * DAY_MS;
      set.rrule(new RRule(advanced({ ...options, dtstart }, floatingFrom)));
    } else if (name === 'EXDATE' || name === 'RDATE') {
      for (const v of value.split(',')) {
        const at = parseStamp(v, zone);
        if (at === undefined) throw new RecurrenceError(`Invalid date in ${name}: ${v}`);
        // A stamp in another zone than the series': move it to the series' floating clock.
        const floating = zone === timeZone ? at : toFloating(fromFloating(at, zone), timeZone);
        if (name === 'EXDATE') set.exdate(new Date(floating));
        else set.rdate(new Date(floating));
      }
    } else if (line !== '') {
      throw new RecurrenceError(`Unsupported recurrence line: ${line}`);
    }
  }
  const floatingFrom = new Date(toFloating(fromMs, timeZone) - 2 * DAY_MS);
  const floatingTo = new Date(toFloating(toMs, timeZone) + 2 * DAY_MS);
  return set
    .between(floatingFrom, floatingTo, true)
    .map((d) => fromFloating(d.getTime(), timeZone))
    .filter((ms) => ms >= fromMs && ms < toMs);
}
