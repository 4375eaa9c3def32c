// Google Calendar API v3 adapter: calendarList, events with singleEvents=true (series expanded),
// instance ids for single occurrences, Meet through conferenceData.createRequest
// (conferenceDataVersion=1). Only this file knows Google's JSON.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { linkUrl } from '../../../platform/http/url-guard.js';
import { commonCode, type ErrorTable, isGone, ProviderError, providerCall } from './http.js';
import { fieldMask } from './selection.js';
import type {
  CalendarProvider,
  ProviderAttendee,
  ProviderDraft,
  ProviderEvent,
  ProviderSession,
  ResponseStatus,
} from './types.js';

/** Google's error body: {error: {code, message, errors: [{domain, reason, message}], status}}. */
const errorBody = z.object({
  error: z.object({ errors: z.array(z.object({ reason: z.string().optional() })).optional() }),
});

/** Google status + reason → write-result code (contract §5.2). */
export const googleErrors: ErrorTable = (status, body, what) => {
  const parsed = errorBody.safeParse(body);
  const reason = parsed.success ? parsed.data.error.errors?.[0]?.reason : undefined;
  if (reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded' || reason === 'quotaExceeded') {
    return 'rate_limited';
  }
  if (reason === 'deleted') return 'gone';
  if (reason === 'timeRangeEmpty' || reason === 'invalid' || reason === 'required') return 'invalid_draft';
  if (reason === 'duplicate') return 'provider_conflict';
  if (reason === 'conditionNotMet') return 'provider_conflict';
  if (reason === 'forbiddenForNonOrganizer' || reason === 'forbidden') return 'provider_forbidden';
  return commonCode(status, what);
};

const dateTime = z.object({
  dateTime: z.string().optional(),
  date: z.string().optional(),
  timeZone: z.string().optional(),
});

const googleEvent = z.object({
  id: z.string(),
  status: z.string().optional(),
  summary: z.string().optional(),
  description: z.string().optional(),
  location: z.string().optional(),
  start: dateTime,
  end: dateTime,
  recurrence: z.array(z.string()).optional(),
  recurringEventId: z.string().optional(),
  originalStartTime: dateTime.optional(),
  attendees: z
    .array(z.object({ email: z.string(), displayName: z.string().optional(), responseStatus: z.string().optional() }))
    .optional(),
  organizer: z.object({ email: z.string().optional() }).optional(),
  hangoutLink: z.string().optional(),
  transparency: z.string().optional(),
  eventType: z.string().optional(),
  conferenceData: z
    .object({
      entryPoints: z.array(z.object({ entryPointType: z.string(), uri: z.string() })).optional(),
      conferenceSolution: z.object({ key: z.object({ type: z.string() }) }).optional(),
    })
    .optional(),
});
type GoogleEvent = z.infer<typeof googleEvent>;

const RESPONSE: Record<string, ResponseStatus> = {
  needsAction: 'needsAction',
  accepted: 'accepted',
  declined: 'declined',
  tentative: 'tentative',
};

const instant = (t: z.infer<typeof dateTime>): string =>
  t.dateTime ? new Date(t.dateTime).toISOString() : `${t.date}T00:00:00.000Z`;

export function fromGoogle(e: GoogleEvent, calendarTimeZone: string): ProviderEvent {
  const video = linkUrl(e.conferenceData?.entryPoints?.find((p) => p.entryPointType === 'video')?.uri ?? e.hangoutLink);
  return {
    providerEventId: e.id,
    title: e.summary ?? '',
    description: e.description ?? null,
    start: instant(e.start),
    end: instant(e.end),
    timeZone: e.start.timeZone ?? calendarTimeZone,
    allDay: Boolean(e.start.date && !e.start.dateTime),
    location: e.location ?? null,
    attendees: (e.attendees ?? []).map(
      (a): ProviderAttendee => ({
        email: a.email,
        name: a.displayName ?? null,
        responseStatus: RESPONSE[a.responseStatus ?? ''] ?? 'needsAction',
      }),
    ),
    organizer: e.organizer?.email ?? null,
    recurrence: e.recurrence ?? null,
    recurringEventId: e.recurringEventId ?? null,
    originalStart: e.recurringEventId && e.originalStartTime ? instant(e.originalStartTime) : null,
    conference: video ? { product: 'meet', joinUrl: video } : null,
    // Opaque is Google's default; an out-of-office block is busy whatever it says.
    showAs: e.transparency === 'transparent' && e.eventType !== 'outOfOffice' ? 'free' : 'busy',
    cancelled: e.status === 'cancelled',
  };
}

