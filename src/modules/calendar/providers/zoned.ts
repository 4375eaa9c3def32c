// Wall-clock helpers for the adapters (Graph takes local times); the zone arithmetic is platform's.
import { WINDOWS_ZONES } from '../../../platform/windows-zones.js';
import { isTimeZone } from '../../../platform/zoned-time.js';

export { WINDOWS_ZONES } from '../../../platform/windows-zones.js';
export { fromFloating, isTimeZone, localDateTime, toFloating } from '../../../platform/zoned-time.js';

/**
 * The IANA zone of a zone name from Graph: a Windows name through CLDR's table, an IANA name as it
 * is; `tzone://Microsoft/Utc`, `tzone://Microsoft/Custom` (a zone defined in the event itself, which
 * we do not read), an unknown name or none → UTC, so nothing downstream (Intl, iCalendar) meets a
 * name it cannot read.
 */
export function ianaZoneOf(name: string | null | undefined): string {
  if (!name) return 'UTC';
  const mapped = WINDOWS_ZONES[name];
  if (mapped) return mapped === 'Etc/UTC' ? 'UTC' : mapped;
  return isTimeZone(name) ? name : 'UTC';
}
