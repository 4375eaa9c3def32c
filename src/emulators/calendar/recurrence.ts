// RFC 5545 expansion for the calendar emulators: the platform's (shared with the calendar module's
// conflict check), and the instance-id stamps Google puts on occurrences.
export { occurrences, RecurrenceError } from '../../platform/recurrence.js';
export { fromFloating, isTimeZone as isZone, toFloating } from '../../platform/zoned-time.js';

/** `20261124T140000Z`: the suffix Google puts on instance ids. */
export const stamp = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
export const parseIdStamp = (s: string): number | undefined => {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : undefined;
};
