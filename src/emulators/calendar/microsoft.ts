// Microsoft Graph v1.0 (calendars) + Microsoft identity platform v2.0, emulated: /me, /me/calendars,
// calendarView (occurrence ids, type singleInstance/occurrence/exception), events with recurrence
// patterns, Teams through isOnlineMeeting, Graph's error bodies, faults and expire-tokens.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rrulePkg from 'rrule';
import { WINDOWS_ZONES } from '../../platform/windows-zones.js';
import { applyFault, FaultBook, registerFaultRoutes } from '../faults.js';
import {
  type Account,
  type Attendee,
  type EmuEvent,
  expand,
  findTarget,
  GRAPH_SHOW_AS,
  type Instance,
  meetCode,
  newAccount,
  newEventId,
  type Override,
} from './model.js';
import { bearerEmail, registerOAuthServer } from './oauth.js';
import { fromFloating, isZone, RecurrenceError, stamp, toFloating } from './recurrence.js';
import { readDoc, updateDoc } from './store.js';
import { idToken } from './tokens.js';

const { RRule } = rrulePkg;
const NAME = 'microsoft';
const CODES: Record<number, string> = {
  400: 'ErrorInvalidRequest',
  401: 'InvalidAuthenticationToken',
  403: 'ErrorAccessDenied',
  404: 'ErrorItemNotFound',
  409: 'ErrorIrresolvableConflict',
  410: 'ErrorItemNotFound',
  429: 'TooManyRequests',
  503: 'ServiceNotAvailable',
};

function graphError(reply: FastifyReply, status: number, message?: string, code?: string) {
  if (status === 429 || status === 503) reply.header('retry-after', '1');
  return reply.status(status).send({
    error: {
      code: code ?? CODES[status] ?? 'InternalServerError',
      message:
        message ??
        (status === 401
          ? 'Access token has expired or is not yet valid.'
          : status === 404 || status === 410
            ? 'The specified object was not found in the store.'
            : 'The request failed.'),
      innerError: {
        date: new Date().toISOString().slice(0, 19),
        'request-id': randomUUID(),
        'client-request-id': randomUUID(),
      },
    },
  });
}

/** The IANA zone of a name Graph accepts (a Windows name, an IANA name, Graph's UTC alias); else undefined. */
const zoneOf = (name: unknown) => {
  if (typeof name !== 'string') return 'UTC';
  if (name === 'tzone://Microsoft/Utc') return 'UTC';
  const z = WINDOWS_ZONES[name] ?? name;
  return isZone(z) ? z : undefined;
};

const origin = (request: FastifyRequest) => `${request.protocol}://${request.headers.host}`;
/** The zone of `Prefer: outlook.timezone="…"` (UTC without one), and its name as the client wrote it. */
const preferredZone = (request: FastifyRequest) => {
  const m = /outlook\.timezone="([^"]+)"/i.exec(String(request.headers.prefer ?? ''));
  const zone = m ? zoneOf(m[1]) : undefined;
  return zone && m ? { zone, name: m[1] } : { zone: 'UTC', name: 'UTC' };
};
const graphTime = (ms: number, zone: { zone: string; name: string }) => ({
  dateTime: `${new Date(toFloating(ms, zone.zone)).toISOString().slice(0, 19)}.0000000`,
  timeZone: zone.name,
});

/**
 * An all-day event's start or end as Graph shows it: midnight of its day (in the event's zone) whatever
 * zone the Prefer header asks for, labelled with that zone ("by design", Microsoft: all-day events
 * are midnight to midnight regardless of time zone; stored as the instants of the event's midnights).
 */
const allDayTime = (ms: number, eventZone: string, zone: { zone: string; name: string }) => ({
  dateTime: `${new Date(toFloating(ms, eventZone)).toISOString().slice(0, 10)}T00:00:00.0000000`,
  timeZone: zone.name,
});

const RESPONSES: Record<string, string> = {
  needsAction: 'none',
  accepted: 'accepted',
  declined: 'declined',
  tentative: 'tentativelyAccepted',
};

