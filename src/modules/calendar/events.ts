// The events API of contract §5.2: one provider-resolution step (calendar or event id → this
// workspace's calendar and connection, 404 before any token is read), one token step per
// connection per operation, merged lists with warnings, write-result codes from the adapters.

import { and, eq, lt } from 'drizzle-orm';
import rrulePkg from 'rrule';
import { writeAudit } from '../../platform/audit/audit.js';
import type { RequestContext } from '../../platform/context.js';
import { sha256Hex } from '../../platform/crypto.js';
import type { Tx } from '../../platform/db/client.js';
import { withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { inboundAddress } from '../../platform/mail/inbound-address.js';
import { listConnections } from '../../platform/oauth/index.js';
import { rruleProblem } from '../../platform/rrule-check.js';
import { requireFeature } from '../../platform/tiers.js';
import type { AppDeps } from '../../platform/types.js';
import { toFloating } from '../../platform/zoned-time.js';
import { isMember, organizationWorkspacesOf } from '../identity/index.js';
import { patientExists } from '../patients/index.js';
import { cancelRooms, closeProviderRooms, type EventRoom, requestRoom, roomsForEvents } from '../telehealth/index.js';
import {
  type AppointmentRow,
  appointmentOf,
  appointmentsOf,
  emitAppointment,
  rowKey,
  saveAppointment,
} from './appointments.js';
import { providerUnavailable, sessionFor, storedCalendars } from './connections.js';
import { calendarNotFound, decodeEventId, encodeEventId, eventNotFound } from './ids.js';
import { applyReplies, notifyGuests, notifyOccurrence, repliesOf } from './invitations.js';
import { ProviderError } from './providers/http.js';
import { resolveProvider, resolveZoom } from './providers/index.js';
import type { ConferenceProduct, ProviderDraft, ProviderEvent, ProviderSession } from './providers/types.js';
import { isTimeZone } from './providers/zoned.js';
import { checkConflicts } from './scheduling.js';
import type { CalendarEvent, Draft, ListEventsQuery, PartialDraft, Warning } from './schema.js';
import { moveSession, releaseSessions } from './sessions.js';
import { calendarCalendars, calendarZoomAttempts } from './tables.js';

const { RRule } = rrulePkg;
export const MAX_WINDOW_MS = 62 * 24 * 3600_000;
/**
 * The longest window the calendars are ever read for (a visit's conflicts, a series of authorized sessions):
 * expanding every repeating series over years is work one request must not make every workspace wait for.
 */
export const MAX_READ_WINDOW_MS = 366 * 24 * 3600_000;

type CalendarRow = typeof calendarCalendars.$inferSelect;
export type Target = CalendarRow & { connectionStatus: 'active' | 'reauth_required' };

export const invalidDraft = (detail: string) => new AppError('invalid_draft', 422, detail);

function present(
  ctx: { workspaceId: string },
  cal: CalendarRow,
  e: ProviderEvent,
  row?: AppointmentRow,
): CalendarEvent {
  const zoom = row?.zoomJoinUrl ? { product: 'zoom' as const, joinUrl: row.zoomJoinUrl } : null;
  return {
    id: encodeEventId(cal.id, e.providerEventId),
    provider: cal.provider,
    calendar: cal.id,
    title: e.title,
    description: e.description,
    start: e.start,
    end: e.end,
    timeZone: e.timeZone,
    allDay: e.allDay,
    location: e.location,
    attendees: e.attendees,
    organizer: e.organizer,
    recurrence: e.recurrence,
    recurringEventId: e.recurringEventId ? encodeEventId(cal.id, e.recurringEventId) : null,
    originalStart: e.originalStart,
    conference: e.conference ?? zoom,
    showAs: e.showAs,
    telehealth: null,
    telehealthRoom: null,
    patientId: row?.patientId ?? null,
    hostUserId: row?.hostUserId ?? cal.hostUserId,
    status: e.cancelled ? 'cancelled' : row?.status === 'completed' ? 'completed' : 'confirmed',
    workspaceId: ctx.workspaceId,
  };
}

/**
 * `telehealth` names a room one can join (as it always has); `telehealthRoom` its state, also before and without a
 * link (pending, failed), so a room that is late or could not be made is seen from the event.
 */
function showRoom(item: CalendarEvent, room: EventRoom | undefined): void {
  item.telehealth = room?.joinUrl ? { roomId: room.roomId, joinUrl: room.joinUrl } : null;
  item.telehealthRoom = room ? { roomId: room.roomId, status: room.status, failureReason: room.failureReason } : null;
}

/** This workspace's calendars with their connection's status; another workspace's never appear. */
export async function targets(deps: AppDeps, ctx: RequestContext): Promise<Target[]> {
  const [calendars, connections] = await Promise.all([storedCalendars(deps, ctx), listConnections(deps, ctx)]);
  const status = new Map(connections.map((c) => [c.id, c.status]));
  return calendars
    .filter((c) => status.has(c.connectionId))
    .map((c) => ({ ...c, connectionStatus: status.get(c.connectionId)! }));
}

const reauth = (provider: string) =>
  new AppError(
    'reauth_required',
    409,
    `The ${provider} connection must be connected again before its calendars can change`,
    {
      provider,
    },
  );

async function targetCalendar(deps: AppDeps, ctx: RequestContext, calendarId: string, notFound = calendarNotFound) {
  const cal = (await targets(deps, ctx)).find((c) => c.id === calendarId);
  if (!cal) throw notFound();
  if (cal.connectionStatus !== 'active') throw reauth(cal.provider);
  const provider = resolveProvider(deps, cal.provider);
  if (!provider) throw providerUnavailable(cal.provider);
  return { cal, provider };
}

// ---------------------------------------------------------------------------------------------
// List

export async function listEvents(
  deps: AppDeps,
  ctx: RequestContext,
  query: ListEventsQuery,
): Promise<{ items: CalendarEvent[]; warnings: Warning[] }> {
  const from = Date.parse(query.timeMin);
  const to = Date.parse(query.timeMax);
  if (!(from < to)) throw new AppError('invalid_window', 422, 'timeMin must be before timeMax');
  if (to - from > MAX_WINDOW_MS) throw new AppError('invalid_window', 422, 'The window may span at most 62 days');
  if (query.scope === 'organization') requireFeature(ctx, 'hq_calendar');
  const window = { timeMin: new Date(from).toISOString(), timeMax: new Date(to).toISOString() };

  if (query.patientId) return patientWindow(deps, ctx, { ...query, patientId: query.patientId });
  if (query.scope === 'organization') return organizationWindow(deps, ctx, query, window);
  let chosen = await targets(deps, ctx);
  if (query.provider) chosen = chosen.filter((c) => c.provider === query.provider);
  if (query.calendar) {
    chosen = chosen.filter((c) => c.id === query.calendar);
    if (chosen.length === 0) throw calendarNotFound();
  }
  return windowOf(deps, ctx, chosen, window, sessionCache(deps, ctx, 'calendar.events.list'));
}

/**
 * One patient's appointments in the window (the patient record's schedule): the merged list of the
 * workspace's calendars (or the organization's), narrowed to the events whose appointment names the
 * patient — an occurrence by its series' — after a check that the patient is this workspace's and a
 * `phi_access` audit row, in one transaction, before any provider is asked.
 */
async function patientWindow(
  deps: AppDeps,
  ctx: RequestContext,
  query: ListEventsQuery & { patientId: string },
): Promise<{ items: CalendarEvent[]; warnings: Warning[] }> {
  const { patientId, ...rest } = query;
  await withTenant(deps.db, ctx, async (tx) => {
    if (!(await patientExists(tx, ctx.workspaceId, patientId))) throw notFound('Patient');
    await writeAudit(tx, ctx, 'phi_access', { patientId, context: 'calendar.appointments' });
  });
  const all = await listEvents(deps, ctx, rest);
  return {
    items: all.items.filter((e) => e.patientId === patientId && e.workspaceId === ctx.workspaceId),
    warnings: all.warnings,
  };
}

/**
 * The HQ view (Enterprise): every workspace of the caller's organization where the caller is a
 * member, each read as that workspace (its own calendars, its tokens audited there), merged.
 */
async function organizationWindow(
  deps: AppDeps,
  ctx: RequestContext,
  query: ListEventsQuery,
  window: { timeMin: string; timeMax: string },
): Promise<{ items: CalendarEvent[]; warnings: Warning[] }> {
  const workspaces = await organizationWorkspacesOf(deps, ctx);
  const parts = await Promise.all(
    workspaces.map(async (w) => {
      const there: RequestContext = {
        ...ctx,
        workspaceId: w.workspaceId,
        tier: w.tier,
        role: w.role,
        isProvider: w.isProvider,
      };
      let chosen = await targets(deps, there);
      if (query.provider) chosen = chosen.filter((c) => c.provider === query.provider);
      if (query.calendar) chosen = chosen.filter((c) => c.id === query.calendar);
      return windowOf(deps, there, chosen, window, sessionCache(deps, there, 'calendar.events.list'));
    }),
  );
  if (query.calendar && parts.every((p) => p.items.length === 0 && p.warnings.length === 0)) {
    const known = await Promise.all(
      workspaces.map(async (w) =>
        (await targets(deps, { ...ctx, workspaceId: w.workspaceId })).some((c) => c.id === query.calendar),
      ),
    );
    if (!known.some(Boolean)) throw calendarNotFound();
  }
  const items = parts.flatMap((p) => p.items);
  items.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.id < b.id ? -1 : 1));
  return { items, warnings: parts.flatMap((p) => p.warnings) };
}

