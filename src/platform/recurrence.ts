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
      set.rrule(new RRule({ ...options, dtstart }));
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
  const day = 24 * 3600_000;
  const floatingFrom = new Date(toFloating(fromMs, timeZone) - 2 * day);
  const floatingTo = new Date(toFloating(toMs, timeZone) + 2 * day);
  return set
    .between(floatingFrom, floatingTo, true)
    .map((d) => fromFloating(d.getTime(), timeZone))
    .filter((ms) => ms >= fromMs && ms < toMs);
}