function toJson(request: FastifyRequest, e: Instance, type: string) {
  const zone = preferredZone(request);
  const join = e.conference && `${origin(request)}/_emulators/microsoft/teams/l/meetup-join/${e.conference.id}`;
  return {
    '@odata.etag': `W/"${e.sequence}"`,
    id: e.id,
    createdDateTime: e.created,
    lastModifiedDateTime: e.updated,
    iCalUId: `${e.recurringEventId ?? e.id}@microsoft.example`,
    // Returned when the insert set it, on the event that insert made (a series' master, not its occurrences).
    ...(e.transactionId && !e.recurringEventId ? { transactionId: e.transactionId } : {}),
    subject: e.title,
    bodyPreview: (e.description ?? '').slice(0, 255),
    body: { contentType: 'text', content: e.description ?? '' },
    start: e.allDay ? allDayTime(e.startMs, e.timeZone, zone) : graphTime(e.startMs, zone),
    end: e.allDay ? allDayTime(e.endMs, e.timeZone, zone) : graphTime(e.endMs, zone),
    // Graph names the zone as the client sent it ("Tokyo Standard Time" stays a Windows name).
    originalStartTimeZone: e.zoneName ?? e.timeZone,
    originalEndTimeZone: e.zoneName ?? e.timeZone,
    isAllDay: e.allDay,
    isCancelled: e.cancelled,
    showAs: e.showAs ?? 'busy',
    type,
    seriesMasterId: e.recurringEventId,
    ...(e.originalStartMs !== null ? { originalStart: new Date(e.originalStartMs).toISOString() } : {}),
    location: { displayName: e.location ?? '' },
    attendees: e.attendees.map((a) => ({
      type: 'required',
      emailAddress: { address: a.email, name: a.name ?? a.email },
      status: { response: RESPONSES[a.response] ?? 'none', time: '0001-01-01T00:00:00Z' },
    })),
    organizer: { emailAddress: { address: e.organizer, name: e.organizer } },
    recurrence: type === 'seriesMaster' ? (e.providerRecurrence ?? null) : null,
    isOnlineMeeting: Boolean(join),
    onlineMeetingProvider: join ? 'teamsForBusiness' : 'unknown',
    onlineMeeting: join ? { joinUrl: join } : null,
    webLink: `${origin(request)}/_emulators/microsoft/owa/?itemid=${encodeURIComponent(e.id)}`,
  };
}

const typeOf = (e: Instance) =>
  e.recurringEventId
    ? Object.keys(e.exceptions).length || e.originalStartMs === null
      ? 'exception'
      : 'occurrence'
    : e.recurrence
      ? 'seriesMaster'
      : 'singleInstance';

class BadRequest extends Error {}

const DAYS: Record<string, string> = {
  sunday: 'SU',
  monday: 'MO',
  tuesday: 'TU',
  wednesday: 'WE',
  thursday: 'TH',
  friday: 'FR',
  saturday: 'SA',
};
const INDEX: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, last: -1 };

/** A Graph recurrence (pattern + range) as one RRULE line, its UNTIL at the end of the range's last day. */
function patternToRrule(raw: unknown, zone: string): string {
  const r = raw as { pattern?: Record<string, unknown>; range?: Record<string, unknown> };
  const p = r?.pattern ?? {};
  const range = r?.range ?? {};
  const freq = {
    daily: 'DAILY',
    weekly: 'WEEKLY',
    absoluteMonthly: 'MONTHLY',
    relativeMonthly: 'MONTHLY',
    absoluteYearly: 'YEARLY',
    relativeYearly: 'YEARLY',
  }[String(p.type)];
  if (!freq) throw new BadRequest('Invalid recurrence pattern type');
  const parts = [`FREQ=${freq}`];
  const interval = Number(p.interval ?? 1);
  if (!Number.isInteger(interval) || interval < 1 || interval > 99) throw new BadRequest('Invalid recurrence interval');
  if (interval > 1) parts.push(`INTERVAL=${interval}`);
  const days = (Array.isArray(p.daysOfWeek) ? p.daysOfWeek : [])
    .map((d) => DAYS[String(d).toLowerCase()])
    .filter(Boolean);
  const n = String(p.type).startsWith('relative') ? INDEX[String(p.index ?? 'first')] : undefined;
  if (days.length) parts.push(`BYDAY=${days.map((d) => `${n ?? ''}${d}`).join(',')}`);
  if (String(p.type).endsWith('Yearly') && p.month) parts.push(`BYMONTH=${Number(p.month)}`);
  if (String(p.type).startsWith('absolute') && p.type !== 'daily' && p.dayOfMonth)
    parts.push(`BYMONTHDAY=${Number(p.dayOfMonth)}`);
  if (range.type === 'numbered') parts.push(`COUNT=${Math.max(1, Number(range.numberOfOccurrences ?? 1))}`);
  if (range.type === 'endDate') {
    if (typeof range.endDate !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(range.endDate))
      throw new BadRequest('Invalid range endDate');
    const until = fromFloating(Date.parse(`${range.endDate}T23:59:59Z`), zoneOf(range.recurrenceTimeZone) ?? zone);
    parts.push(`UNTIL=${stamp(until)}`);
  }
  const line = `RRULE:${parts.join(';')}`;
  RRule.parseString(line.slice(6));
  return line;
}

