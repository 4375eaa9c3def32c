import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { timestamptz as ts } from '../../platform/db/columns.js';

/**
 * A provider calendar reachable through one of the workspace's connections (platform/oauth). `id`
 * is Atrium's opaque `cal_…`, stable for the account's calendar across disconnects and reconnects;
 * the provider's own id never leaves the module. Refreshed from the provider when the connection is
 * made and whenever calendars are listed.
 */
export const calendarCalendars = pgTable(
  'calendar_calendars',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    connectionId: text('connection_id').notNull(),
    provider: text('provider').notNull(),
    providerCalendarId: text('provider_calendar_id').notNull(),
    name: text('name').notNull(),
    accountEmail: text('account_email').notNull(),
    primary: boolean('primary').notNull().default(false),
    color: text('color'),
    /** The member whose calendar it is (who connected the account). */
    hostUserId: text('host_user_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    /**
     * Set when its connection was disconnected (or the provider stopped listing it): out of every
     * list, unknown to reads and writes. Cleared when the account is connected again (migration 0033).
     */
    disconnectedAt: ts('disconnected_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    // One id per (workspace, provider, account, provider calendar), whichever connection reaches it.
    uniqueIndex('calendar_calendars_account_idx').on(t.workspaceId, t.provider, t.accountEmail, t.providerCalendarId),
    // By connection (kept from before 0033: the previous release stores calendars with ON CONFLICT on it).
    uniqueIndex('calendar_calendars_provider_idx').on(t.workspaceId, t.connectionId, t.providerCalendarId),
  ],
);

/**
 * What Atrium knows about a provider event beyond what the provider keeps: the patient (an event
 * with one is an appointment), the host, the completed status, the Zoom meeting. Keyed by the
 * provider's event id (a series id covers its instances unless an instance has its own row).
 */
export const calendarAppointments = pgTable(
  'calendar_appointments',
  {
    workspaceId: text('workspace_id').notNull(),
    calendarId: text('calendar_id').notNull(),
    providerEventId: text('provider_event_id').notNull(),
    patientId: text('patient_id'),
    hostUserId: text('host_user_id'),
    status: text('status', { enum: ['confirmed', 'cancelled', 'completed'] })
      .notNull()
      .default('confirmed'),
    zoomMeetingId: text('zoom_meeting_id'),
    zoomJoinUrl: text('zoom_join_url'),
    startAt: ts('start_at'),
    endAt: ts('end_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.calendarId, t.providerEventId] }),
    index('calendar_appointments_patient_idx').on(t.workspaceId, t.patientId, t.startAt),
  ],
);

/**
 * The Zoom meeting made for a keyed create, recorded before the calendar write (migration 0038): a retry of the
 * same create meets in it. Atrium adopts no meeting id from an event's text.
 */
export const calendarZoomAttempts = pgTable(
  'calendar_zoom_attempts',
  {
    workspaceId: text('workspace_id').notNull(),
    clientKey: text('client_key').notNull(),
    meetingId: text('meeting_id').notNull(),
    joinUrl: text('join_url').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.clientKey], name: 'calendar_zoom_attempts_pk' })],
);

/**
 * Sessions booked from a patient's authorized units: one row per session of the series, so units
 * come back one session at a time when one is cancelled. Booking takes a per-authorization lock
 * and counts `booked` units and `reserved` ones within their lease (sessions.ts), so concurrent
 * requests cannot overbook and a request that died does not hold units for good.
 */
export const calendarSessions = pgTable(
  'calendar_sessions',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    authorizationId: text('authorization_id').notNull(),
    patientId: text('patient_id').notNull(),
    calendarId: text('calendar_id').notNull(),
    /** The provider's id of the series; `pending:<key or uuid>` while the booking is only reserved. */
    seriesEventId: text('series_event_id'),
    startAt: ts('start_at').notNull(),
    endAt: ts('end_at').notNull(),
    units: integer('units').notNull(),
    status: text('status', { enum: ['reserved', 'booked', 'cancelled'] }).notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('calendar_sessions_authorization_idx').on(t.workspaceId, t.authorizationId),
    index('calendar_sessions_series_idx').on(t.workspaceId, t.calendarId, t.seriesEventId),
  ],
);

/** Tasks (contract §5.3): to-dos of the workspace, optionally for an event, assignable, due or not. */
export const calendarTasks = pgTable(
  'calendar_tasks',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    title: text('title').notNull(),
    eventId: text('event_id'),
    dueAt: ts('due_at'),
    assigneeUserId: text('assignee_user_id'),
    done: boolean('done').notNull().default(false),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('calendar_tasks_event_idx').on(t.workspaceId, t.eventId),
    index('calendar_tasks_due_idx').on(t.workspaceId, t.dueAt),
  ],
);

export type InvitationAnswers = Record<string, 'accepted' | 'declined' | 'tentative'>;

/** The fields of an invitation that one occurrence may hold apart from its series. */
export interface InvitedFields {
  title: string;
  description: string | null;
  location: string | null;
  /** Guests' addresses, lower-cased. */
  guests: string[];
}

export interface InvitedSeries extends InvitedFields {
  timeZone: string;
  allDay: boolean;
  /** The series' first start and recurrence lines as invited (absent on invitations sent before 2026-11-26). */
  start?: string;
  recurrence?: string[];
}

export interface InvitedOccurrence {
  cancelled?: boolean;
  /** Set once the occurrence was changed on its own: its times, and the fields it keeps apart from the series. */
  start?: string;
  end?: string;
  own?: Partial<InvitedFields>;
  /** Guests' REPLYs naming this occurrence (RECURRENCE-ID); over the series' answers for this date. */
  replies?: InvitationAnswers;
}

/**
 * iMIP invitations sent for an event (RFC 6047): the stable UID, the SEQUENCE of the last message,
 * and who was invited (so a change tells removed guests, and a REPLY is matched by UID + address).
 * For a series, also what its occurrences hold apart from the rule (cancelled, moved or changed),
 * so a REQUEST for the whole series describes it as it stands (EXDATEs and override VEVENTs).
 */
export const calendarInvitations = pgTable(
  'calendar_invitations',
  {
    workspaceId: text('workspace_id').notNull(),
    uid: text('uid').notNull(),
    eventId: text('event_id').notNull(),
    sequence: integer('sequence').notNull().default(0),
    attendees: text('attendees').array().notNull(),
    cancelled: boolean('cancelled').notNull().default(false),
    /** Guests' iMIP REPLYs by address (to the whole series): shown over the provider's own attendee status. */
    replies: jsonb('replies').$type<InvitationAnswers>().notNull().default({}),
    /** What guests were last told about the series itself; an occurrence's own changes are told apart from it. */
    series: jsonb('series').$type<InvitedSeries>(),
    /** A series' occurrences that differ from its rule or were answered on their own, by original start (UTC ISO). */
    occurrences: jsonb('occurrences').$type<Record<string, InvitedOccurrence>>().notNull().default({}),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.uid] }),
    index('calendar_invitations_event_idx').on(t.workspaceId, t.eventId),
  ],
);
