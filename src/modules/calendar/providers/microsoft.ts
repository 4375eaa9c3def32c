// Microsoft Graph v1.0 adapter: /me/calendars, calendarView (series expanded, occurrence ids),
// events with Teams through isOnlineMeeting + onlineMeetingProvider "teamsForBusiness". Graph
// takes local wall-clock times and a recurrence pattern instead of an RRULE (graph-recurrence.ts).
import { z } from 'zod';
import { linkUrl } from '../../../platform/http/url-guard.js';
import {
  fromGraphRecurrence,
  type GraphRecurrence,
  toGraphRecurrence,
  UnsupportedRecurrence,
} from './graph-recurrence.js';
import { commonCode, type ErrorTable, isGone, ProviderError, providerCall } from './http.js';
import { selectList } from './selection.js';
import type { CalendarProvider, ProviderDraft, ProviderEvent, ResponseStatus } from './types.js';
import { fromFloating, ianaZoneOf, localDateTime, toFloating } from './zoned.js';

const errorBody = z.object({ error: z.object({ code: z.string().optional() }) });

/** Graph status + error code → write-result code (contract §5.2). */
export const graphErrors: ErrorTable = (status, body, what) => {
  const parsed = errorBody.safeParse(body);
  const code = parsed.success ? parsed.data.error.code : undefined;
  if (code === 'ErrorItemNotFound' && status === 410) return 'gone';
  if (code === 'ErrorItemNotFound' || code === 'ErrorInvalidIdMalformed') {
    return what === 'calendar' ? 'calendar_not_found' : 'event_not_found';
  }
  if (code === 'TooManyRequests' || code === 'ApplicationThrottled') return 'rate_limited';
  if (code === 'ErrorAccessDenied' || code === 'Authorization_RequestDenied') return 'provider_forbidden';
  if (code === 'ErrorIrresolvableConflict') return 'provider_conflict';
  if (code === 'ErrorInvalidRequest' || code === 'ErrorInvalidParameter' || code === 'ErrorPropertyValidationFailure') {
    return 'invalid_draft';
  }
  if (code === 'InvalidAuthenticationToken') return 'reauth_required';
  return commonCode(status, what);
};

const graphTime = z.object({ dateTime: z.string(), timeZone: z.string().optional() });

const graphEvent = z.object({
  id: z.string(),
  subject: z.string().nullish(),
  body: z.object({ contentType: z.string().optional(), content: z.string().optional() }).nullish(),
  start: graphTime,
  end: graphTime,
  isAllDay: z.boolean().optional(),
  isCancelled: z.boolean().optional(),
  location: z.object({ displayName: z.string().nullish() }).nullish(),
  attendees: z
    .array(
      z.object({
        emailAddress: z.object({ address: z.string(), name: z.string().nullish() }),
        status: z.object({ response: z.string().optional() }).nullish(),
      }),
    )
    .optional(),
  organizer: z.object({ emailAddress: z.object({ address: z.string().optional() }) }).nullish(),
  type: z.string().optional(),
  seriesMasterId: z.string().nullish(),
  recurrence: z.unknown().nullish(),
  isOnlineMeeting: z.boolean().optional(),
  onlineMeeting: z.object({ joinUrl: z.string().nullish() }).nullish(),
  originalStartTimeZone: z.string().nullish(),
  originalStart: z.string().nullish(),
  showAs: z.string().nullish(),
});
type GraphEvent = z.infer<typeof graphEvent>;

/** The list's `$select`: the properties `graphEvent` reads. */
export const GRAPH_LIST_SELECT = selectList(graphEvent);

const RESPONSE: Record<string, ResponseStatus> = {
  none: 'needsAction',
  notResponded: 'needsAction',
  accepted: 'accepted',
  organizer: 'accepted',
  declined: 'declined',
  tentativelyAccepted: 'tentative',
};

/** Graph answers UTC (we ask for it with Prefer): `2026-11-24T09:00:00.0000000` has no offset. */
const utc = (t: z.infer<typeof graphTime>) => {
  const raw = /[zZ]|[+-]\d\d:\d\d$/.test(t.dateTime) ? t.dateTime : `${t.dateTime}Z`;
  return new Date(raw).toISOString();
};

/**
 * An all-day event's day, as `YYYY-MM-DDT00:00:00.000Z` (the convention Google's all-day dates give:
 * the first day, and the day after the last). Graph documents all-day times as midnight whatever
 * zone the Prefer header asks for, so a midnight is that day; any other time is an instant (in the
 * zone it is labelled with) whose date is read in the event's own zone: midnight in Los Angeles
 * answered in UTC, `2026-03-19T07:00:00`, is 19 March.
 */
