// RFC 5545 RRULE ↔ Microsoft Graph recurrence (pattern + range). The rrule library parses and
// writes the RRULE; only the mapping between the two vocabularies is ours.
import rrulePkg from 'rrule';
import { localDateTime } from './zoned.js';

const { RRule, Frequency } = rrulePkg;

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const INDEX = ['first', 'second', 'third', 'fourth'] as const;

export interface GraphRecurrence {
  pattern: {
    type: 'daily' | 'weekly' | 'absoluteMonthly' | 'relativeMonthly' | 'absoluteYearly' | 'relativeYearly';
    interval: number;
    daysOfWeek?: string[];
    dayOfMonth?: number;
    month?: number;
    index?: string;
    firstDayOfWeek?: string;
  };
  range: {
    type: 'endDate' | 'noEnd' | 'numbered';
    startDate: string;
    endDate?: string;
    numberOfOccurrences?: number;
    recurrenceTimeZone?: string;
  };
}

export class UnsupportedRecurrence extends Error {}

const weekdayOf = (iso: string, timeZone: string) => {
  const [y, m, d] = localDateTime(iso, timeZone).slice(0, 10).split('-').map(Number);
  // 0 = Monday, like rrule's Weekday.
  return (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7;
};

/**
 * The Graph recurrence for RFC 5545 lines starting at `start` in `timeZone`. Graph has no EXDATE or
 * RDATE: those lines are refused (UnsupportedRecurrence) rather than silently dropped.
 */
export function toGraphRecurrence(lines: string[], start: string, timeZone: string): GraphRecurrence {
  const ruleLines = lines.filter((l) => /^RRULE:/i.test(l.trim()));
  const other = lines.filter((l) => !/^RRULE:/i.test(l.trim()) && l.trim() !== '');
  if (ruleLines.length !== 1 || other.length > 0) {
    throw new UnsupportedRecurrence('Microsoft calendars take exactly one RRULE line (no EXDATE or RDATE)');
  }
  let options: ReturnType<typeof RRule.parseString>;
  try {
    options = RRule.parseString(ruleLines[0].trim().replace(/^RRULE:/i, ''));
  } catch {
    throw new UnsupportedRecurrence('The RRULE could not be read');
  }
  const interval = options.interval ?? 1;
  const startDate = localDateTime(start, timeZone).slice(0, 10);
  const weekdays = (options.byweekday ? [options.byweekday].flat() : []).map((w) =>
    typeof w === 'number' ? { weekday: w, n: undefined } : typeof w === 'string' ? { weekday: 0, n: undefined } : w,
  );
  const dayNames = weekdays.map((w) => DAYS[w.weekday]);
  const bymonthday = options.bymonthday !== undefined ? [options.bymonthday].flat()[0] : undefined;
  const setpos = options.bysetpos !== undefined ? [options.bysetpos].flat()[0] : weekdays[0]?.n;
  const index = setpos === -1 ? 'last' : setpos ? INDEX[setpos - 1] : undefined;
  const startDay = Number(startDate.slice(8, 10));
  const startMonth = Number(startDate.slice(5, 7));

  let pattern: GraphRecurrence['pattern'];
  switch (options.freq) {
    case Frequency.DAILY:
      pattern = { type: 'daily', interval };
      break;
    case Frequency.WEEKLY:
      pattern = {
        type: 'weekly',
        interval,
        daysOfWeek: dayNames.length ? dayNames : [DAYS[weekdayOf(start, timeZone)]],
        firstDayOfWeek: 'sunday',
      };
      break;
    case Frequency.MONTHLY:
      pattern =
        dayNames.length && index
          ? { type: 'relativeMonthly', interval, daysOfWeek: dayNames, index }
          : { type: 'absoluteMonthly', interval, dayOfMonth: bymonthday ?? startDay };
      break;
    case Frequency.YEARLY:
      pattern =
        dayNames.length && index
          ? {
              type: 'relativeYearly',
              interval,
              daysOfWeek: dayNames,
              index,
              month: [options.bymonth ?? startMonth].flat()[0],
            }
          : {
              type: 'absoluteYearly',
              interval,
              dayOfMonth: bymonthday ?? startDay,
              month: [options.bymonth ?? startMonth].flat()[0],
            };
      break;
    default:
      throw new UnsupportedRecurrence('Microsoft calendars repeat daily, weekly, monthly or yearly');
  }
  const range: GraphRecurrence['range'] = options.until
    ? {
        type: 'endDate',
        startDate,
        endDate: localDateTime(options.until.toISOString(), timeZone).slice(0, 10),
        recurrenceTimeZone: timeZone,
      }
    : options.count
      ? { type: 'numbered', startDate, numberOfOccurrences: options.count, recurrenceTimeZone: timeZone }
      : { type: 'noEnd', startDate, recurrenceTimeZone: timeZone };
  return { pattern, range };
}

/** RFC 5545 lines for a Graph recurrence (what the event API shows for a series). */
export function fromGraphRecurrence(r: GraphRecurrence): string[] {
  const p = r.pattern;
  const byweekday = (p.daysOfWeek ?? [])
    .map((d) => DAYS.indexOf(d.toLowerCase() as (typeof DAYS)[number]))
    .filter((i) => i >= 0)
    .map((i) => {
      const day = [RRule.MO, RRule.TU, RRule.WE, RRule.TH, RRule.FR, RRule.SA, RRule.SU][i];
      const n = p.index ? (p.index === 'last' ? -1 : INDEX.indexOf(p.index as (typeof INDEX)[number]) + 1) : 0;
      return p.type.startsWith('relative') && n ? day.nth(n) : day;
    });
  const freq = {
    daily: Frequency.DAILY,
    weekly: Frequency.WEEKLY,
    absoluteMonthly: Frequency.MONTHLY,
    relativeMonthly: Frequency.MONTHLY,
    absoluteYearly: Frequency.YEARLY,
    relativeYearly: Frequency.YEARLY,
  }[p.type];
  const rule = new RRule({
    freq,
    interval: p.interval > 1 ? p.interval : undefined,
    byweekday: byweekday.length ? byweekday : undefined,
    bymonthday: p.type.startsWith('absolute') && p.type !== 'absoluteYearly' ? p.dayOfMonth : undefined,
    bymonth: p.type.endsWith('Yearly') ? p.month : undefined,
    count: r.range.type === 'numbered' ? r.range.numberOfOccurrences : undefined,
    until: r.range.type === 'endDate' && r.range.endDate ? new Date(`${r.range.endDate}T23:59:59Z`) : undefined,
  });
  return [rule.toString()];
}
