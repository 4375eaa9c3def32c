// Atrium's event ids: `cev_` + the calendar and the provider's event id, sealed into one opaque
// string. Resolving one needs no provider call, so an id of another workspace is refused (404)
// before any token is read: its calendar is not among this workspace's.
import { AppError } from '../../platform/errors.js';

const CALENDAR_ID = /^cal_[0-9a-z]{10,40}$/;

export const eventNotFound = () => new AppError('event_not_found', 404, 'Event not found');
export const calendarNotFound = () => new AppError('calendar_not_found', 404, 'Calendar not found');

export function encodeEventId(calendarId: string, providerEventId: string): string {
  return `cev_${Buffer.from(`${calendarId}\n${providerEventId}`, 'utf8').toString('base64url')}`;
}

export function decodeEventId(id: string): { calendarId: string; providerEventId: string } {
  if (!id.startsWith('cev_') || id.length > 2000) throw eventNotFound();
  const text = Buffer.from(id.slice(4), 'base64url').toString('utf8');
  const cut = text.indexOf('\n');
  const calendarId = text.slice(0, cut);
  const providerEventId = text.slice(cut + 1);
  if (
    cut < 0 ||
    !CALENDAR_ID.test(calendarId) ||
    !providerEventId ||
    [...providerEventId].some((ch) => ch.charCodeAt(0) < 0x20)
  ) {
    throw eventNotFound();
  }
  return { calendarId, providerEventId };
}