/** One provider session per connection for one operation (one token read, one audit row, each). */
export type SessionCache = (cal: { connectionId: string; provider: string }) => ProviderSession;

export function sessionCache(deps: AppDeps, ctx: RequestContext, reason: string): SessionCache {
  const sessions = new Map<string, ProviderSession>();
  return (cal) => {
    let session = sessions.get(cal.connectionId);
    if (!session) {
      session = sessionFor(deps, ctx, { id: cal.connectionId, provider: cal.provider }, reason);
      sessions.set(cal.connectionId, session);
    }
    return session;
  };
}

/** Events of `calendars` in the window, merged and sorted; a failing calendar becomes a warning. */
export async function windowOf(
  deps: AppDeps,
  ctx: RequestContext,
  calendars: Target[],
  window: { timeMin: string; timeMax: string },
  sessions: SessionCache,
): Promise<{ items: CalendarEvent[]; warnings: Warning[] }> {
  if (Date.parse(window.timeMax) - Date.parse(window.timeMin) > MAX_READ_WINDOW_MS)
    throw new AppError('invalid_window', 422, 'The calendars can be read for at most 366 days at a time');
  const warnings: Warning[] = [];
  const live: Target[] = [];
  for (const cal of calendars) {
    if (cal.connectionStatus !== 'active') {
      warnings.push({ provider: cal.provider, calendar: cal.id, code: 'reauth_required' });
    } else if (!resolveProvider(deps, cal.provider)) {
      warnings.push({ provider: cal.provider, calendar: cal.id, code: 'unavailable' });
    } else live.push(cal);
  }
  const lists = await Promise.all(
    live.map(async (cal) => {
      const adapter = resolveProvider(deps, cal.provider)!.adapter;
      try {
        return { cal, events: await adapter.listEvents(sessions(cal), cal.providerCalendarId, window) };
      } catch (err) {
        const code = err instanceof AppError ? err.code : 'provider_unavailable';
        if (!(err instanceof AppError)) ctx.log.warn({ err, provider: cal.provider }, 'calendar list failed');
        warnings.push({ provider: cal.provider, calendar: cal.id, code });
        return { cal, events: [] as ProviderEvent[] };
      }
    }),
  );
  // Our own facts about exactly these events (and their series), three short reads side by side:
  // appointments (patient, host, Zoom), attendees' replies by invitation, video rooms by event.
  const providerIds = new Set<string>();
  const eventIds = new Set<string>();
  for (const { cal, events } of lists) {
    for (const e of events) {
      providerIds.add(e.providerEventId);
      eventIds.add(encodeEventId(cal.id, e.providerEventId));
      if (e.recurringEventId) {
        providerIds.add(e.recurringEventId);
        eventIds.add(encodeEventId(cal.id, e.recurringEventId));
      }
    }
  }
  const ids = [...eventIds];
  const [rows, replies, rooms] = ids.length
    ? await Promise.all([
        withTenant(deps.db, ctx, (tx) =>
          appointmentsOf(
            tx,
            ctx.workspaceId,
            lists.map(({ cal }) => cal.id),
            [...providerIds],
          ),
        ),
        withTenant(deps.db, ctx, (tx) => repliesOf(tx, ctx.workspaceId, ids)),
        withTenant(deps.db, ctx, (tx) => roomsForEvents(tx, ctx.workspaceId, ids)),
      ])
    : [new Map(), new Map(), new Map<string, EventRoom>()];
  const items = lists.flatMap(({ cal, events }) =>
    events.map((e) =>
      present(
        ctx,
        cal,
        e,
        rows.get(rowKey(cal.id, e.providerEventId)) ??
          (e.recurringEventId ? rows.get(rowKey(cal.id, e.recurringEventId)) : undefined),
      ),
    ),
  );
  applyReplies(items, replies);
  for (const item of items) {
    showRoom(item, rooms.get(item.id) ?? (item.recurringEventId ? rooms.get(item.recurringEventId) : undefined));
  }
  items.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.id < b.id ? -1 : 1));
  return { items, warnings };
}