export function toGoogle(d: ProviderDraft): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (d.title !== undefined) body.summary = d.title;
  if (d.description !== undefined) body.description = d.description ?? '';
  if (d.location !== undefined) body.location = d.location ?? '';
  // Google merges a PATCH into nested objects: the other kind's members are cleared with null, or
  // an event changing between timed and all-day would hold both `date` and `dateTime` (refused).
  const when = (iso: string) =>
    d.allDay
      ? { date: iso.slice(0, 10), dateTime: null, timeZone: null }
      : { dateTime: iso, timeZone: d.timeZone ?? 'UTC', date: null };
  if (d.start !== undefined) body.start = when(d.start);
  if (d.end !== undefined) body.end = when(d.end);
  if (d.attendees !== undefined) {
    body.attendees = d.attendees.map((a) => ({ email: a.email, ...(a.name ? { displayName: a.name } : {}) }));
  }
  if (d.recurrence !== undefined) body.recurrence = d.recurrence ?? [];
  if (d.showAs !== undefined) body.transparency = d.showAs === 'free' ? 'transparent' : 'opaque';
  if (d.nativeConference === true) {
    body.conferenceData = {
      createRequest: { requestId: randomUUID(), conferenceSolutionKey: { type: 'hangoutsMeet' } },
    };
  } else if (d.nativeConference === false) {
    body.conferenceData = null;
  }
  return body;
}

const calendarList = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      summary: z.string().optional(),
      primary: z.boolean().optional(),
      backgroundColor: z.string().optional(),
    }),
  ),
});

/** The list's partial response: the page fields and, per event, what `googleEvent` reads. */
export const GOOGLE_LIST_FIELDS = `nextPageToken,timeZone,items(${fieldMask(googleEvent)})`;

const eventList = z.object({
  items: z.array(z.unknown()).default([]),
  nextPageToken: z.string().optional(),
  timeZone: z.string().optional(),
});

const path = (calendarId: string, eventId?: string) =>
  `/calendars/${encodeURIComponent(calendarId)}/events${eventId ? `/${encodeURIComponent(eventId)}` : ''}`;

/** Parses one event; a malformed item from the provider is skipped rather than failing the list. */
export const readGoogleEvent = (raw: unknown, tz: string) => {
  const parsed = googleEvent.safeParse(raw);
  return parsed.success ? fromGoogle(parsed.data, tz) : undefined;
};

const MAX_PAGES = 20;

/**
 * An event without `start.timeZone` (made elsewhere with a UTC offset, or all-day) is in its
 * calendar's zone, which Google's `calendars/{id}` resource has. It is asked only when an event
 * lacks its own zone, once per calendar per operation (the operation's session is the key), and a
 * list of the calendar in the same operation supplies it for free (its answer carries `timeZone`).
 */
const calendarZones = new WeakMap<ProviderSession, Map<string, Promise<string>>>();
const calendarResource = z.object({ timeZone: z.string().optional() });

function zonesOf(session: ProviderSession) {
  let zones = calendarZones.get(session);
  if (!zones) {
    zones = new Map();
    calendarZones.set(session, zones);
  }
  return zones;
}

function calendarZone(session: ProviderSession, calendarId: string): Promise<string> {
  const zones = zonesOf(session);
  let zone = zones.get(calendarId);
  if (!zone) {
    zone = providerCall(
      'google',
      session,
      {
        method: 'GET',
        path: `/calendars/${encodeURIComponent(calendarId)}`,
        query: { fields: 'timeZone' },
        what: 'calendar',
      },
      googleErrors,
    ).then(({ body }) => calendarResource.parse(body).timeZone ?? 'UTC');
    // A failed read is not kept: the next event asks again.
    zone.catch(() => {
      if (zones.get(calendarId) === zone) zones.delete(calendarId);
    });
    zones.set(calendarId, zone);
  }
  return zone;
}

/**
 * One event from an answer, in its own zone or else its calendar's. After a write (`afterWrite`: the
 * draft's zone) a failed read of the calendar's zone falls back to the draft's: the provider has the change,
 * so the write must not be answered as failed (the caller would skip its own records of it).
 */
async function eventOf(
  session: ProviderSession,
  calendarId: string,
  raw: unknown,
  afterWrite?: { timeZone: string },
): Promise<ProviderEvent> {
  const e = googleEvent.parse(raw);
  if (e.start.timeZone) return fromGoogle(e, e.start.timeZone);
  const zone = afterWrite
    ? await calendarZone(session, calendarId).catch(() => afterWrite.timeZone)
    : await calendarZone(session, calendarId);
  return fromGoogle(e, zone);
}