function readTime(t: unknown): { ms: number; zone: string; name: string } {
  const time = (t ?? {}) as { dateTime?: string; timeZone?: string };
  const name = time.timeZone ?? 'UTC';
  const zone = zoneOf(name);
  if (!zone) throw new BadRequest(`Time zone ${String(time.timeZone)} is not supported`);
  if (typeof time.dateTime !== 'string') throw new BadRequest('start and end need a dateTime');
  const local = time.dateTime.replace(/(\.\d+)?([zZ]|[+-]\d\d:\d\d)?$/, '');
  const ms = fromFloating(Date.parse(`${local}Z`), zone);
  if (!Number.isFinite(ms)) throw new BadRequest('Invalid dateTime');
  return { ms, zone, name: String(name) };
}

const attendeesOf = (raw: unknown, before: Attendee[] = []): Attendee[] =>
  (Array.isArray(raw) ? raw : []).flatMap((a) => {
    const email = typeof a?.emailAddress?.address === 'string' ? a.emailAddress.address.toLowerCase() : undefined;
    if (!email) return [];
    const known = before.find((b) => b.email === email);
    return [
      {
        email,
        name: typeof a.emailAddress.name === 'string' ? a.emailAddress.name : (known?.name ?? null),
        response: known?.response ?? 'needsAction',
      },
    ];
  });

function apply(body: Record<string, unknown>, target: EmuEvent | (Override & { timeZone?: string }), full: boolean) {
  const current = target as Partial<EmuEvent>;
  if ('subject' in body || full) target.title = typeof body.subject === 'string' ? body.subject : '';
  if ('body' in body) target.description = (body.body as { content?: string } | null)?.content || null;
  if ('location' in body) target.location = (body.location as { displayName?: string } | null)?.displayName || null;
  if ('attendees' in body) target.attendees = attendeesOf(body.attendees, current.attendees);
  if ('start' in body || 'end' in body || full) {
    const start = body.start
      ? readTime(body.start)
      : { ms: current.startMs ?? Number.NaN, zone: current.timeZone ?? 'UTC', name: current.zoneName };
    const end = body.end ? readTime(body.end) : { ms: current.endMs ?? Number.NaN, zone: start.zone };
    if (!Number.isFinite(start.ms) || !Number.isFinite(end.ms)) throw new BadRequest('start and end are required');
    if (end.ms <= start.ms) throw new BadRequest('The end of the event must be after its start.');
    target.startMs = start.ms;
    target.endMs = end.ms;
    if ('timeZone' in current) {
      target.timeZone = start.zone;
      (target as EmuEvent).zoneName = start.name;
    }
  }
  if ('showAs' in body) {
    const showAs = GRAPH_SHOW_AS.find((v) => v === body.showAs);
    if (!showAs) throw new BadRequest(`Requested value '${String(body.showAs)}' was not found.`);
    target.showAs = showAs;
  }
  const event = target as EmuEvent;
  if ('isAllDay' in body && 'allDay' in current) event.allDay = body.isAllDay === true;
  if ('recurrence' in body && 'recurrence' in current) {
    event.recurrence = body.recurrence ? [patternToRrule(body.recurrence, event.timeZone)] : null;
    event.providerRecurrence = body.recurrence ?? undefined;
  }
  if ('isOnlineMeeting' in body && 'conference' in current) {
    if (body.isOnlineMeeting === true && !event.conference) {
      const provider = body.onlineMeetingProvider ?? 'teamsForBusiness';
      if (provider !== 'teamsForBusiness') throw new BadRequest('Only teamsForBusiness meetings are available');
      event.conference = { kind: 'teams', id: `19:meeting_${meetCode().replace(/-/g, '')}@thread.v2` };
    } else if (body.isOnlineMeeting === false) event.conference = null;
  }
}