function allDayDate(t: z.infer<typeof graphTime>, eventZone: string): string {
  const local = t.dateTime.replace(/(\.\d+)?([zZ]|[+-]\d\d:\d\d)?$/, '');
  if (/T00:00:00$/.test(local)) return `${local.slice(0, 10)}T00:00:00.000Z`;
  const instant = /([zZ]|[+-]\d\d:\d\d)$/.test(t.dateTime)
    ? Date.parse(t.dateTime)
    : fromFloating(Date.parse(`${local}Z`), ianaZoneOf(t.timeZone ?? 'UTC'));
  return `${new Date(toFloating(instant, eventZone)).toISOString().slice(0, 10)}T00:00:00.000Z`;
}

export function fromGraph(e: GraphEvent): ProviderEvent {
  const joinUrl = e.isOnlineMeeting ? linkUrl(e.onlineMeeting?.joinUrl) : undefined;
  // Outlook writes Windows names ("Pacific Standard Time"): read as IANA, anything unreadable as UTC.
  const timeZone = ianaZoneOf(e.originalStartTimeZone);
  const allDay = e.isAllDay === true;
  const occurrence = e.type === 'occurrence' || e.type === 'exception';
  const originalStart = occurrence ? graphInstant(e.originalStart) : null;
  return {
    providerEventId: e.id,
    title: e.subject ?? '',
    description: e.body?.content ? e.body.content : null,
    start: allDay ? allDayDate(e.start, timeZone) : utc(e.start),
    end: allDay ? allDayDate(e.end, timeZone) : utc(e.end),
    timeZone,
    allDay,
    location: e.location?.displayName || null,
    attendees: (e.attendees ?? []).map((a) => ({
      email: a.emailAddress.address,
      name: a.emailAddress.name ?? null,
      responseStatus: RESPONSE[a.status?.response ?? 'none'] ?? 'needsAction',
    })),
    organizer: e.organizer?.emailAddress.address ?? null,
    recurrence: e.recurrence ? fromGraphRecurrence(e.recurrence as GraphRecurrence) : null,
    recurringEventId: occurrence ? (e.seriesMasterId ?? null) : null,
    // An all-day occurrence is named by its day, as its start is.
    originalStart:
      originalStart && allDay ? allDayDate({ dateTime: originalStart, timeZone: 'UTC' }, timeZone) : originalStart,
    conference: joinUrl ? { product: 'teams', joinUrl } : null,
    // Graph's six values as two: only free and workingElsewhere leave the time open (busy is the default).
    showAs: e.showAs === 'free' || e.showAs === 'workingElsewhere' ? 'free' : 'busy',
    cancelled: e.isCancelled === true,
  };
}

