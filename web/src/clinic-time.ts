/**
 * The zone the web app writes times in outside the calendar (messages, the inbox, notes, lists, mail, audit): the
 * clinic's (`me.workspace.timeZone`) when the workspace has one, else the device's. The calendar decides the same
 * way (pages/calendar/time.ts); one clinic's record then reads one clock, whatever zone a device is on (a note
 * "written 1:12 PM" beside a visit "at 8:30 AM" on a device in UTC was the same morning in New York).
 * Set from every `/me` answer (session.ts).
 */
import { knowsZone } from '../../src/platform/time-zone-names.js';

let zone: string | undefined;

/** The clinic's zone from `/me` (null: none set, or signed out): the device's own is used then. */
export function setClinicZone(name: string | null): void {
  zone = name && knowsZone(name) ? name : undefined;
}

/** `at` written with `options` in the clinic's zone (else the device's). */
export function formatInstant(at: Date, options: Intl.DateTimeFormatOptions): string {
  return new Intl.DateTimeFormat(undefined, { ...options, timeZone: zone }).format(at);
}

/** The date (`YYYY-MM-DD`) `at` falls on in the clinic's zone (else the device's). */
export function clinicDate(at: Date = new Date()): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}
