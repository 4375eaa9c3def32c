// Google Calendar API v3 + Google OAuth 2.0, emulated: calendarList, events (singleEvents
// expansion, instance ids, exceptions, 410 for deleted), conferenceData.createRequest (Meet),
// Google's error bodies, fault injection and expire-tokens (contract §11).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import mask from 'json-mask';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';
import {
  type Account,
  type Attendee,
  type EmuEvent,
  expand,
  findTarget,
  type Instance,
  meetCode,
  newAccount,
  newEventId,
  type Override,
} from './model.js';
import { bearerEmail, registerOAuthServer } from './oauth.js';
import { fromFloating, isZone, RecurrenceError } from './recurrence.js';
import { readDoc, updateDoc } from './store.js';
import { idToken } from './tokens.js';

const NAME = 'google';
const REASONS: Record<number, [string, string, string]> = {
  400: ['invalid', 'Invalid Value', 'INVALID_ARGUMENT'],
  401: ['authError', 'Invalid Credentials', 'UNAUTHENTICATED'],
  403: ['forbidden', 'Forbidden', 'PERMISSION_DENIED'],
  404: ['notFound', 'Not Found', 'NOT_FOUND'],
  409: ['duplicate', 'The requested identifier already exists.', 'ALREADY_EXISTS'],
  410: ['deleted', 'Resource has been deleted', 'NOT_FOUND'],
  429: ['rateLimitExceeded', 'Rate Limit Exceeded', 'RESOURCE_EXHAUSTED'],
};

function googleError(reply: FastifyReply, status: number, reason?: string, message?: string) {
  const [r, m, s] = REASONS[status] ?? ['backendError', 'Backend Error', 'INTERNAL'];
  if (status === 429) reply.header('retry-after', '1');
  return reply.status(status).send({
    error: {
      code: status,
      message: message ?? (status === 401 ? 'Request had invalid authentication credentials.' : m),
      errors: [{ domain: status === 429 ? 'usageLimits' : 'global', reason: reason ?? r, message: message ?? m }],
      status: s,
    },
  });
}

const origin = (request: FastifyRequest) => `${request.protocol}://${request.headers.host}`;
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