/**
 * OData `$select` on reads: only the named properties of each entity (and of each item of a
 * collection's `value`), with `id` and `@odata.etag` always kept, as Graph does.
 */
function selectedProperties(fastify: FastifyInstance): void {
  const pick = (entity: unknown, keep: Set<string>) =>
    entity && typeof entity === 'object'
      ? Object.fromEntries(Object.entries(entity).filter(([key]) => keep.has(key)))
      : entity;
  fastify.addHook('preSerialization', async (request, reply, payload) => {
    const select = (request.query as Record<string, unknown> | undefined)?.$select;
    if (typeof select !== 'string' || request.method !== 'GET' || reply.statusCode >= 300) return payload;
    if (!payload || typeof payload !== 'object') return payload;
    const keep = new Set(['id', '@odata.etag', ...select.split(',').map((k) => k.trim())]);
    const body = payload as Record<string, unknown>;
    return Array.isArray(body.value) ? { ...body, value: body.value.map((e) => pick(e, keep)) } : pick(body, keep);
  });
}

export async function microsoftEmulator(fastify: FastifyInstance): Promise<void> {
  const faults = new FaultBook();
  registerFaultRoutes(fastify, faults);
  selectedProperties(fastify);
  const db = () => fastify.atrium.db;
  const initial = (email: string) => () =>
    newAccount(email, `AAMk${Buffer.from(email).toString('base64url')}`, 'Calendar');
  const ensureAccount = (email: string) => updateDoc(db(), NAME, email, initial(email), () => undefined);

  registerOAuthServer(fastify, {
    emulator: NAME,
    authorizePath: '/common/oauth2/v2.0/authorize',
    tokenPath: '/common/oauth2/v2.0/token',
    faults,
    ensureAccount,
    tokenExtras: (email, clientId) => ({
      scope: 'openid email offline_access User.Read Calendars.ReadWrite',
      ext_expires_in: 3599,
      id_token: idToken('https://login.microsoftonline.com/common/v2.0', clientId, email, {
        preferred_username: email,
        oid: randomUUID(),
      }),
    }),
    errorExtras: () => ({
      error_codes: [70008],
      timestamp: new Date().toISOString(),
      trace_id: randomUUID(),
      correlation_id: randomUUID(),
    }),
  });

  const authed = async (request: FastifyRequest, reply: FastifyReply) => {
    const email = await bearerEmail(fastify, request, NAME);
    if (!email) graphError(reply, 401, undefined, 'InvalidAuthenticationToken');
    return email;
  };
  /** A fault of the operation; `read` lets a delay overlap the work (the answer still comes after it). */
  const fault = async (operation: string, reply: FastifyReply, read?: FastifyRequest) => {
    const f = await applyFault(faults, operation, read);
    if (!f) return false;
    if (f.body !== undefined) reply.status(f.status!).send(f.body);
    else graphError(reply, f.status!);
    return true;
  };
  const shown = (e: Instance) => e;
  const asInstance = (e: EmuEvent): Instance => ({ ...e, recurringEventId: null, originalStartMs: null });

  fastify.get('/v1.0/me', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email) return reply;
    return reply.send({
      id: Buffer.from(email).toString('hex').slice(0, 32),
      displayName: email.split('@')[0],
      mail: email,
      userPrincipalName: email,
    });
  });

  fastify.get('/teams/l/meetup-join/*', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html')
      .send(
        "<!doctype html><title>Microsoft Teams (emulated)</title><h1>Teams meeting</h1><p>The local Microsoft emulator's stand-in for a Teams call.</p>",
      ),
  );

  fastify.get('/v1.0/me/calendars', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('calendars.list', reply, request))) return reply;
    const account = await updateDoc(db(), NAME, email, initial(email), (a: Account) => a);
    return reply.send({
      '@odata.context': "https://graph.microsoft.com/v1.0/$metadata#users('me')/calendars",
      value: account.calendars.map((c) => ({
        id: c.id,
        name: c.name,
        color: 'auto',
        hexColor: '#0078d4',
        isDefaultCalendar: c.primary,
        canEdit: true,
        canShare: true,
        owner: { name: account.email.split('@')[0], address: account.email },
      })),
    });
  });

  fastify.get('/v1.0/me/calendars/:calendarId/calendarView', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('events.list', reply, request))) return reply;
    const q = request.query as Record<string, string | undefined>;
    const account = await readDoc<Account>(db(), NAME, email);
    const calendar = account?.calendars.find((c) => c.id === (request.params as { calendarId: string }).calendarId);
    if (!account || !calendar) return graphError(reply, 404);
    const from = Date.parse(q.startDateTime ?? '');
    const to = Date.parse(q.endDateTime ?? '');
    if (!Number.isFinite(from) || !Number.isFinite(to)) {
      return graphError(
        reply,
        400,
        'This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.',
        'ErrorInvalidParameter',
      );
    }
    const top = Math.min(Math.max(Number(q.$top ?? 100) || 100, 1), 1000);
    const skip = Math.max(Number(q.$skiptoken ?? 0) || 0, 0);
    let items: Instance[];
    try {
      items = expand(account, calendar.id, from, to);
    } catch (err) {
      if (err instanceof RecurrenceError) return graphError(reply, 400, err.message);
      throw err;
    }
    const next = new URL(`${origin(request)}${request.url}`);
    next.searchParams.set('$skiptoken', String(skip + top));
    return reply.send({
      value: items.slice(skip, skip + top).map((e) => toJson(request, e, typeOf(e))),
      ...(skip + top < items.length ? { '@odata.nextLink': next.toString() } : {}),
    });
  });

  fastify.post('/v1.0/me/calendars/:calendarId/events', { schema: { hide: true } }, async (request, reply) => {
    const email = await authed(request, reply);
    if (!email || (await fault('events.insert', reply))) return reply;
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return graphError(reply, 400, 'Empty Payload. JSON content expected.');
    const calendarId = (request.params as { calendarId: string }).calendarId;
    // Graph's `transactionId`: a create repeated with the same one (a client's retry) gets the event the
    // first one made, not a second event.
    const transactionId = (body as { transactionId?: unknown }).transactionId;
    if (transactionId !== undefined && typeof transactionId !== 'string')
      return graphError(reply, 400, 'Invalid value for transactionId.');
    const result = await updateDoc(db(), NAME, email, initial(email), (account: Account) => {
      const calendar = account.calendars.find((c) => c.id === calendarId);
      if (!calendar) return { status: 404 as const };
      const made = transactionId ? account.events.find((e) => e.transactionId === transactionId) : undefined;
      if (made) return { status: 201 as const, event: made };
      const now = new Date().toISOString();
      const event: EmuEvent = {
        ...(transactionId ? { transactionId } : {}),
        id: `AAMkAG${newEventId()}`,
        calendarId,
        title: '',
        description: null,
        location: null,
        startMs: 0,
        endMs: 0,
        timeZone: 'UTC',
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
        apply(body as Record<string, unknown>, event, true);
        if (event.recurrence) expand({ ...account, events: [event] }, calendarId, event.startMs, event.startMs + 1);
      } catch (err) {
        if (err instanceof BadRequest || err instanceof RecurrenceError)
          return { status: 400 as const, message: err.message };
        throw err;
      }
      account.events.push(event);
      return { status: 201 as const, event };
    });
    if (result.status !== 201)
      return graphError(reply, result.status, 'message' in result ? result.message : undefined);
    return reply
      .status(201)
      .send(toJson(request, asInstance(result.event), result.event.recurrence ? 'seriesMaster' : 'singleInstance'));
  });

  const find = (account: Account | undefined, id: string) => (account ? findTarget(account, id) : undefined);
  for (const path of ['/v1.0/me/events/:eventId', '/v1.0/me/calendars/:calendarId/events/:eventId']) {
    fastify.get(path, { schema: { hide: true } }, async (request, reply) => {
      const email = await authed(request, reply);
      if (!email) return reply;
      const target = find(await readDoc<Account>(db(), NAME, email), (request.params as { eventId: string }).eventId);
      if (!target || (target.kind === 'event' && target.event.cancelled)) return graphError(reply, 404);
      const e = target.kind === 'instance' ? target.instance : asInstance(target.event);
      return reply.send(
        toJson(
          request,
          shown(e),
          target.kind === 'instance' ? typeOf(e) : e.recurrence ? 'seriesMaster' : 'singleInstance',
        ),
      );
    });

    fastify.patch(path, { schema: { hide: true } }, async (request, reply) => {
      const email = await authed(request, reply);
      if (!email || (await fault('events.patch', reply))) return reply;
      const body = request.body;
      if (!body || typeof body !== 'object' || Array.isArray(body))
        return graphError(reply, 400, 'Empty Payload. JSON content expected.');
      const eventId = (request.params as { eventId: string }).eventId;
      const result = await updateDoc(db(), NAME, email, initial(email), (account: Account) => {
        const target = findTarget(account, eventId);
        if (!target) return { status: 404 as const };
        const series = target.event;
        if (series.cancelled || (target.kind === 'instance' && target.instance.cancelled))
          return { status: 410 as const };
        // What the change is made on: a copy of the event (a single one or a series master) or of the
        // occurrence's exception, which takes the stored one's place only once all of the change is
        // accepted (a refused one changes nothing, not even the members before the one refused).
        let changed = series;
        try {
          if (target.kind === 'instance') {
            const key = String(target.originalStartMs);
            const seed: Override = {
              ...series.exceptions[key],
              startMs: target.instance.startMs,
              endMs: target.instance.endMs,
              attendees: target.instance.attendees,
            };
            apply(body as Record<string, unknown>, seed, false);
            series.exceptions[key] = seed;
          } else {
            const next = structuredClone(series);
            apply(body as Record<string, unknown>, next, false);
            if (next.recurrence)
              expand({ ...account, events: [next] }, next.calendarId, next.startMs, next.startMs + 1);
            account.events[account.events.indexOf(series)] = next;
            changed = next;
          }
        } catch (err) {
          if (err instanceof BadRequest || err instanceof RecurrenceError)
            return { status: 400 as const, message: err.message };
          throw err;
        }
        changed.updated = new Date().toISOString();
        changed.sequence += 1;
        const fresh = findTarget(account, eventId)!;
        const e = fresh.kind === 'instance' ? fresh.instance : asInstance(fresh.event);
        return {
          status: 200 as const,
          e,
          type: fresh.kind === 'instance' ? 'exception' : e.recurrence ? 'seriesMaster' : 'singleInstance',
        };
      });
      if (result.status !== 200)
        return graphError(reply, result.status, 'message' in result ? result.message : undefined);
      return reply.send(toJson(request, result.e, result.type));
    });

    fastify.delete(path, { schema: { hide: true } }, async (request, reply) => {
      const email = await authed(request, reply);
      if (!email || (await fault('events.delete', reply))) return reply;
      const eventId = (request.params as { eventId: string }).eventId;
      const status = await updateDoc(db(), NAME, email, initial(email), (account: Account) => {
        const target = findTarget(account, eventId);
        if (!target) return 404;
        if (target.event.cancelled || (target.kind === 'instance' && target.instance.cancelled)) return 410;
        if (target.kind === 'instance') {
          const key = String(target.originalStartMs);
          target.event.exceptions[key] = { ...target.event.exceptions[key], cancelled: true };
        } else target.event.cancelled = true;
        target.event.updated = new Date().toISOString();
        target.event.sequence += 1;
        return 204;
      });
      if (status !== 204) return graphError(reply, status);
      return reply.status(204).send();
    });
  }
}