// ---------------------------------------------------------------------------------------------
// Drafts

function checkTimes(start: string, end: string, timeZone: string | undefined) {
  if (!(Date.parse(start) < Date.parse(end))) throw invalidDraft('The event must end after it starts');
  if (timeZone !== undefined && !isTimeZone(timeZone)) throw invalidDraft(`Unknown time zone ${timeZone}`);
}

/**
 * An all-day event's day as the API gives it: `YYYY-MM-DDT00:00:00.000Z`. A time at 00:00Z is taken as that
 * date (what the API answers for all-day events); any other time as the date it falls on in the event's zone (a
 * browser's local midnight: 23:00Z with Europe/Berlin is the next day there). `end`: a time within a day (not
 * at its midnight) counts that day in.
 */
function dayOf(iso: string, timeZone: string, end = false): number {
  const ms = Date.parse(iso);
  if (ms % DAY === 0) return ms;
  const local = toFloating(ms, timeZone);
  const day = local - (((local % DAY) + DAY) % DAY);
  return end && day !== local ? day + DAY : day;
}
const DAY = 86_400_000;

/** An all-day draft's start and end as days (end exclusive, after the start). */
function allDayTimes(start: string, end: string, timeZone: string): { start: string; end: string } {
  const first = dayOf(start, timeZone);
  const after = dayOf(end, timeZone, true);
  if (!(first < after)) throw invalidDraft('An all-day event must end at least one day after it starts');
  return { start: new Date(first).toISOString(), end: new Date(after).toISOString() };
}

/** RRULE / EXDATE / RDATE lines only; the RRULE must parse. */
function checkRecurrence(lines: string[] | null | undefined) {
  if (!lines) return;
  for (const raw of lines) {
    const line = raw.trim();
    if (/^RRULE:/i.test(line)) {
      const problem = rruleProblem(line.slice(6));
      if (problem) throw invalidDraft(`${problem}: ${line.slice(0, 100)}`);
      try {
        const options = RRule.parseString(line.slice(6));
        if (options.freq === undefined) throw new Error('no FREQ');
      } catch {
        throw invalidDraft(`This repeat rule could not be read: ${line.slice(0, 100)}`);
      }
    } else if (!/^(EXDATE|RDATE)[;:]/i.test(line)) {
      throw invalidDraft('Recurrence takes RRULE, EXDATE and RDATE lines');
    } else {
      const zone = /;TZID=([^;:]+)/i.exec(line)?.[1];
      if (zone !== undefined && !isTimeZone(zone)) throw invalidDraft(`Unknown time zone ${zone.slice(0, 100)}`);
    }
  }
}

/** contract §5.2 conferencing: tier first (403), then what the host provider can hold (422). */
function conferenceFor(
  ctx: RequestContext,
  provider: string,
  draft: Pick<Draft, 'conference' | 'preferredConference'>,
): ConferenceProduct | null | undefined {
  if (draft.conference === undefined) return undefined;
  if (draft.conference === null) return null;
  let product: ConferenceProduct;
  if (draft.conference === 'auto') {
    requireFeature(ctx, 'conference_auto');
    product = draft.preferredConference === 'zoom' ? 'zoom' : provider === 'google' ? 'meet' : 'teams';
  } else product = draft.conference;
  requireFeature(ctx, `conference_${product}`);
  if ((product === 'meet' && provider !== 'google') || (product === 'teams' && provider !== 'microsoft')) {
    throw new AppError(
      'conference_unavailable',
      422,
      `${product === 'meet' ? 'Google Meet' : 'Microsoft Teams'} cannot be added to a ${provider} calendar`,
    );
  }
  return product;
}

