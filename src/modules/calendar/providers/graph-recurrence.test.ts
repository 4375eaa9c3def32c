import { describe, expect, it } from 'vitest';
import { decodeEventId, encodeEventId } from '../ids.js';
import { fromGraphRecurrence, toGraphRecurrence, UnsupportedRecurrence } from './graph-recurrence.js';
import { localDateTime } from './zoned.js';

describe('RRULE → Graph recurrence', () => {
  it('maps BYDAY with INTERVAL and UNTIL to a weekly pattern with an end date in the event zone', () => {
    const r = toGraphRecurrence(
      ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20261222T235959Z'],
      '2026-11-24T14:00:00Z',
      'America/New_York',
    );
    expect(r).toEqual({
      pattern: { type: 'weekly', interval: 2, daysOfWeek: ['tuesday', 'thursday'], firstDayOfWeek: 'sunday' },
      range: {
        type: 'endDate',
        startDate: '2026-11-24',
        endDate: '2026-12-22',
        recurrenceTimeZone: 'America/New_York',
      },
    });
  });

  it('uses the local start date (late evening in New York is the next day in UTC)', () => {
    const r = toGraphRecurrence(['RRULE:FREQ=DAILY;COUNT=5'], '2026-11-25T02:30:00Z', 'America/New_York');
    expect(r.range).toEqual({
      type: 'numbered',
      startDate: '2026-11-24',
      numberOfOccurrences: 5,
      recurrenceTimeZone: 'America/New_York',
    });
  });

  it('maps the nth weekday of a month to relativeMonthly', () => {
    const r = toGraphRecurrence(['RRULE:FREQ=MONTHLY;BYDAY=2WE'], '2026-12-09T15:00:00Z', 'UTC');
    expect(r.pattern).toEqual({ type: 'relativeMonthly', interval: 1, daysOfWeek: ['wednesday'], index: 'second' });
  });

  it('weekly without BYDAY repeats on the start weekday', () => {
    const r = toGraphRecurrence(['RRULE:FREQ=WEEKLY'], '2026-11-23T15:00:00Z', 'Europe/Berlin');
    expect(r.pattern.daysOfWeek).toEqual(['monday']);
    expect(r.range.type).toBe('noEnd');
  });

  it('refuses EXDATE/RDATE and unreadable rules instead of dropping them', () => {
    expect(() =>
      toGraphRecurrence(['RRULE:FREQ=DAILY', 'EXDATE:20261125T150000Z'], '2026-11-24T15:00:00Z', 'UTC'),
    ).toThrow(UnsupportedRecurrence);
    expect(() => toGraphRecurrence(['RRULE:FREQ=SOMETIMES'], '2026-11-24T15:00:00Z', 'UTC')).toThrow(
      UnsupportedRecurrence,
    );
  });

  it('round-trips through the Graph shape', () => {
    const graph = toGraphRecurrence(
      ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;COUNT=6'],
      '2026-11-24T14:00:00Z',
      'UTC',
    );
    expect(fromGraphRecurrence(graph)).toEqual(['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;COUNT=6']);
  });
});

describe('zoned wall clock', () => {
  it('follows daylight saving (New York, November change)', () => {
    expect(localDateTime('2026-10-27T13:00:00Z', 'America/New_York')).toBe('2026-10-27T09:00:00');
    expect(localDateTime('2026-11-03T14:00:00Z', 'America/New_York')).toBe('2026-11-03T09:00:00');
  });
});

describe('event ids', () => {
  it('round-trip and refuse anything else with 404 event_not_found', () => {
    const id = encodeEventId('cal_01jabcdefghjkmnpqrst', 'abc_20261124T150000Z');
    expect(decodeEventId(id)).toEqual({
      calendarId: 'cal_01jabcdefghjkmnpqrst',
      providerEventId: 'abc_20261124T150000Z',
    });
    for (const bad of [
      '',
      'cev_',
      'evt_x',
      `cev_${Buffer.from('nope').toString('base64url')}`,
      `cev_${Buffer.from('cal_01jabcdefghjkmnpqrst\n\u0000x').toString('base64url')}`,
    ]) {
      expect(() => decodeEventId(bad)).toThrowError(expect.objectContaining({ code: 'event_not_found' }));
    }
  });
});
