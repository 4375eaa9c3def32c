// Patient-aware scheduling (Advanced+, contract §5.2): an appointment may not overlap another
// appointment of its patient or anything on its host provider's calendars, and providers can be
// ranked for a slot by free/busy (their calendars, read in parallel) and the patient's preference.
import type { RequestContext } from '../../platform/context.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError } from '../../platform/errors.js';
import { occurrences, RecurrenceError } from '../../platform/recurrence.js';
import { hasFeature, requireFeature } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import { fromFloating } from '../../platform/zoned-time.js';
import { workspaceProviders } from '../identity/index.js';
import { getPatient } from '../patients/index.js';
import {
  invalidDraft,
  MAX_READ_WINDOW_MS,
  MAX_WINDOW_MS,
  type SessionCache,
  sessionCache,
  targets,
  windowOf,
} from './events.js';
import type { CalendarEvent } from './schema.js';

export interface Slot {
  start: string;
  end: string;
  patientId: string | null | undefined;
  hostUserId: string;
  /** The event being moved (and, for a series, its instances) is not its own conflict. */
  exclude?: (e: CalendarEvent) => boolean;
  /**
   * A keyed create's retry: the event an earlier attempt of the same create made (its answer lost to a timeout or
   * a crash) is not its own conflict. Asked only of the events the slot clashes with.
   */
  madeEarlier?: (e: CalendarEvent) => Promise<boolean>;
  /** A repeating appointment: its RRULE/EXDATE/RDATE lines, expanded in `timeZone`. */
  recurrence?: string[] | null;
  timeZone?: string;
}

/**
 * How far ahead a repeating appointment's occurrences are checked: the longest window a list reads.
 * Later occurrences are not read (a weekly series for a year would read every calendar for a year).
 */
export const SERIES_CHECK_DAYS = 62;

/** The times a slot takes: itself, or each occurrence of its series within the check horizon. */
function slotTimes(slot: Slot): { start: number; end: number }[] {
  const start = Date.parse(slot.start);
  const length = Date.parse(slot.end) - start;
  if (!slot.recurrence?.length) return [{ start, end: start + length }];
  let starts: number[];
  try {
    starts = occurrences(slot.recurrence, start, slot.timeZone ?? 'UTC', start, start + SERIES_CHECK_DAYS * 86_400_000);
  } catch (err) {
    // Whatever the lines hold that cannot be expanded is the draft's problem, never a 500.
    throw invalidDraft(err instanceof RecurrenceError ? err.message : 'This repeat rule could not be read');
  }
  return (starts.length ? starts : [start]).map((s) => ({ start: s, end: s + length }));
}

/**
 * Blocks its host's time: not cancelled, and busy by its provider's own free/busy flag (Google `transparency`,
 * Graph `showAs`). All-day events count when marked busy ("at the CME conference"); notices are free.
 */
const busy = (e: CalendarEvent) => e.status !== 'cancelled' && e.showAs === 'busy';
/**
 * Whether the event holds its host: what their calendar marks busy, and every timed visit with a patient whatever
 * its flag (a visit is an appointment of the host's; "free" on it does not make the host bookable twice).
 */
const holdsHost = (e: CalendarEvent) => busy(e) || (e.status !== 'cancelled' && !!e.patientId && !e.allDay);
/**
 * The window to read for a slot: padded by 14 hours each side, since an all-day event is its days in its own
 * zone (UTC−12 to UTC+14) and a provider lists it by the UTC instants it stores; `span` then filters exactly.
 */
const ALL_DAY_PAD_MS = 14 * 3600_000;
const paddedWindow = (from: number, to: number) => ({
  timeMin: new Date(from - ALL_DAY_PAD_MS).toISOString(),
  timeMax: new Date(to + ALL_DAY_PAD_MS).toISOString(),
});

/** When an event takes place: an all-day one is its days (dates at 00:00Z) in its own zone, midnight to midnight. */
function span(e: CalendarEvent): { start: number; end: number } {
  const [start, end] = [Date.parse(e.start), Date.parse(e.end)];
  if (!e.allDay) return { start, end };
  try {
    return { start: fromFloating(start, e.timeZone), end: fromFloating(end, e.timeZone) };
  } catch {
    return { start, end };
  }
}

/** An event's title in a reason or a message: short, and something when it has none. */
const named = (e: CalendarEvent) => {
  const title = e.title.trim();
  return title.length > 60 ? `${title.slice(0, 59)}…` : title;
};
const allDayBusy = (e: CalendarEvent) => `Busy: all day${named(e) ? ` (${named(e)})` : ''}`;