/**
 * The people a draft names: a patient or host who is not of this workspace is 404 (another
 * workspace's id reads as an unknown one, contract §1). The host is the calendar's owner (the
 * default) or one of the workspace's providers (appointments are scheduled with providers, §2):
 * another member is 422 `unknown_provider`.
 */
async function checkParticipants(
  deps: AppDeps,
  ctx: RequestContext,
  draft: { patientId?: string | null; hostUserId?: string | null },
  calendarOwner: string,
) {
  const { patientId, hostUserId } = draft;
  if (!patientId && !hostUserId) return;
  await withTenant(deps.db, ctx, async (tx) => {
    if (patientId && !(await patientExists(tx, ctx.workspaceId, patientId))) throw notFound('Patient');
    if (!hostUserId) return;
    // One read of the members in the usual cases (a provider, or the owner): a second only to tell
    // a stranger (404) from a member who is no provider (422).
    if (hostUserId !== calendarOwner && (await isMember(tx, ctx.workspaceId, hostUserId, true))) return;
    if (!(await isMember(tx, ctx.workspaceId, hostUserId))) throw notFound('Provider');
    if (hostUserId !== calendarOwner)
      throw new AppError('unknown_provider', 422, 'The host is not a provider of this workspace');
  });
}

const zoomNote = (url: string) => `Join Zoom meeting: ${url}`;

/** An audit row of the Zoom account's use: never the outcome of the request (platform/db/tenant.ts). */
async function auditZoom(deps: AppDeps, ctx: RequestContext, reason: string, outcome: string) {
  await withTenant(deps.db, ctx, (tx) => writeAudit(tx, ctx, 'token_access', { provider: 'zoom', reason, outcome }), {
    outcome: false,
  });
}

async function createZoom(
  deps: AppDeps,
  ctx: RequestContext,
  d: { title: string; start: string; end: string; timeZone: string; description?: string | null },
) {
  const zoom = resolveZoom(deps);
  if (!zoom) throw new AppError('conference_unavailable', 422, 'Zoom is not configured on this server');
  try {
    const meeting = await zoom.createMeeting(
      {
        topic: d.title,
        start: d.start,
        durationMinutes: Math.max(1, Math.round((Date.parse(d.end) - Date.parse(d.start)) / 60_000)),
        timeZone: d.timeZone,
        agenda: d.description ?? undefined,
      },
      ctx.requestId,
    );
    await auditZoom(deps, ctx, 'calendar.events.create', 'ok');
    return meeting;
  } catch (err) {
    await auditZoom(deps, ctx, 'calendar.events.create', 'error').catch(() => undefined);
    throw err;
  }
}

/** Whether a failed provider write may nevertheless have been done (no answer, or the provider failing). */
const outcomeUnknown = (err: unknown) =>
  err instanceof ProviderError
    ? err.reason === 'provider_timeout' || err.reason === 'provider_unavailable'
    : !(err instanceof AppError);

/**
 * The meeting an earlier attempt of this keyed create made (recorded before its calendar write), if any. Only
 * what Atrium recorded for this workspace counts: never a meeting id read from an event's text.
 */
async function earlierAttempt(
  deps: AppDeps,
  ctx: RequestContext,
  clientKey: string,
): Promise<{ meetingId: string; joinUrl: string } | undefined> {
  const [row] = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select({ meetingId: calendarZoomAttempts.meetingId, joinUrl: calendarZoomAttempts.joinUrl })
      .from(calendarZoomAttempts)
      .where(and(eq(calendarZoomAttempts.workspaceId, ctx.workspaceId), eq(calendarZoomAttempts.clientKey, clientKey))),
  );
  return row;
}

/**
 * Records the meeting made for a keyed create before the calendar write (and clears records over two days old).
 * A record for the retry itself, not the create's outcome: a retry after a crash runs the create again and meets in
 * it (platform/db/tenant.ts).
 */
async function recordAttempt(
  deps: AppDeps,
  ctx: RequestContext,
  clientKey: string,
  meeting: { meetingId: string; joinUrl: string },
) {
  await withTenant(
    deps.db,
    ctx,
    async (tx) => {
      await tx
        .delete(calendarZoomAttempts)
        .where(
          and(
            eq(calendarZoomAttempts.workspaceId, ctx.workspaceId),
            lt(calendarZoomAttempts.createdAt, new Date(Date.now() - 2 * 86_400_000)),
          ),
        );
      await tx
        .insert(calendarZoomAttempts)
        .values({ workspaceId: ctx.workspaceId, clientKey, ...meeting })
        .onConflictDoNothing();
    },
    { outcome: false },
  );
}

const forgetAttempt = (tx: Tx, workspaceId: string, clientKey: string) =>
  tx
    .delete(calendarZoomAttempts)
    .where(and(eq(calendarZoomAttempts.workspaceId, workspaceId), eq(calendarZoomAttempts.clientKey, clientKey)));

// ---------------------------------------------------------------------------------------------
// Create

/**
 * The key a create with an Idempotency-Key gives the provider (SHA-256 of workspace, user, calendar and key), so the
 * provider makes its event once however often the insert is sent; undefined without a key.
 */
export const createKeyOf = (ctx: RequestContext, calendarId: string): string | undefined =>
  ctx.idempotencyKey ? sha256Hex(`${ctx.workspaceId}|${ctx.userId}|${calendarId}|${ctx.idempotencyKey}`) : undefined;

/**
 * For a keyed create: whether an event its slot clashes with is the one an earlier attempt of this same create made
 * (the attempt was killed, or timed out, after the provider made it): the event itself or, for an occurrence, its
 * series, asked of the provider by the key the insert carried. Not a conflict: the retry's insert answers it.
 */
