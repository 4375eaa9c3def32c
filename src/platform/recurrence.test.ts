// Expanding a series in a window far after its start: the rule's start is moved forward by whole periods
// (`advanced`), which must leave every occurrence where it was. Checked against the plain expansion (the rrule
// library stepping from the series' start) for each kind of rule, in zones with daylight-saving changes.
import rrulePkg from 'rrule';
import { describe, expect, it } from 'vitest';
import { advanced, neverOccurs, occurrences, RecurrenceError } from './recurrence.js';
import { rruleProblem } from './rrule-check.js';
import { fromFloating, toFloating } from './zoned-time.js';

const { RRule } = rrulePkg;
const DAY = 86_400_000;

/** The occurrences in [from, to) as the rrule library finds them from the series' start (no moving forward). */
function plain(rule: string, startMs: number, zone: string, fromMs: number, toMs: number): number[] {
  const dtstart = new Date(toFloating(startMs, zone));
  const options = RRule.parseString(rule);
  if (options.until) options.until = new Date(toFloating(options.until.getTime(), zone));
  return new RRule({ ...options, dtstart })
    .between(new Date(toFloating(fromMs, zone) - 2 * DAY), new Date(toFloating(toMs, zone) + 2 * DAY), true)
    .map((d) => fromFloating(d.getTime(), zone))
    .filter((ms) => ms >= fromMs && ms < toMs);
}

const RULES = [
  'FREQ=DAILY',
  'FREQ=DAILY;INTERVAL=3',
  'FREQ=DAILY;BYDAY=MO,WE,FR',
  'FREQ=WEEKLY',
  'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH',
  'FREQ=WEEKLY;INTERVAL=3;BYDAY=SU,MO;WKST=SU',
  'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20400101T000000Z',
  'FREQ=MONTHLY',
  'FREQ=MONTHLY;INTERVAL=5',
  'FREQ=MONTHLY;BYDAY=2TU',
  'FREQ=MONTHLY;BYDAY=-1FR;INTERVAL=2',
  'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1',
  'FREQ=MONTHLY;BYMONTHDAY=15,-1',
  'FREQ=YEARLY',
  'FREQ=YEARLY;INTERVAL=4',
  'FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
  'FREQ=YEARLY;BYMONTH=6,12',
  'FREQ=YEARLY;BYYEARDAY=100',
];
// Starts that test what a rule takes from its start: the 31st (months without one are skipped), 29 February
// (only leap years), a Sunday late in a week, an evening that is another day in UTC.
const STARTS = [
  ['2026-01-31T09:00:00Z', 'America/New_York'],
  ['2028-02-29T23:30:00Z', 'Europe/Berlin'],
  ['2026-11-29T14:15:00Z', 'Australia/Sydney'],
  ['2026-03-08T06:30:00Z', 'America/Los_Angeles'],
] as const;

describe('occurrences far after the series starts', () => {
  for (const rule of RULES) {
    it(`${rule}: the same occurrences as expanding from the start`, () => {
      for (const [start, zone] of STARTS) {
        const startMs = Date.parse(start);
        // Windows 3 to 40 years on, a few weeks wide (across DST changes in March and October/November).
        for (const [years, days] of [
          [3, 40],
          [17.2, 70],
          [40.6, 35],
        ]) {
          const fromMs = startMs + years * 365.25 * DAY;
          const toMs = fromMs + days * DAY;
          const expected = plain(rule, startMs, zone, fromMs, toMs);
          expect(occurrences([`RRULE:${rule}`], startMs, zone, fromMs, toMs), `${start} ${zone} +${years}y`).toEqual(
            expected,
          );
        }
      }
    });
  }

  it('moves the start forward, near the window, for rules without COUNT', () => {
    const dtstart = new Date(Date.UTC(2026, 0, 31, 9));
    const far = Date.UTC(9999, 11, 1);
    for (const rule of ['FREQ=DAILY', 'FREQ=WEEKLY;INTERVAL=2', 'FREQ=MONTHLY', 'FREQ=YEARLY;INTERVAL=4']) {
      const moved = advanced({ ...RRule.parseString(rule), dtstart }, far);
      expect(moved.dtstart.getTime(), rule).toBeGreaterThan(far - 20 * 365 * DAY);
      expect(moved.dtstart.getTime(), rule).toBeLessThan(far);
    }
    // A counted rule keeps its start: its occurrences are counted from it.
    const counted = { ...RRule.parseString('FREQ=DAILY;COUNT=5'), dtstart };
    expect(advanced(counted, far)).toBe(counted);
  });

  it('finds the occurrence of a daily series on the last day of the year 9999, in its zone', () => {
    const startMs = Date.parse('2026-11-30T14:00:00Z'); // 09:00 in New York
    const fromMs = Date.parse('9999-12-31T00:00:00Z');
    expect(
      occurrences(['RRULE:FREQ=DAILY'], startMs, 'America/New_York', fromMs, fromMs + DAY).map((ms) =>
        new Date(ms).toISOString(),
      ),
    ).toEqual(['9999-12-31T14:00:00.000Z']);
    // With an EXDATE on that day, none.
    expect(
      occurrences(
        ['RRULE:FREQ=DAILY', 'EXDATE;TZID=America/New_York:99991231T090000'],
        startMs,
        'America/New_York',
        fromMs,
        fromMs + DAY,
      ),
    ).toEqual([]);
  });
});