/** Graph's `originalStart` is an ISO instant, with or without its `Z`; null when absent or unreadable. */
function graphInstant(value: string | null | undefined): string | null {
  if (!value) return null;
  const ms = Date.parse(/(Z|[+-]\d\d:\d\d)$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export function toGraph(d: ProviderDraft): Record<string, unknown> {
  const tz = d.timeZone ?? 'UTC';
  const body: Record<string, unknown> = {};
  if (d.title !== undefined) body.subject = d.title;
  if (d.description !== undefined) body.body = { contentType: 'text', content: d.description ?? '' };
  if (d.location !== undefined) body.location = { displayName: d.location ?? '' };
  const when = (iso: string) =>
    d.allDay
      ? { dateTime: `${iso.slice(0, 10)}T00:00:00`, timeZone: tz }
      : { dateTime: localDateTime(iso, tz), timeZone: tz };
  if (d.start !== undefined) body.start = when(d.start);
  if (d.end !== undefined) body.end = when(d.end);
  if (d.allDay !== undefined) body.isAllDay = d.allDay;
  if (d.attendees !== undefined) {
    body.attendees = d.attendees.map((a) => ({
      type: 'required',
      emailAddress: { address: a.email, ...(a.name ? { name: a.name } : {}) },
    }));
  }
  if (d.recurrence !== undefined) {
    if (d.recurrence === null || d.recurrence.length === 0) body.recurrence = null;
    else {
      if (!d.start) throw new ProviderError('microsoft', 'invalid_draft', 'A new repeat rule needs the start time too');
      try {
        body.recurrence = toGraphRecurrence(d.recurrence, d.start, tz);
      } catch (err) {
        if (err instanceof UnsupportedRecurrence) throw new ProviderError('microsoft', 'invalid_draft', err.message);
        throw err;
      }
    }
  }
  if (d.showAs !== undefined) body.showAs = d.showAs;
  if (d.nativeConference === true) {
    body.isOnlineMeeting = true;
    body.onlineMeetingProvider = 'teamsForBusiness';
  } else if (d.nativeConference === false) {
    body.isOnlineMeeting = false;
  }
  return body;
}

const calendars = z.object({
  value: z.array(
    z.object({
      id: z.string(),
      name: z.string().optional(),
      isDefaultCalendar: z.boolean().optional(),
      hexColor: z.string().nullish(),
    }),
  ),
});
const eventPage = z.object({ value: z.array(z.unknown()).default([]), '@odata.nextLink': z.string().optional() });

/** Graph returns an event's `transactionId` when the insert that made it set one. */
const transactionOf = z.object({ transactionId: z.string().nullish() });

const UTC_PREFERENCE = { prefer: 'outlook.timezone="UTC"' };
const MAX_PAGES = 20;

export const readGraphEvent = (raw: unknown) => {
  const parsed = graphEvent.safeParse(raw);
  return parsed.success ? fromGraph(parsed.data) : undefined;
};

export const microsoftCalendar: CalendarProvider = {
  name: 'microsoft',
  meetingProduct: 'teams',

  apiBaseUrl: (base) => (base.includes('/_emulators/') ? `${base}/v1.0` : 'https://graph.microsoft.com/v1.0'),

  oauth(base, credentials, timeoutMs) {
    const emulated = base.includes('/_emulators/');
    const login = emulated ? `${base}/common/oauth2/v2.0` : 'https://login.microsoftonline.com/common/oauth2/v2.0';
    return {
      name: 'microsoft',
      authorizeUrl: `${login}/authorize`,
      tokenUrl: `${login}/token`,
      userInfoUrl: `${this.apiBaseUrl(base)}/me`,
      clientId: credentials.clientId,
      clientSecret: credentials.clientSecret,
      scopes: ['openid', 'email', 'offline_access', 'User.Read', 'Calendars.ReadWrite'],
      timeoutMs,
    };
  },

  async listCalendars(session) {
    const { body } = await providerCall(
      'microsoft',
      session,
      { method: 'GET', path: '/me/calendars', what: 'calendar' },
      graphErrors,
    );
    return calendars.parse(body).value.map((c) => ({
      providerCalendarId: c.id,
      name: c.name ?? 'Calendar',
      primary: c.isDefaultCalendar === true,
      color: c.hexColor || null,
    }));
  },

  async listEvents(session, calendarId, window) {
    const out: ProviderEvent[] = [];
    let next: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const { body } = await providerCall(
        'microsoft',
        session,
        next
          ? { method: 'GET', url: next, headers: UTC_PREFERENCE, what: 'calendar' }
          : {
              method: 'GET',
              path: `/me/calendars/${encodeURIComponent(calendarId)}/calendarView`,
              query: {
                startDateTime: window.timeMin,
                endDateTime: window.timeMax,
                $top: 1000,
                $select: GRAPH_LIST_SELECT,
              },
              headers: UTC_PREFERENCE,
              what: 'calendar',
            },
        graphErrors,
      );
      const list = eventPage.parse(body);
      for (const raw of list.value) {
        const event = readGraphEvent(raw);
        if (event && !event.cancelled) out.push(event);
      }
      next = list['@odata.nextLink'];
      // Follow only links on the provider's own origin.
      if (!next || new URL(next).origin !== new URL(session.baseUrl).origin) break;
    }
    return out;
  },

  async getEvent(session, _calendarId, eventId) {
    const { body } = await providerCall(
      'microsoft',
      session,
      { method: 'GET', path: `/me/events/${encodeURIComponent(eventId)}`, headers: UTC_PREFERENCE },
      graphErrors,
    );
    return fromGraph(graphEvent.parse(body));
  },

  async insertEvent(session, calendarId, draft) {
    const { body } = await providerCall(
      'microsoft',
      session,
      {
        method: 'POST',
        path: `/me/calendars/${encodeURIComponent(calendarId)}/events`,
        headers: UTC_PREFERENCE,
        // A repeat with the same transactionId (a retry after a timeout) answers the event already made.
        json: { ...toGraph(draft), ...(draft.clientKey ? { transactionId: draft.clientKey } : {}) },
        what: 'calendar',
      },
      graphErrors,
    );
    return fromGraph(graphEvent.parse(body));
  },

  async insertedWith(session, _calendarId, eventId, clientKey) {
    try {
      const { body } = await providerCall(
        'microsoft',
        session,
        {
          method: 'GET',
          path: `/me/events/${encodeURIComponent(eventId)}`,
          query: { $select: 'transactionId' },
        },
        graphErrors,
      );
      return transactionOf.safeParse(body).data?.transactionId === clientKey;
    } catch (err) {
      if (err instanceof ProviderError && (err.reason === 'event_not_found' || err.reason === 'gone')) return false;
      throw err;
    }
  },

  async patchEvent(session, _calendarId, eventId, draft) {
    const { body } = await providerCall(
      'microsoft',
      session,
      {
        method: 'PATCH',
        path: `/me/events/${encodeURIComponent(eventId)}`,
        headers: UTC_PREFERENCE,
        json: toGraph(draft),
      },
      graphErrors,
    );
    return fromGraph(graphEvent.parse(body));
  },

  async deleteEvent(session, _calendarId, eventId) {
    try {
      await providerCall(
        'microsoft',
        session,
        { method: 'DELETE', path: `/me/events/${encodeURIComponent(eventId)}` },
        graphErrors,
      );
    } catch (err) {
      if (isGone(err)) return;
      throw err;
    }
  },
};