function madeEarlierBy(
  provider: NonNullable<ReturnType<typeof resolveProvider>>,
  session: ProviderSession,
  cal: Target,
  clientKey: string | undefined,
): ((e: CalendarEvent) => Promise<boolean>) | undefined {
  if (!clientKey) return undefined;
  const asked = new Map<string, Promise<boolean>>();
  const madeWithKey = (providerEventId: string) => {
    let answer = asked.get(providerEventId);
    if (!answer) {
      answer = provider.adapter.insertedWith(session, cal.providerCalendarId, providerEventId, clientKey);
      asked.set(providerEventId, answer);
    }
    return answer;
  };
  return async (e) => {
    if (e.calendar !== cal.id) return false;
    for (const id of [e.recurringEventId, e.id]) {
      if (id && (await madeWithKey(decodeEventId(id).providerEventId))) return true;
    }
    return false;
  };
}

/**
 * `saveWith`: the caller's own rows of the new event, written first in the transaction that saves its appointment
 * (run even when there is nothing else to save), so they commit together or not at all. When it throws, nothing is
 * saved and the event stays at the provider: the caller deletes it.
 */
export async function createEvent(
  deps: AppDeps,
  ctx: RequestContext,
  input: { provider?: string; calendar: string; draft: Draft },
  options: { saveWith?: (tx: Tx, event: CalendarEvent) => Promise<void> } = {},
): Promise<{ ok: true; eventId: string; event: CalendarEvent }> {
  const timeZone = input.draft.timeZone ?? 'UTC';
  checkTimes(input.draft.start, input.draft.end, timeZone);
  const draft = input.draft.allDay
    ? { ...input.draft, ...allDayTimes(input.draft.start, input.draft.end, timeZone) }
    : input.draft;
  checkRecurrence(draft.recurrence);
  if (draft.recurrence?.length) requireFeature(ctx, 'recurring_events');
  const { cal, provider } = await targetCalendar(deps, ctx, input.calendar);
  if (input.provider && input.provider !== cal.provider) throw calendarNotFound();
  const product = conferenceFor(ctx, cal.provider, draft);
  await checkParticipants(deps, ctx, draft, cal.hostUserId);
  const sessions = sessionCache(deps, ctx, 'calendar.events.create');
  const hostUserId = draft.hostUserId ?? cal.hostUserId;
  // With an Idempotency-Key, the provider makes the event once: a retry after a timeout or a crash (whose insert
  // may have gone through) gets the event the first insert made instead of a second one (and is not its own
  // conflict), and meets in its Zoom meeting.
  const clientKey = createKeyOf(ctx, cal.id);
  await checkConflicts(
    deps,
    ctx,
    {
      start: draft.start,
      end: draft.end,
      patientId: draft.patientId,
      hostUserId,
      recurrence: draft.recurrence,
      timeZone,
      madeEarlier: madeEarlierBy(provider, sessions(cal), cal, clientKey),
    },
    sessions,
  );

  let zoom: { meetingId: string; joinUrl: string } | undefined;
  let reused = false;
  if (product === 'zoom') {
    zoom = clientKey ? await earlierAttempt(deps, ctx, clientKey) : undefined;
    reused = Boolean(zoom);
    if (!zoom) {
      zoom = await createZoom(deps, ctx, { ...draft, timeZone });
      if (clientKey) await recordAttempt(deps, ctx, clientKey, zoom);
    }
  }
  const providerDraft: ProviderDraft = {
    title: draft.title,
    start: draft.start,
    end: draft.end,
    timeZone,
    allDay: draft.allDay ?? false,
    description: zoom ? [draft.description, zoomNote(zoom.joinUrl)].filter(Boolean).join('\n\n') : draft.description,
    location: draft.location ?? (zoom ? zoom.joinUrl : undefined),
    attendees: draft.attendees,
    recurrence: draft.recurrence?.length ? draft.recurrence : undefined,
    // Always said, never left to the provider's default (opaque/busy for all-day events too): an all-day event is a
    // notice unless marked busy, as the providers' own apps make it.
    showAs: draft.showAs ?? (draft.allDay ? 'free' : 'busy'),
    nativeConference: product === 'meet' || product === 'teams' ? true : undefined,
    clientKey,
  };
  let created: ProviderEvent;
  try {
    created = await provider.adapter.insertEvent(sessions(cal), cal.providerCalendarId, providerDraft);
  } catch (err) {
    // The meeting goes only when the provider refused the event. After a timeout or an outage the event may
    // have been made with this meeting's link in it: a meeting nobody joins costs nothing, a patient's
    // invitation naming a deleted one costs the visit.
    if (zoom && !outcomeUnknown(err)) {
      await resolveZoom(deps)
        ?.deleteMeeting(zoom.meetingId)
        .catch(() => undefined);
      if (clientKey)
        await withTenant(deps.db, ctx, (tx) => forgetAttempt(tx, ctx.workspaceId, clientKey), { outcome: false });
    }
    throw err;
  }
  const meeting = zoom;
  if (meeting && reused) {
    // A retry meets in the first attempt's meeting, which follows the event the provider now has (the first
    // attempt's, when it had gone through; this one's otherwise: a retry may carry another time or title).
    await resolveZoom(deps)
      ?.updateMeeting(meeting.meetingId, {
        topic: created.title.slice(0, 200),
        start: created.start,
        durationMinutes: Math.max(1, Math.round((Date.parse(created.end) - Date.parse(created.start)) / 60_000)),
      })
      .catch((err) => ctx.log.warn({ err }, 'zoom meeting could not be updated'));
  }
  const row = {
    workspaceId: ctx.workspaceId,
    calendarId: cal.id,
    providerEventId: created.providerEventId,
    patientId: draft.patientId ?? null,
    hostUserId,
    status: draft.status === 'completed' ? ('completed' as const) : ('confirmed' as const),
    zoomMeetingId: meeting?.meetingId ?? null,
    zoomJoinUrl: meeting?.joinUrl ?? null,
    startAt: new Date(created.start),
    endAt: new Date(created.end),
  };
  const event = present(ctx, cal, created, row as AppointmentRow);
  if (options.saveWith || draft.patientId || zoom || draft.hostUserId || product || draft.attendees?.length) {
    await withTenant(deps.db, ctx, async (tx) => {
      await options.saveWith?.(tx, event);
      await saveAppointment(tx, row);
      if (zoom && clientKey) await forgetAttempt(tx, ctx.workspaceId, clientKey);
      await notifyGuests(
        tx,
        ctx.workspaceId,
        event,
        cal.accountEmail,
        'created',
        inboundAddress(deps.config.inboundMailDomain, ctx.workspaceId),
      );
      // A visit with video gets a telehealth room, prepared in the background (never blocks this write).
      // A series' room is standing: every occurrence meets in it. A single visit's room is retried through an
      // outage until the visit ends (a series' for the room's default window).
      const standing = Boolean(draft.recurrence?.length);
      if (product) {
        await requestRoom(tx, ctx.workspaceId, event.id, {
          standing,
          until: standing ? undefined : row.endAt,
        });
        // The answer shows the room as lists do (pending until prepared; a retried create, its state by now).
        showRoom(event, (await roomsForEvents(tx, ctx.workspaceId, [event.id])).get(event.id));
      }
      if (draft.patientId) {
        await emitAppointment(tx, ctx.workspaceId, 'appointment.created', {
          eventId: event.id,
          calendarId: cal.id,
          patientId: draft.patientId,
          start: event.start,
          end: event.end,
          hostUserId,
        });
      }
    });
  }
  return { ok: true, eventId: event.id, event };
}