export const googleCalendar: CalendarProvider = {
  name: 'google',
  meetingProduct: 'meet',

  apiBaseUrl: (base) =>
    base.includes('/_emulators/') ? `${base}/calendar/v3` : 'https://www.googleapis.com/calendar/v3',

  oauth(base, credentials, timeoutMs) {
    const emulated = base.includes('/_emulators/');
    return {
      name: 'google',
      authorizeUrl: emulated ? `${base}/o/oauth2/v2/auth` : 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: emulated ? `${base}/token` : 'https://oauth2.googleapis.com/token',
      revokeUrl: emulated ? `${base}/revoke` : 'https://oauth2.googleapis.com/revoke',
      userInfoUrl: emulated ? `${base}/oauth2/v3/userinfo` : 'https://openidconnect.googleapis.com/v1/userinfo',
      clientId: credentials.clientId,
      clientSecret: credentials.clientSecret,
      scopes: ['openid', 'email', 'https://www.googleapis.com/auth/calendar'],
      authorizeParams: { access_type: 'offline', prompt: 'consent' },
      timeoutMs,
    };
  },

  async listCalendars(session) {
    const { body } = await providerCall(
      'google',
      session,
      { method: 'GET', path: '/users/me/calendarList', what: 'calendar' },
      googleErrors,
    );
    return calendarList.parse(body).items.map((c) => ({
      providerCalendarId: c.id,
      name: c.summary ?? c.id,
      primary: c.primary === true,
      color: c.backgroundColor ?? null,
    }));
  },

  async listEvents(session, calendarId, window) {
    const out: ProviderEvent[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const { body } = await providerCall(
        'google',
        session,
        {
          method: 'GET',
          path: path(calendarId),
          query: {
            timeMin: window.timeMin,
            timeMax: window.timeMax,
            singleEvents: true,
            orderBy: 'startTime',
            maxResults: 2500,
            fields: GOOGLE_LIST_FIELDS,
            pageToken,
          },
          what: 'calendar',
        },
        googleErrors,
      );
      const list = eventList.parse(body);
      if (list.timeZone) zonesOf(session).set(calendarId, Promise.resolve(list.timeZone));
      for (const raw of list.items) {
        const event = readGoogleEvent(raw, list.timeZone ?? 'UTC');
        if (event && !event.cancelled) out.push(event);
      }
      pageToken = list.nextPageToken;
      if (!pageToken) break;
    }
    return out;
  },

  async getEvent(session, calendarId, eventId) {
    const { body } = await providerCall(
      'google',
      session,
      { method: 'GET', path: path(calendarId, eventId) },
      googleErrors,
    );
    return eventOf(session, calendarId, body);
  },

  async insertEvent(session, calendarId, draft) {
    let answer: unknown;
    try {
      ({ body: answer } = await providerCall(
        'google',
        session,
        {
          method: 'POST',
          path: path(calendarId),
          query: { conferenceDataVersion: 1 },
          json: { ...toGoogle(draft), ...(draft.clientKey ? { id: draft.clientKey } : {}) },
          what: 'calendar',
        },
        googleErrors,
      ));
    } catch (err) {
      // The id is ours and already taken: an earlier insert of this same create (a retry after a timeout)
      // made the event. It is the answer.
      if (!(draft.clientKey && err instanceof ProviderError && err.reason === 'provider_conflict')) throw err;
      ({ body: answer } = await providerCall(
        'google',
        session,
        { method: 'GET', path: path(calendarId, draft.clientKey) },
        googleErrors,
      ));
    }
    return eventOf(session, calendarId, answer, { timeZone: draft.timeZone ?? 'UTC' });
  },

  // The key is the event's own id: nothing to ask.
  async insertedWith(_session, _calendarId, eventId, clientKey) {
    return eventId === clientKey;
  },

  async patchEvent(session, calendarId, eventId, draft) {
    const { body } = await providerCall(
      'google',
      session,
      { method: 'PATCH', path: path(calendarId, eventId), query: { conferenceDataVersion: 1 }, json: toGoogle(draft) },
      googleErrors,
    );
    return eventOf(session, calendarId, body, { timeZone: draft.timeZone ?? 'UTC' });
  },

  async deleteEvent(session, calendarId, eventId) {
    try {
      await providerCall('google', session, { method: 'DELETE', path: path(calendarId, eventId) }, googleErrors);
    } catch (err) {
      if (isGone(err)) return;
      throw err;
    }
  },
};