/** 409 `scheduling_conflict` with `conflicts: [{eventId, start, end}]` when the slot overlaps. Advanced+ only. */
export async function checkConflicts(deps: AppDeps, ctx: RequestContext, slot: Slot, sessions: SessionCache) {
  if (!slot.patientId || !hasFeature(ctx.tier, 'patient_aware_scheduling')) return;
  const times = slotTimes(slot);
  if (Math.max(...times.map((t) => t.end)) - times[0].start > MAX_READ_WINDOW_MS)
    throw invalidDraft('A visit with a patient may span at most 366 days');
  const { items } = await windowOf(
    deps,
    ctx,
    await targets(deps, ctx),
    paddedWindow(times[0].start, Math.max(...times.map((t) => t.end))),
    sessions,
  );
  const overlaps = (e: CalendarEvent) => {
    const { start, end } = span(e);
    return times.some((t) => start < t.end && end > t.start);
  };
  // The host is held by what their calendars mark busy and by their visits; the patient by every visit of theirs at
  // that time (marked free or not), and by an all-day one marked busy.
  const holdsPatient = (e: CalendarEvent) =>
    e.patientId === slot.patientId && e.status !== 'cancelled' && (!e.allDay || busy(e));
  let clashes = items
    .filter((e) => !slot.exclude?.(e))
    .filter(overlaps)
    .filter((e) => holdsPatient(e) || (holdsHost(e) && e.hostUserId === slot.hostUserId));
  if (clashes.length && slot.madeEarlier) {
    const earlier = await Promise.all(clashes.map(slot.madeEarlier));
    clashes = clashes.filter((_, i) => !earlier[i]);
  }
  if (clashes.length) {
    const [only] = clashes;
    throw new AppError(
      'scheduling_conflict',
      409,
      clashes.length === 1 && only.allDay && only.hostUserId === slot.hostUserId
        ? `The provider is busy all day${named(only) ? ` (${named(only)})` : ''}`
        : `This time overlaps ${clashes.length === 1 ? 'another appointment' : `${clashes.length} other events`} of the patient or the provider`,
      { conflicts: clashes.map((e) => ({ eventId: e.id, start: e.start, end: e.end })) },
    );
  }
}

export interface ProviderMatch {
  userId: string;
  name: string;
  calendarId: string | null;
  free: boolean;
  preferred: boolean;
  reasons: string[];
}

/** Providers for a slot: free and preferred first (Advanced+). */
export async function matchProviders(
  deps: AppDeps,
  ctx: RequestContext,
  query: { patientId: string; start: string; end: string },
): Promise<{ items: ProviderMatch[] }> {
  requireFeature(ctx, 'patient_aware_scheduling');
  if (!(Date.parse(query.start) < Date.parse(query.end))) throw invalidDraft('The slot must end after it starts');
  if (Date.parse(query.end) - Date.parse(query.start) > MAX_WINDOW_MS)
    throw new AppError('invalid_window', 422, 'The slot may span at most 62 days');
  const patient = await getPatient(deps, ctx, query.patientId);
  const [providers, calendars] = await Promise.all([
    withTenant(deps.db, ctx, (tx) => workspaceProviders(tx, ctx.workspaceId)),
    targets(deps, ctx),
  ]);
  // Every calendar, as the conflict rule reads them: a provider hosting a visit on the front desk's
  // calendar is not free then either.
  const { items, warnings } = await windowOf(
    deps,
    ctx,
    calendars,
    paddedWindow(Date.parse(query.start), Date.parse(query.end)),
    sessionCache(deps, ctx, 'calendar.events.list'),
  );
  const out = providers.map((p): ProviderMatch => {
    const own = calendars.filter((c) => c.hostUserId === p.userId);
    const calendar = own.find((c) => c.primary) ?? own[0];
    const unknown = own.some((c) => warnings.some((w) => w.calendar === c.id));
    const [from, to] = [Date.parse(query.start), Date.parse(query.end)];
    const clashes = items.filter((e) => {
      if (!holdsHost(e) || e.hostUserId !== p.userId) return false;
      const { start, end } = span(e);
      return start < to && end > from;
    });
    const allDay = clashes.find((e) => e.allDay);
    const more = clashes.length - 1;
    const preferred = patient.preferredProviderId === p.userId;
    const reasons: string[] = [];
    if (!calendar) reasons.push('No connected calendar');
    else if (unknown) reasons.push('Calendar could not be read');
    else if (allDay)
      reasons.push(`${allDayBusy(allDay)}${more ? ` and ${more === 1 ? '1 more event' : `${more} more events`}` : ''}`);
    else if (clashes.length)
      reasons.push(`Busy: ${clashes.length === 1 ? '1 event' : `${clashes.length} events`} at this time`);
    else reasons.push('Free at this time');
    if (preferred) reasons.push("The patient's preferred provider");
    return {
      userId: p.userId,
      name: p.name,
      calendarId: calendar?.id ?? null,
      free: Boolean(calendar) && !unknown && clashes.length === 0,
      preferred,
      reasons,
    };
  });
  out.sort(
    (a, b) =>
      Number(b.free) - Number(a.free) || Number(b.preferred) - Number(a.preferred) || a.name.localeCompare(b.name),
  );
  return { items: out };
}