// ---------------------------------------------------------------------------------------------
// Change and delete

async function resolveEvent(deps: AppDeps, ctx: RequestContext, eventId: string) {
  const { calendarId, providerEventId } = decodeEventId(eventId);
  const { cal, provider } = await targetCalendar(deps, ctx, calendarId, eventNotFound);
  return { cal, provider, providerEventId };
}

export async function patchEvent(
  deps: AppDeps,
  ctx: RequestContext,
  eventId: string,
  draft: PartialDraft,
): Promise<{ ok: true; eventId: string; event: CalendarEvent }> {
  const { cal, provider, providerEventId } = await resolveEvent(deps, ctx, eventId);
  checkRecurrence(draft.recurrence);
  const product = conferenceFor(ctx, cal.provider, draft);
  await checkParticipants(deps, ctx, draft, cal.hostUserId);
  const sessions = sessionCache(deps, ctx, 'calendar.events.update');
  const session = sessions(cal);

  if (draft.status === 'cancelled') {
    // Read before the delete: Microsoft keeps nothing of a deleted event (Google keeps it, cancelled).
    const read = () =>
      provider.adapter.getEvent(session, cal.providerCalendarId, providerEventId).catch(() => undefined);
    const before = await read();
    await deleteResolved(deps, ctx, { cal, provider, providerEventId, session });
    const current = before ?? (await read());
    const event = current ? { ...present(ctx, cal, current), status: 'cancelled' as const } : undefined;
    if (!event) throw eventNotFound();
    return { ok: true, eventId, event };
  }

  const timesChange =
    draft.start !== undefined ||
    draft.end !== undefined ||
    draft.recurrence !== undefined ||
    draft.timeZone !== undefined ||
    draft.allDay !== undefined;
  // Read when the times change, for Zoom, or when a patient or host is set (their other visits are
  // checked for a clash).
  // The visit's own Zoom meeting (a series' for the whole series), when it has one: moved with it, kept when Zoom
  // is asked for again, deleted (and its link taken out of the event) when the visit changes to no video or
  // another product.
  const prior =
    timesChange || product !== undefined || draft.title !== undefined
      ? await withTenant(deps.db, ctx, (tx) => appointmentOf(tx, ctx.workspaceId, cal.id, [providerEventId]))
      : undefined;
  const priorMeeting =
    prior?.zoomMeetingId && prior.zoomJoinUrl
      ? { meetingId: prior.zoomMeetingId, joinUrl: prior.zoomJoinUrl }
      : undefined;
  const existing =
    timesChange || product !== undefined || priorMeeting || draft.patientId || draft.hostUserId
      ? await provider.adapter.getEvent(session, cal.providerCalendarId, providerEventId)
      : undefined;
  // The meeting is this event's own only for a single event or a whole series: an occurrence's row names its
  // series' meeting, which moving, renaming or unlinking one occurrence must leave alone.
  const ownMeeting = priorMeeting && existing && !existing.recurringEventId ? priorMeeting : undefined;
  // The meeting whose link the event carries: its own row's, or (an occurrence never changed before has no row)
  // its series'.
  let linked = priorMeeting;
  const seriesId = existing?.recurringEventId;
  if (!linked && seriesId && product !== undefined) {
    const series = await withTenant(deps.db, ctx, (tx) => appointmentOf(tx, ctx.workspaceId, cal.id, [seriesId]));
    if (series?.zoomMeetingId && series.zoomJoinUrl)
      linked = { meetingId: series.zoomMeetingId, joinUrl: series.zoomJoinUrl };
  }
  // Changed to no video or to Meet/Teams: the link leaves this event (and the meeting goes when it is its own).
  const unlink = linked && product !== undefined && product !== 'zoom' ? linked : undefined;
  const dropMeeting = unlink && ownMeeting ? ownMeeting : undefined;
  const timeZone = draft.timeZone ?? existing?.timeZone;
  if (existing) checkTimes(draft.start ?? existing.start, draft.end ?? existing.end, draft.timeZone);
  if (existing && (draft.start !== undefined || draft.end !== undefined || draft.patientId || draft.hostUserId)) {
    const known = await withTenant(deps.db, ctx, (tx) =>
      appointmentOf(tx, ctx.workspaceId, cal.id, [providerEventId, existing.recurringEventId]),
    );
    const patientId = draft.patientId !== undefined ? draft.patientId : known?.patientId;
    const self = encodeEventId(cal.id, providerEventId);
    await checkConflicts(
      deps,
      ctx,
      {
        start: draft.start ?? existing.start,
        end: draft.end ?? existing.end,
        patientId,
        hostUserId: draft.hostUserId ?? known?.hostUserId ?? cal.hostUserId,
        exclude: (e) => e.id === self || e.recurringEventId === self,
        // A series is checked over its occurrences; one occurrence (it has a series) by itself.
        recurrence: existing.recurringEventId ? null : (draft.recurrence ?? existing.recurrence),
        timeZone: timeZone ?? 'UTC',
      },
      sessions,
    );
  }

  let zoom: { meetingId: string; joinUrl: string } | undefined;
  if (product === 'zoom' && existing && !linked) {
    zoom = await createZoom(deps, ctx, {
      title: draft.title ?? existing.title,
      start: draft.start ?? existing.start,
      end: draft.end ?? existing.end,
      timeZone: timeZone ?? 'UTC',
    });
  }
  const withoutLink = (text: string | null | undefined, url: string) =>
    (text ?? '')
      .split(/\n\n/)
      .filter((part) => part.trim() !== zoomNote(url))
      .join('\n\n') || null;
  const providerDraft: ProviderDraft = {
    title: draft.title,
    description: zoom
      ? [draft.description ?? existing?.description, zoomNote(zoom.joinUrl)].filter(Boolean).join('\n\n')
      : unlink && existing && draft.description === undefined
        ? withoutLink(existing.description, unlink.joinUrl)
        : draft.description,
    location:
      draft.location ?? (zoom ? zoom.joinUrl : unlink && existing?.location === unlink.joinUrl ? null : undefined),
    attendees: draft.attendees,
    recurrence: draft.recurrence,
    showAs: draft.showAs,
    nativeConference: product === 'meet' || product === 'teams' ? true : product === null ? false : undefined,
  };
  if (timesChange && existing) {
    // Providers want the whole time (with its zone) whenever part of it changes; an all-day event's as days.
    const allDay = draft.allDay ?? existing.allDay;
    const start = draft.start ?? existing.start;
    const end = draft.end ?? existing.end;
    Object.assign(providerDraft, {
      ...(allDay ? allDayTimes(start, end, timeZone ?? 'UTC') : { start, end }),
      timeZone: timeZone ?? 'UTC',
      allDay,
    });
  }
  const hasProviderChange = Object.values(providerDraft).some((v) => v !== undefined);
  const updated = hasProviderChange
    ? await provider.adapter.patchEvent(session, cal.providerCalendarId, providerEventId, providerDraft)
    : (existing ?? (await provider.adapter.getEvent(session, cal.providerCalendarId, providerEventId)));
  const meetings = resolveZoom(deps);
  if (dropMeeting) {
    await meetings
      ?.deleteMeeting(dropMeeting.meetingId)
      .then(() => auditZoom(deps, ctx, 'calendar.events.update', 'ok'))
      .catch((err) => ctx.log.warn({ err }, 'zoom meeting could not be deleted'));
  } else if (ownMeeting && (timesChange || draft.title !== undefined)) {
    // The meeting follows the visit (Zoom shows its time and topic to whoever opens it). The visit has moved
    // already: a failure here is logged, not the answer.
    await meetings
      ?.updateMeeting(ownMeeting.meetingId, {
        topic: updated.title.slice(0, 200),
        start: updated.start,
        durationMinutes: Math.max(1, Math.round((Date.parse(updated.end) - Date.parse(updated.start)) / 60_000)),
      })
      .then(() => auditZoom(deps, ctx, 'calendar.events.update', 'ok'))
      .catch((err) => ctx.log.warn({ err }, 'zoom meeting could not be moved'));
  }

  const result = await withTenant(deps.db, ctx, async (tx) => {
    const before = await appointmentOf(tx, ctx.workspaceId, cal.id, [providerEventId, updated.recurringEventId]);
    const patientId = draft.patientId !== undefined ? draft.patientId : (before?.patientId ?? null);
    const hostUserId = draft.hostUserId ?? before?.hostUserId ?? cal.hostUserId;
    const status =
      draft.status === 'completed'
        ? 'completed'
        : draft.status === 'confirmed'
          ? 'confirmed'
          : (before?.status ?? 'confirmed');
    const touched =
      draft.patientId !== undefined || draft.hostUserId !== undefined || draft.status !== undefined || zoom || before;
    const row = {
      workspaceId: ctx.workspaceId,
      calendarId: cal.id,
      providerEventId,
      patientId,
      hostUserId,
      status: status as AppointmentRow['status'],
      zoomMeetingId: unlink ? null : (zoom?.meetingId ?? before?.zoomMeetingId ?? null),
      zoomJoinUrl: unlink || product === null ? null : (zoom?.joinUrl ?? before?.zoomJoinUrl ?? null),
      startAt: new Date(updated.start),
      endAt: new Date(updated.end),
    };
    if (touched) await saveAppointment(tx, row);
    if (updated.recurringEventId && existing && timesChange) {
      await moveSession(tx, ctx.workspaceId, cal.id, {
        seriesEventId: updated.recurringEventId,
        from: [existing.start, existing.originalStart ?? existing.start],
        start: updated.start,
        end: updated.end,
      });
    }
    const event = present(ctx, cal, updated, row as AppointmentRow);
    // Guests hear about changes to what they were invited to (one occurrence: that date alone).
    const guestsCare = [
      'title',
      'start',
      'end',
      'location',
      'description',
      'attendees',
      'recurrence',
      'timeZone',
      'allDay',
    ].some((k) => (draft as Record<string, unknown>)[k] !== undefined);
    if (guestsCare) {
      // The whole event's guests hear of a changed event; a series' guests of one changed occurrence.
      const notify = updated.recurringEventId ? notifyOccurrence : notifyGuests;
      const replyTo = inboundAddress(deps.config.inboundMailDomain, ctx.workspaceId);
      await notify(tx, ctx.workspaceId, event, cal.accountEmail, 'updated', replyTo);
    }
    if (patientId && draft.status === 'completed' && before?.status !== 'completed') {
      await emitAppointment(tx, ctx.workspaceId, 'appointment.completed', {
        eventId: event.id,
        calendarId: cal.id,
        patientId,
        start: event.start,
        end: event.end,
        hostUserId,
      });
    }
    if (patientId && !before?.patientId && draft.patientId) {
      await emitAppointment(tx, ctx.workspaceId, 'appointment.created', {
        eventId: event.id,
        calendarId: cal.id,
        patientId,
        start: event.start,
        end: event.end,
        hostUserId,
      });
    }
    return event;
  });
  return { ok: true, eventId: result.id, event: result };
}