function toJson(
  request: FastifyRequest,
  e: Instance | (EmuEvent & { recurringEventId?: null; originalStartMs?: null }),
) {
  const when = (ms: number) =>
    e.allDay
      ? { date: new Date(ms).toISOString().slice(0, 10) }
      : { dateTime: rfc3339(ms), ...(e.zoneUnset ? {} : { timeZone: e.timeZone }) };
  const meet = e.conference && `${origin(request)}/_emulators/google/meet/${e.conference.id}`;
  return {
    kind: 'calendar#event',
    etag: `"${e.sequence}-${Date.parse(e.updated)}"`,
    id: e.id,
    status: e.cancelled ? 'cancelled' : 'confirmed',
    htmlLink: `${origin(request)}/_emulators/google/event?eid=${e.id}`,
    created: e.created,
    updated: e.updated,
    summary: e.title,
    ...(e.description ? { description: e.description } : {}),
    ...(e.location ? { location: e.location } : {}),
    creator: { email: e.organizer, self: true },
    organizer: { email: e.organizer, self: true },
    start: when(e.startMs),
    end: when(e.endMs),
    ...(e.recurrence ? { recurrence: e.recurrence } : {}),
    ...(e.recurringEventId
      ? { recurringEventId: e.recurringEventId, originalStartTime: when(e.originalStartMs ?? e.startMs) }
      : {}),
    iCalUID: `${e.recurringEventId ?? e.id}@google.example`,
    sequence: e.sequence,
    ...(e.attendees.length
      ? {
          attendees: e.attendees.map((a) => ({
            email: a.email,
            ...(a.name ? { displayName: a.name } : {}),
            responseStatus: a.response,
          })),
        }
      : {}),
    ...(meet && e.conference
      ? {
          hangoutLink: meet,
          conferenceData: {
            entryPoints: [{ entryPointType: 'video', uri: meet, label: meet.replace(/^https?:\/\//, '') }],
            conferenceSolution: { key: { type: 'hangoutsMeet' }, name: 'Google Meet' },
            conferenceId: e.conference.id,
          },
        }
      : {}),
    ...(e.extended ? { extendedProperties: e.extended } : {}),
    reminders: { useDefault: true },
    transparency: e.transparency ?? 'opaque',
    eventType: e.eventType ?? 'default',
  };
}

const EVENT_TYPES = ['default', 'outOfOffice', 'focusTime', 'workingLocation'];

class BadEvent extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

type Time = { dateTime?: string; date?: string; timeZone?: string };

/**
 * Google's patch semantics (RFC 7396's merge patch): a nested object is merged into the stored one,
 * `null` removes a member, anything else (arrays included) replaces it.
 */
export function mergePatch(current: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    current && typeof current === 'object' && !Array.isArray(current) ? { ...(current as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** A start or end as Google holds it: exactly one of `date` (all-day) and `dateTime`, else 400. */
function readTime(
  t: unknown,
  fallbackZone: string,
  which: 'start' | 'end',
): { ms: number; zone: string; allDay: boolean; zoned: boolean } {
  const time = (t ?? {}) as Time;
  const has = (v: unknown) => v !== undefined && v !== null;
  if (!has(time.date) && !has(time.dateTime)) throw new BadEvent('required', `Missing ${which} time.`);
  if (has(time.date) && has(time.dateTime)) throw new BadEvent('invalid', `Invalid ${which} time.`);
  const zoned = typeof time.timeZone === 'string' && isZone(time.timeZone);
  const zone = zoned ? (time.timeZone as string) : fallbackZone;
  if (typeof time.date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(time.date)) {
    return { ms: Date.parse(`${time.date}T00:00:00Z`), zone: 'UTC', allDay: true, zoned };
  }
  if (typeof time.dateTime === 'string') {
    const floating = !/[zZ]|[+-]\d\d:?\d\d$/.test(time.dateTime);
    const ms = floating ? fromFloating(Date.parse(`${time.dateTime}Z`), zone) : Date.parse(time.dateTime);
    if (Number.isFinite(ms)) return { ms, zone, allDay: false, zoned };
  }
  throw new BadEvent('invalid', `Invalid ${which} time.`);
}

/** The stored start or end as Google shows it (what a patch is merged into). */
const storedTime = (ms: number, allDay: boolean, zone: string | undefined): Time =>
  allDay
    ? { date: new Date(ms).toISOString().slice(0, 10) }
    : { dateTime: rfc3339(ms), ...(zone ? { timeZone: zone } : {}) };

const attendeesOf = (raw: unknown, before: Attendee[] = []): Attendee[] =>
  (Array.isArray(raw) ? raw : []).flatMap((a) => {
    const email = typeof a?.email === 'string' ? a.email.toLowerCase() : undefined;
    if (!email) return [];
    const known = before.find((b) => b.email === email);
    const response = ['needsAction', 'accepted', 'declined', 'tentative'].includes(a.responseStatus)
      ? a.responseStatus
      : (known?.response ?? 'needsAction');
    return [{ email, name: typeof a.displayName === 'string' ? a.displayName : (known?.name ?? null), response }];
  });

const text = (v: unknown) => (typeof v === 'string' ? v : null);

/**
 * How a body is applied: `insert` (events.insert) and `update` (events.update, PUT) take it as the
 * whole event, so what it leaves out is Google's default (no description, location, guests,
 * recurrence or extended properties, transparency opaque); `patch` (events.patch) merges it into the
 * stored event (RFC 7396: what it leaves out stays, `null` removes).
 */
type Mode = 'insert' | 'update' | 'patch';

/** Applies a Google event resource (`patch`: a partial one) to an event or an occurrence's override. */
function apply(
  body: Record<string, unknown>,
  target: EmuEvent | Override,
  calendarZone: string,
  conferenceVersion: boolean,
  mode: Mode,
) {
  const full = mode !== 'patch';
  const current = target as Partial<EmuEvent>;
  if ('summary' in body || full) target.title = text(body.summary) ?? '';
  if ('description' in body || full) target.description = text(body.description);
  if ('location' in body || full) target.location = text(body.location);
  // Guests named again keep their answers (a client sends back what it read, responseStatus or not).
  if ('attendees' in body || full) target.attendees = attendeesOf(body.attendees, current.attendees);
  if ('start' in body || 'end' in body || full) {
    // A patch merges into the stored start/end: sending only `{date}` to a timed event leaves its
    // `dateTime` there too, which Google refuses; `null` clears a member.
    const stored = (ms: number | undefined) =>
      full || ms === undefined
        ? undefined
        : storedTime(ms, current.allDay === true, current.zoneUnset ? undefined : current.timeZone);
    const merged = (key: 'start' | 'end', ms: number | undefined) =>
      body[key] === undefined ? stored(ms) : full ? mergePatch({}, body[key]) : mergePatch(stored(ms), body[key]);
    const start = readTime(merged('start', current.startMs), calendarZone, 'start');
    const end = readTime(merged('end', current.endMs), start.zone, 'end');
    if (start.allDay !== end.allDay) throw new BadEvent('invalid', 'Invalid end time.');
    if (end.ms <= start.ms) throw new BadEvent('timeRangeEmpty', 'The specified time range is empty.');
    target.startMs = start.ms;
    target.endMs = end.ms;
    if ('timeZone' in current || full) {
      (target as EmuEvent).timeZone = start.zone;
      (target as EmuEvent).allDay = start.allDay;
      // Google shows a timed event's timeZone only when one was given (else the calendar's applies).
      if (start.zoned || start.allDay) delete (target as EmuEvent).zoneUnset;
      else (target as EmuEvent).zoneUnset = true;
    }
  }
  const event = target as EmuEvent;
  // (An occurrence has no recurrence of its own.)
  if (('recurrence' in body || full) && 'recurrence' in current) {
    const lines = Array.isArray(body.recurrence)
      ? body.recurrence.filter((l): l is string => typeof l === 'string')
      : [];
    event.recurrence = lines.length ? lines : null;
  }
  if ('transparency' in body || mode === 'update') {
    const value = body.transparency;
    if (value === 'opaque' || value === 'transparent') target.transparency = value;
    // Left out of a whole event: Google's default, on an occurrence too (not its series' flag).
    else if (value === undefined || (value === null && mode === 'update')) target.transparency = 'opaque';
    // null (a merge patch's "remove") is Google's default again; an occurrence then follows its series.
    else if (value === null) delete target.transparency;
    else throw new BadEvent('invalid', 'Invalid transparency value.');
  }
  // The kind of event is fixed when it is made.
  if (mode === 'insert' && body.eventType !== undefined && body.eventType !== null) {
    if (!EVENT_TYPES.includes(String(body.eventType))) throw new BadEvent('invalid', 'Invalid event type.');
    if (body.eventType !== 'default') event.eventType = String(body.eventType);
  }
  if (('extendedProperties' in body || full) && 'id' in current)
    event.extended = full ? body.extendedProperties : mergePatch(event.extended, body.extendedProperties);
  if ('conferenceData' in body && conferenceVersion && 'id' in current) {
    const data = body.conferenceData as { createRequest?: { conferenceSolutionKey?: { type?: string } } } | null;
    if (data === null) event.conference = null;
    else if (data?.createRequest && !event.conference) {
      if ((data.createRequest.conferenceSolutionKey?.type ?? 'hangoutsMeet') !== 'hangoutsMeet') {
        throw new BadEvent('invalid', 'Invalid conference type value.');
      }
      event.conference = { kind: 'meet', id: meetCode() };
    }
  }
}

/**
 * Google's partial response: `fields=items(id,start),nextPageToken` keeps only those parts of a
 * successful answer (the same syntax, through json-mask, which reads a malformed selection leniently).
 */
function partialResponses(fastify: FastifyInstance): void {
  fastify.addHook('preSerialization', async (request, reply, payload) => {
    const fields = (request.query as Record<string, unknown> | undefined)?.fields;
    if (typeof fields !== 'string' || reply.statusCode >= 300 || !payload || typeof payload !== 'object')
      return payload;
    return mask(payload, fields) ?? {};
  });
}

export async function googleEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  partialResponses(fastify);
  const db = () => fastify.atrium.db;
  const initial = (email: string) => () => newAccount(email, email, email);
  const ensureAccount = (email: string) => updateDoc(db(), NAME, email, initial(email), () => undefined);

  registerOAuthServer(fastify, {
    emulator: NAME,
    authorizePath: '/o/oauth2/v2/auth',
    tokenPath: '/token',
    revokePath: '/revoke',
    faults,
    ensureAccount,
    tokenExtras: (email, clientId) => ({
      scope: 'openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/calendar',
      id_token: idToken('https://accounts.google.com', clientId, email),
    }),
  });

  const authed = async (request: FastifyRequest, reply: FastifyReply) => {
    const email = await bearerEmail(fastify, request, NAME);
    if (!email) {
      googleError(reply, 401);
      return undefined;
    }
    return email;
  };
  /** A fault of the operation; `read` lets a delay overlap the work (the answer still comes after it). */
  const fault = async (operation: string, reply: FastifyReply, read?: FastifyRequest) => {
    const f = await applyFault(faults, operation, read);
    if (!f) return false;
    if (f.body !== undefined) reply.status(f.status!).send(f.body);
    else googleError(reply, f.status!);
    return true;
  };
  const calendarOf = (account: Account, id: string) =>
    account.calendars.find((c) => c.id === (id === 'primary' ? account.email : id));

  fastify.get('/oauth2/v3/userinfo', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email) return reply;
    return reply.send({ sub: email, email, email_verified: true });
  });

  fastify.get('/meet/:code', { schema: { hide: true } }, async (request, reply) =>
    reply
      .type('text/html')
      .send(
        `<!doctype html><title>Google Meet (emulated)</title><h1>Meeting ${(request.params as { code: string }).code.replace(/[^a-z-]/g, '')}</h1><p>The local Google emulator's stand-in for a Meet call.</p>`,
      ),
  );

  // calendars.get / calendars.patch: the calendar's own resource (its time zone above all).
  const calendarJson = (c: Account['calendars'][number]) => ({
    kind: 'calendar#calendar',
    etag: `"${c.id}-${c.timeZone}"`,
    id: c.id,
    summary: c.name,
    timeZone: c.timeZone,
    conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
  });
  fastify.get('/calendar/v3/calendars/:calendarId', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('calendars.get', reply, request))) return reply;
    const account = await readDoc<Account>(db(), NAME, email);
    const calendar = account && calendarOf(account, (request.params as { calendarId: string }).calendarId);
    if (!calendar) return googleError(reply, 404);
    return reply.send(calendarJson(calendar));
  });
  fastify.patch('/calendar/v3/calendars/:calendarId', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email) return reply;
    const body = request.body as { summary?: unknown; timeZone?: unknown } | null;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return googleError(reply, 400, 'parseError', 'Parse Error');
    if (body.timeZone !== undefined && (typeof body.timeZone !== 'string' || !isZone(body.timeZone)))
      return googleError(reply, 400, 'invalid', 'Invalid time zone definition.');
    const calendarId = (request.params as { calendarId: string }).calendarId;
    const changed = await updateDoc(db(), NAME, email, initial(email), (account: Account) => {
      const calendar = calendarOf(account, calendarId);
      if (!calendar) return undefined;
      if (typeof body.summary === 'string') calendar.name = body.summary;
      if (typeof body.timeZone === 'string') calendar.timeZone = body.timeZone;
      return { ...calendar };
    });
    if (!changed) return googleError(reply, 404);
    return reply.send(calendarJson(changed));
  });

  fastify.get('/calendar/v3/users/me/calendarList', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('calendars.list', reply, request))) return reply;
    const account = await updateDoc(db(), NAME, email, initial(email), (a: Account) => a);
    return reply.send({
      kind: 'calendar#calendarList',
      etag: `"${account.events.length}"`,
      items: account.calendars.map((c) => ({
        kind: 'calendar#calendarListEntry',
        id: c.id,
        summary: c.name,
        timeZone: c.timeZone,
        backgroundColor: c.color,
        accessRole: 'owner',
        ...(c.primary ? { primary: true } : {}),
      })),
    });
  });

  fastify.get('/calendar/v3/calendars/:calendarId/events', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('events.list', reply, request))) return reply;
    const q = request.query as Record<string, string | undefined>;
    const account = await readDoc<Account>(db(), NAME, email);
    const calendar = account && calendarOf(account, (request.params as { calendarId: string }).calendarId);
    if (!account || !calendar) return googleError(reply, 404);
    const from = q.timeMin ? Date.parse(q.timeMin) : 0;
    const to = q.timeMax ? Date.parse(q.timeMax) : Date.parse('2100-01-01T00:00:00Z');
    if (!Number.isFinite(from) || !Number.isFinite(to)) return googleError(reply, 400, 'invalid', 'Bad Request');
    if (to <= from) return googleError(reply, 400, 'timeRangeEmpty', 'The specified time range is empty.');
    const max = Math.min(Math.max(Number(q.maxResults ?? 250) || 250, 1), 2500);
    const offset = Math.max(Number(q.pageToken ?? 0) || 0, 0);
    const withCancelled = q.showDeleted === 'true';
    let items: (Instance | EmuEvent)[];
    try {
      items =
        q.singleEvents === 'true'
          ? // All-day events overlap the window as their days in the calendar's zone (or the asked timeZone).
            expand(
              account,
              calendar.id,
              from,
              to,
              withCancelled,
              q.timeZone && isZone(q.timeZone) ? q.timeZone : calendar.timeZone,
            )
          : account.events.filter((e) => e.calendarId === calendar.id && (withCancelled || !e.cancelled));
    } catch (err) {
      if (err instanceof RecurrenceError) return googleError(reply, 400, 'invalid', err.message);
      throw err;
    }
    const page = items.slice(offset, offset + max);
    return reply.send({
      kind: 'calendar#events',
      summary: calendar.name,
      timeZone: calendar.timeZone,
      accessRole: 'owner',
      items: page.map((e) => toJson(request, e as Instance)),
      ...(offset + max < items.length ? { nextPageToken: String(offset + max) } : {}),
    });
  });

  fastify.post('/calendar/v3/calendars/:calendarId/events', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('events.insert', reply))) return reply;
    const q = request.query as Record<string, string | undefined>;
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return googleError(reply, 400, 'parseError', 'Parse Error');
    const calendarId = (request.params as { calendarId: string }).calendarId;
    // A client may choose the event's id (base32hex, 5–1024 characters), which makes a repeated insert
    // safe: the second one is 409 `duplicate`.
    const chosen = (body as { id?: unknown }).id;
    if (chosen !== undefined && (typeof chosen !== 'string' || !/^[a-v0-9]{5,1024}$/.test(chosen)))
      return googleError(reply, 400, 'invalid', 'Invalid resource id value.');
    const result = await updateDoc(db(), NAME, email, initial(email), (account: Account) => {
      const calendar = calendarOf(account, calendarId);
      if (!calendar) return { status: 404 as const };
      if (chosen && account.events.some((e) => e.id === chosen))
        return { status: 409 as const, reason: 'duplicate', message: 'The requested identifier already exists.' };
      const now = new Date().toISOString();
      const event: EmuEvent = {
        id: (chosen as string | undefined) ?? newEventId(),
        calendarId: calendar.id,
        title: '',
        description: null,
        location: null,
        startMs: 0,
        endMs: 0,
        timeZone: calendar.timeZone,
        allDay: false,
        recurrence: null,
        attendees: [],
        organizer: account.email,
        conference: null,
        cancelled: false,
        exceptions: {},
        created: now,
        updated: now,
        sequence: 0,
      };
      try {
        apply(body as Record<string, unknown>, event, calendar.timeZone, q.conferenceDataVersion === '1', 'insert');
        if (event.recurrence) expand({ ...account, events: [event] }, calendar.id, event.startMs, event.startMs + 1);
      } catch (err) {
        if (err instanceof BadEvent || err instanceof RecurrenceError) {
          return {
            status: 400 as const,
            reason: err instanceof BadEvent ? err.reason : 'invalid',
            message: err.message,
          };
        }
        throw err;
      }
      account.events.push(event);
      return { status: 200 as const, event };
    });
    if (result.status !== 200)
      return googleError(
        reply,
        result.status,
        'reason' in result ? result.reason : undefined,
        'message' in result ? result.message : undefined,
      );
    return reply.send(toJson(request, { ...result.event, recurringEventId: null, originalStartMs: null }));
  });

  const eventRoute = '/calendar/v3/calendars/:calendarId/events/:eventId';
  fastify.get(eventRoute, { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email) return reply;
    const { calendarId, eventId } = request.params as { calendarId: string; eventId: string };
    const account = await readDoc<Account>(db(), NAME, email);
    const calendar = account && calendarOf(account, calendarId);
    const target = account && calendar && findTarget(account, eventId, calendar.id);
    if (!target) return googleError(reply, 404);
    const shown =
      target.kind === 'instance' ? target.instance : { ...target.event, recurringEventId: null, originalStartMs: null };
    return reply.send(toJson(request, shown));
  });

  // events.patch merges the body into the event; events.update (PUT) replaces the event with it.
  const change = (mode: 'patch' | 'update') => async (request: FastifyRequest, reply: FastifyReply) => {
    const email = await authed(request, reply);
    if (!email || (await fault(`events.${mode}`, reply))) return reply;
    const q = request.query as Record<string, string | undefined>;
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return googleError(reply, 400, 'parseError', 'Parse Error');
    const { calendarId, eventId } = request.params as { calendarId: string; eventId: string };
    const result = await updateDoc(db(), NAME, email, initial(email), (account: Account) => {
      const calendar = calendarOf(account, calendarId);
      const target = calendar && findTarget(account, eventId, calendar.id);
      if (!calendar || !target) return { status: 404 as const };
      const series = target.event;
      // What the change is made on: the series (its exception) or a copy of the event, which takes the
      // stored one's place only once all of the change is accepted (a refused one changes nothing).
      let changed = series;
      try {
        if (target.kind === 'instance') {
          if (target.instance.cancelled) return { status: 410 as const };
          const key = String(target.originalStartMs);
          const override: Override = { ...series.exceptions[key] };
          const seed = {
            ...override,
            startMs: target.instance.startMs,
            endMs: target.instance.endMs,
            timeZone: series.timeZone,
            allDay: series.allDay,
            attendees: target.instance.attendees,
          };
          apply(body as Record<string, unknown>, seed, series.timeZone, false, mode);
          const { timeZone: _tz, allDay: _allDay, ...kept } = seed;
          series.exceptions[key] = kept;
        } else {
          if (series.cancelled) return { status: 410 as const };
          const next = structuredClone(series);
          apply(body as Record<string, unknown>, next, calendar.timeZone, q.conferenceDataVersion === '1', mode);
          if (next.recurrence) expand({ ...account, events: [next] }, calendar.id, next.startMs, next.startMs + 1);
          account.events[account.events.indexOf(series)] = next;
          changed = next;
        }
      } catch (err) {
        if (err instanceof BadEvent || err instanceof RecurrenceError) {
          return {
            status: 400 as const,
            reason: err instanceof BadEvent ? err.reason : 'invalid',
            message: err.message,
          };
        }
        throw err;
      }
      changed.updated = new Date().toISOString();
      changed.sequence += 1;
      const fresh = findTarget(account, eventId, calendar.id)!;
      return {
        status: 200 as const,
        shown:
          fresh.kind === 'instance'
            ? fresh.instance
            : { ...fresh.event, recurringEventId: null, originalStartMs: null },
      };
    });
    if (result.status !== 200)
      return googleError(
        reply,
        result.status,
        'reason' in result ? result.reason : undefined,
        'message' in result ? result.message : undefined,
      );
    return reply.send(toJson(request, result.shown));
  };
  fastify.patch(eventRoute, { schema: { hide: true } }, change('patch'));
  fastify.put(eventRoute, { schema: { hide: true } }, change('update'));

  fastify.delete(eventRoute, { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('events.delete', reply))) return reply;
    const { calendarId, eventId } = request.params as { calendarId: string; eventId: string };
    const status = await updateDoc(db(), NAME, email, initial(email), (account: Account) => {
      const calendar = calendarOf(account, calendarId);
      const target = calendar && findTarget(account, eventId, calendar.id);
      if (!target) return 404;
      if (target.kind === 'instance') {
        if (target.instance.cancelled || target.event.cancelled) return 410;
        target.event.exceptions[String(target.originalStartMs)] = {
          ...target.event.exceptions[String(target.originalStartMs)],
          cancelled: true,
        };
      } else {
        if (target.event.cancelled) return 410;
        target.event.cancelled = true;
      }
      target.event.updated = new Date().toISOString();
      target.event.sequence += 1;
      return 204;
    });
    if (status !== 204) return googleError(reply, status);
    return reply.status(204).send();
  });
}