describe('rules that never occur', () => {
  const start = Date.parse('2026-05-04T13:00:00Z'); // a Monday, 09:00 in New York
  const week = (rule: string) => () =>
    occurrences([`RRULE:${rule}`], start, 'America/New_York', start, start + 7 * DAY);

  // Each of these stepped to the year 9999 looking for a date (8–12 s each, the process held): now refused at once.
  it.each([
    'FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30',
    'FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=30',
    'FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31',
    'FREQ=YEARLY;BYYEARDAY=366;BYMONTH=1',
    'FREQ=DAILY;INTERVAL=7;BYDAY=TU', // every 7th day from a Monday is always a Monday
    'FREQ=MONTHLY;BYMONTHDAY=1;BYSETPOS=2',
    'FREQ=MONTHLY;BYDAY=-1MO;BYMONTHDAY=1',
  ])('%s is refused as never occurring', (rule) => {
    expect(week(rule)).toThrow(RecurrenceError);
    expect(week(rule)).toThrow(/no date ever matches/);
  });

  it.each([
    'FREQ=YEARLY;BYDAY=5MO;BYMONTH=2', // a fifth Monday in February: 2044
    'FREQ=MONTHLY;BYDAY=-2MO;BYMONTHDAY=15', // February of a year starting on a Thursday
    'FREQ=DAILY;INTERVAL=7;BYDAY=MO',
    'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29',
    'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;BYSETPOS=2',
  ])('%s occurs, rarely or not', (rule) => {
    const dtstart = new Date(toFloating(start, 'America/New_York'));
    expect(neverOccurs({ ...RRule.parseString(rule), dtstart })).toBe(false);
  });

  it('refuses parts RFC 5545 gives only to some frequencies, and a BYSETPOS that can pick nothing', () => {
    expect(rruleProblem('FREQ=WEEKLY;BYDAY=2TU')).toMatch(/monthly and yearly/);
    expect(rruleProblem('FREQ=MONTHLY;BYWEEKNO=20')).toMatch(/BYWEEKNO is for yearly/);
    expect(rruleProblem('FREQ=DAILY;BYYEARDAY=100')).toMatch(/BYYEARDAY is for yearly/);
    expect(rruleProblem('FREQ=WEEKLY;BYMONTHDAY=3')).toMatch(/not for weekly/);
    expect(rruleProblem('FREQ=DAILY;BYDAY=MO;BYSETPOS=2')).toMatch(/daily rule can only be 1 or -1/);
    expect(rruleProblem('FREQ=DAILY;BYDAY=MO;BYSETPOS=1')).toBeUndefined();
    expect(rruleProblem('FREQ=WEEKLY;BYDAY=MO;BYSETPOS=2')).toMatch(/more dates than a week/);
    expect(rruleProblem('FREQ=MONTHLY;BYSETPOS=1')).toMatch(/has none/);
    // Still taken.
    expect(rruleProblem('FREQ=MONTHLY;BYDAY=2TU')).toBeUndefined();
    expect(rruleProblem('FREQ=WEEKLY;BYDAY=MO,TU;BYSETPOS=-1')).toBeUndefined();
    expect(rruleProblem('FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1')).toBeUndefined();
  });
});