async function deleteResolved(
  deps: AppDeps,
  ctx: RequestContext,
  t: {
    cal: Target;
    provider: NonNullable<ReturnType<typeof resolveProvider>>;
    providerEventId: string;
    session: ProviderSession;
  },
) {
  // The instance's series, for the appointment row of a single cancelled occurrence.
  const current = await t.provider.adapter
    .getEvent(t.session, t.cal.providerCalendarId, t.providerEventId)
    .catch(() => undefined);
  await t.provider.adapter.deleteEvent(t.session, t.cal.providerCalendarId, t.providerEventId);
  const closing: string[] = [];
  await withTenant(deps.db, ctx, async (tx) => {
    // A cancelled visit (or series) cannot be met in any more; one occurrence leaves the series' room.
    if (!current?.recurringEventId) {
      closing.push(...(await cancelRooms(tx, ctx.workspaceId, [encodeEventId(t.cal.id, t.providerEventId)])));
    }
    if (current) {
      // The whole event's guests hear of a cancelled event; a series' guests of one cancelled occurrence.
      const notify = current.recurringEventId ? notifyOccurrence : notifyGuests;
      const replyTo = inboundAddress(deps.config.inboundMailDomain, ctx.workspaceId);
      await notify(tx, ctx.workspaceId, present(ctx, t.cal, current), t.cal.accountEmail, 'cancelled', replyTo);
    }
    await releaseSessions(
      tx,
      ctx.workspaceId,
      t.cal.id,
      current?.recurringEventId
        ? {
            seriesEventId: current.recurringEventId,
            occurrenceStart: [current.start, current.originalStart ?? current.start],
          }
        : { seriesEventId: t.providerEventId },
    );
    const before = await appointmentOf(tx, ctx.workspaceId, t.cal.id, [
      t.providerEventId,
      current?.recurringEventId ?? null,
    ]);
    if (!before) return;
    const ownRow = before.providerEventId === t.providerEventId;
    if (ownRow && before.status === 'cancelled') return;
    await saveAppointment(tx, {
      workspaceId: ctx.workspaceId,
      calendarId: t.cal.id,
      providerEventId: t.providerEventId,
      patientId: before.patientId,
      hostUserId: before.hostUserId,
      status: 'cancelled',
      zoomMeetingId: ownRow ? before.zoomMeetingId : null,
      zoomJoinUrl: ownRow ? before.zoomJoinUrl : null,
      startAt: current ? new Date(current.start) : before.startAt,
      endAt: current ? new Date(current.end) : before.endAt,
    });
    if (before.patientId) {
      await emitAppointment(tx, ctx.workspaceId, 'appointment.cancelled', {
        eventId: encodeEventId(t.cal.id, t.providerEventId),
        calendarId: t.cal.id,
        patientId: before.patientId,
        start: (current?.start ?? before.startAt?.toISOString()) || '',
        end: (current?.end ?? before.endAt?.toISOString()) || '',
        hostUserId: before.hostUserId,
      });
    }
  });
  await closeProviderRooms(deps, ctx.log, closing);
  const zoomMeeting =
    current && !current.recurringEventId
      ? (await withTenant(deps.db, ctx, (tx) => appointmentOf(tx, ctx.workspaceId, t.cal.id, [t.providerEventId])))
          ?.zoomMeetingId
      : undefined;
  if (zoomMeeting) {
    await resolveZoom(deps)
      ?.deleteMeeting(zoomMeeting)
      .then(() => auditZoom(deps, ctx, 'calendar.events.delete', 'ok'))
      .catch((err) => ctx.log.warn({ err }, 'zoom meeting could not be deleted'));
  }
}

export async function deleteEvent(deps: AppDeps, ctx: RequestContext, eventId: string): Promise<{ ok: true }> {
  const { cal, provider, providerEventId } = await resolveEvent(deps, ctx, eventId);
  const session = sessionFor(deps, ctx, { id: cal.connectionId, provider: cal.provider }, 'calendar.events.delete');
  await deleteResolved(deps, ctx, { cal, provider, providerEventId, session });
  return { ok: true };
}

/** For the demo seed and other modules: the workspace's calendars by id. */
export async function calendarById(deps: AppDeps, ctx: { workspaceId: string }, id: string) {
  const [row] = await withTenant(deps.db, ctx, (tx) =>
    tx.select().from(calendarCalendars).where(eq(calendarCalendars.id, id)),
  );
  return row;
}
