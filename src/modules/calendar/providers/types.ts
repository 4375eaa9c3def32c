// The one interface every calendar provider adapter implements (architecture convention 4), and
// the normalised shapes they return. Adapters speak their provider's wire protocol; nothing
// outside providers/ knows a provider's JSON.
import type { OAuthProvider } from '../../../platform/oauth/index.js';

export type CalendarProviderName = 'google' | 'microsoft';
export type ConferenceProduct = 'meet' | 'teams' | 'zoom';
export type ResponseStatus = 'needsAction' | 'accepted' | 'declined' | 'tentative';
/** Whether the event blocks its calendar's time (Google `transparency`, Graph `showAs`, read as two values). */
export type ShowAs = 'busy' | 'free';

export interface ProviderCalendar {
  providerCalendarId: string;
  name: string;
  primary: boolean;
  color: string | null;
}

export interface ProviderAttendee {
  email: string;
  name: string | null;
  responseStatus: ResponseStatus;
}

/** An event or one instance of a series, as the provider holds it. Times are RFC 3339 UTC. */
export interface ProviderEvent {
  providerEventId: string;
  title: string;
  description: string | null;
  start: string;
  end: string;
  timeZone: string;
  allDay: boolean;
  location: string | null;
  attendees: ProviderAttendee[];
  organizer: string | null;
  recurrence: string[] | null;
  /** The series' provider id when this is an instance. */
  recurringEventId: string | null;
  /** For an instance: its start in the series before any change (iCalendar's RECURRENCE-ID), UTC. */
  originalStart: string | null;
  conference: { product: ConferenceProduct; joinUrl: string } | null;
  /** The provider's own free/busy flag (its default when the event has none: busy). */
  showAs: ShowAs;
  cancelled: boolean;
}

/** What Atrium writes: a full draft on insert, only the members present on patch. */
export interface ProviderDraft {
  title?: string;
  start?: string;
  end?: string;
  timeZone?: string;
  allDay?: boolean;
  description?: string | null;
  location?: string | null;
  attendees?: { email: string; name?: string | null }[];
  recurrence?: string[] | null;
  /** Written to the provider's free/busy flag (Google `transparency`, Graph `showAs`). */
  showAs?: ShowAs;
  /** Ask the provider for its own meeting (Meet on Google, Teams on Microsoft). */
  nativeConference?: boolean;
  /**
   * Inserts only: a stable key of this create (lowercase hex, 64 characters). The provider is asked to
   * make the event once however often the insert is sent (Google: the event's `id`; Graph:
   * `transactionId`); a repeat answers the event the first insert made.
   */
  clientKey?: string;
}

/** A call to the provider with the connection's token; `authorized` retries once on 401 after a refresh. */
export interface ProviderSession {
  baseUrl: string;
  timeoutMs: number;
  /** Splits the breaker per connection: one failing account does not stop the others. */
  connectionId: string;
  requestId?: string;
  token(): Promise<string>;
  refreshedToken(): Promise<string>;
}

export interface TimeWindow {
  timeMin: string;
  timeMax: string;
}

export interface CalendarProvider {
  readonly name: CalendarProviderName;
  /** The meeting product it hosts natively. */
  readonly meetingProduct: ConferenceProduct;
  /** Where its API lives: under the emulator's base, or the real service when `base` is not an emulator. */
  apiBaseUrl(base: string): string;
  /** Its OAuth 2.0 endpoints and our client, for platform/oauth. */
  oauth(baseUrl: string, credentials: { clientId: string; clientSecret: string }, timeoutMs: number): OAuthProvider;
  listCalendars(session: ProviderSession): Promise<ProviderCalendar[]>;
  /** Events overlapping the window, recurring series expanded into instances, cancelled ones left out. */
  listEvents(session: ProviderSession, calendarId: string, window: TimeWindow): Promise<ProviderEvent[]>;
  insertEvent(session: ProviderSession, calendarId: string, draft: ProviderDraft): Promise<ProviderEvent>;
  /**
   * Whether the provider made this event (a single event or a series, by its own id) for an insert carrying
   * `clientKey` (Google: it is the event's id; Graph: its `transactionId`). A missing event was not.
   */
  insertedWith(session: ProviderSession, calendarId: string, eventId: string, clientKey: string): Promise<boolean>;
  getEvent(session: ProviderSession, calendarId: string, eventId: string): Promise<ProviderEvent>;
  /** An instance id changes that occurrence only; a series id the whole series. */
  patchEvent(
    session: ProviderSession,
    calendarId: string,
    eventId: string,
    draft: ProviderDraft,
  ): Promise<ProviderEvent>;
  /** A 410 Gone (already deleted) is success. An instance id cancels that occurrence only. */
  deleteEvent(session: ProviderSession, calendarId: string, eventId: string): Promise<void>;
}

/** Zoom: meetings made with the platform's own app (server-to-server OAuth), not a user connection. */
export interface MeetingProvider {
  readonly product: ConferenceProduct;
  createMeeting(
    input: { topic: string; start: string; durationMinutes: number; timeZone: string; agenda?: string },
    requestId?: string,
  ): Promise<{ meetingId: string; joinUrl: string }>;
  updateMeeting(meetingId: string, input: { topic?: string; start?: string; durationMinutes?: number }): Promise<void>;
  deleteMeeting(meetingId: string): Promise<void>;
}
