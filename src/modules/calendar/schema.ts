import { z } from 'zod';
import { instantSchema, daySchema as isoDay } from '../../platform/http-schemas.js';

const PROVIDERS = ['google', 'microsoft'] as const;
const rfc3339 = instantSchema;
const text = (max: number) => z.string().max(max);
/** An id that names something: never the empty string (that would be stored as a reference to nothing). */
const ref = (max: number) => z.string().min(1, 'Give an id, or null for none').max(max);

export const connectBody = z.object({
  provider: z.enum(PROVIDERS),
  connectionId: z
    .string()
    .max(100)
    .optional()
    .describe('Reconnecting this connection: its account is asked for by name, so the same connection is repaired'),
  loginHint: z
    .string()
    .trim()
    .email()
    .max(320)
    .optional()
    .describe(
      "The account to suggest at the provider's sign-in (OAuth `login_hint`), e.g. the person's work address; the web " +
        "app sends the signed-in user's. Ignored when reconnecting (the connection's own account is asked for)",
    ),
});
export const connectionSchema = z.object({
  id: z.string(),
  provider: z.string(),
  accountEmail: z.string(),
  status: z.enum(['active', 'reauth_required']),
  createdAt: z.string(),
  userId: z.string(),
});
export const calendarSchema = z.object({
  id: z.string(),
  provider: z.string(),
  name: z.string(),
  accountEmail: z.string(),
  primary: z.boolean(),
  connectionId: z.string(),
  hostUserId: z.string(),
  color: z.string().nullable(),
});
export type CalendarInfo = z.infer<typeof calendarSchema>;

export const callbackQuery = z.object({
  code: z.string().max(4000).optional(),
  state: z.string().max(8000).optional(),
  error: z.string().max(200).optional(),
});

const SHOW_AS = ['busy', 'free'] as const;

export const attendeeSchema = z.object({
  email: z.string(),
  name: z.string().nullable(),
  responseStatus: z.enum(['needsAction', 'accepted', 'declined', 'tentative']),
});

export const eventSchema = z.object({
  id: z.string(),
  provider: z.string(),
  calendar: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  start: z.string(),
  end: z.string(),
  timeZone: z.string(),
  allDay: z.boolean(),
  location: z.string().nullable(),
  attendees: z.array(attendeeSchema),
  organizer: z.string().nullable(),
  recurrence: z.array(z.string()).nullable(),
  recurringEventId: z.string().nullable(),
  originalStart: z
    .string()
    .nullable()
    .describe('For one occurrence of a series: when it was due before any change (UTC; the RECURRENCE-ID)'),
  conference: z.object({ product: z.enum(['meet', 'teams', 'zoom']), joinUrl: z.string() }).nullable(),
  telehealth: z
    .object({ roomId: z.string(), joinUrl: z.string() })
    .nullable()
    .describe(
      "Atrium's video room for the event once it can be joined (warm or live); see telehealthRoom for its state",
    ),
  telehealthRoom: z
    .object({
      roomId: z.string(),
      status: z.enum(['pending', 'warm', 'live', 'failed']),
      failureReason: z.string().nullable().describe("Why a failed room could not be made (the provider's last error)"),
    })
    .nullable()
    .describe(
      "The state of the event's video room (a series' occurrences share the series'): pending (being made at the " +
        'video provider, retried through outages), warm or live (joinable: telehealth has the link), failed (could ' +
        'not be made while the visit needed it). Null when the event has none or its room has ended. In lists and ' +
        "in a create's answer (pending then); a changed event answers null",
    ),
  showAs: z
    .enum(SHOW_AS)
    .describe(
      "Whether the event blocks its calendar's time, as the provider holds it (Google `transparency`: opaque is " +
        'busy, transparent free, an out-of-office event busy; Graph `showAs`: free and workingElsewhere are free, ' +
        'tentative, busy, oof and unknown busy). A busy event, all-day ones included, is a scheduling conflict for ' +
        'its host; a free one never is',
    ),
  patientId: z.string().nullable(),
  hostUserId: z.string().nullable(),
  status: z.enum(['confirmed', 'cancelled', 'completed']),
  workspaceId: z.string(),
});
export type CalendarEvent = z.infer<typeof eventSchema>;

export const CONFERENCES = ['auto', 'meet', 'teams', 'zoom'] as const;

const draftFields = {
  title: text(500).trim().min(1),
  start: rfc3339,
  end: rfc3339,
  timeZone: text(64).optional(),
  allDay: z.boolean().optional(),
  description: text(8000).nullable().optional(),
  location: text(1000).nullable().optional(),
  attendees: z
    .array(z.object({ email: z.email().max(320), name: text(200).nullable().optional() }))
    .max(100)
    .optional(),
  recurrence: z.array(text(1000)).max(20).nullable().optional(),
  conference: z.enum(CONFERENCES).nullable().optional(),
  preferredConference: z.literal('zoom').optional(),
  patientId: text(100).nullable().optional(),
  hostUserId: text(100).nullable().optional(),
  status: z.enum(['confirmed', 'cancelled', 'completed']).optional(),
  showAs: z
    .enum(SHOW_AS)
    .optional()
    .describe(
      "Written to the provider's free/busy flag (Google `transparency`, Graph `showAs`). A new event without it: " +
        'busy when timed, free when all-day (as Google Calendar and Outlook make them); a change without it keeps it',
    ),
};

export const draftSchema = z.object(draftFields);
export type Draft = z.infer<typeof draftSchema>;
export const partialDraftSchema = z.object(draftFields).partial();
export type PartialDraft = z.infer<typeof partialDraftSchema>;

export const createEventBody = z.object({
  provider: z.enum(PROVIDERS).optional(),
  calendar: text(100).min(1),
  draft: draftSchema,
});
export const patchEventBody = z.object({ event: text(2000).min(1).optional(), draft: partialDraftSchema });
export const eventQuery = z.object({ event: text(2000).min(1).optional() });

export const listEventsQuery = z.object({
  timeMin: rfc3339,
  timeMax: rfc3339,
  provider: z.enum(PROVIDERS).optional(),
  calendar: text(100).optional(),
  scope: z.enum(['workspace', 'organization']).optional(),
  patientId: text(100)
    .min(1)
    .optional()
    .describe(
      "Only this patient's appointments (events naming them, and the occurrences of a series that does): " +
        "the patient record's schedule. A patient of another workspace is 404; each read writes a `phi_access` audit row",
    ),
});
export type ListEventsQuery = z.infer<typeof listEventsQuery>;

export const warningSchema = z.object({ provider: z.string(), calendar: z.string(), code: z.string() });
export type Warning = z.infer<typeof warningSchema>;

export const writeResult = z.object({ ok: z.literal(true), eventId: z.string(), event: eventSchema });

const flags = z.object({
  meet: z.boolean(),
  teams: z.boolean(),
  zoom: z.boolean(),
  auto: z.boolean(),
  recurring: z.boolean(),
  patientAware: z.boolean(),
  hqView: z.boolean(),
  bothProviders: z.boolean(),
});
export const capabilitiesSchema = z.object({
  tier: z.string(),
  allowed: flags,
  matrix: z.object({ free: flags, standard: flags, advanced: flags, enterprise: flags }),
});

export const sessionsBody = z.object({
  patientId: text(100).min(1),
  authorizationId: text(100).min(1),
  calendar: text(100).min(1),
  firstStart: rfc3339,
  timeZone: text(64).min(1),
  frequency: z.enum(['weekly', 'daily']).optional(),
  unitsPerSession: z.number().int().min(1).max(100).optional(),
  conference: z.enum(CONFERENCES).nullable().optional(),
});
export const sessionsResult = z.object({
  eventId: z.string(),
  sessions: z.array(z.object({ eventId: z.string(), start: z.string(), end: z.string() })),
  unitsBooked: z.number().int(),
  unitsRemaining: z.number().int(),
});
export const sessionUsageQuery = z.object({ patientId: text(100).min(1) });
export const sessionUsageSchema = z.object({
  items: z.array(
    z.object({
      authorizationId: z.string(),
      service: z.string(),
      units: z.number().int(),
      unitsBooked: z.number().int(),
      unitsRemaining: z.number().int(),
      validTo: z.string(),
      sessions: z.array(z.object({ start: z.string(), end: z.string(), units: z.number().int() })),
    }),
  ),

  nextCursor: z.null(),
});
export const matchQuery = z.object({ patientId: text(100).min(1), start: rfc3339, end: rfc3339 });
export const matchSchema = z.object({
  items: z.array(
    z.object({
      userId: z.string(),
      name: z.string(),
      calendarId: z.string().nullable(),
      free: z.boolean(),
      preferred: z.boolean(),
      reasons: z.array(z.string()),
    }),
  ),

  nextCursor: z.null(),
});

export const taskSchema = z.object({
  id: z.string(),
  title: z.string(),
  eventId: z.string().nullable(),
  dueAt: z.string().nullable(),
  assigneeUserId: z.string().nullable(),
  done: z.boolean(),
  createdAt: z.string(),
});
export const createTaskBody = z.object({
  title: text(500).trim().min(1),
  eventId: ref(2000).nullable().optional(),
  dueAt: rfc3339.nullable().optional(),
  assigneeUserId: ref(100).nullable().optional(),
});
export const updateTaskBody = z.object({
  title: text(500).trim().min(1).optional(),
  dueAt: rfc3339.nullable().optional(),
  done: z.boolean().optional(),
  assigneeUserId: ref(100).nullable().optional(),
});
export const listTasksQuery = z.object({
  eventId: text(2000).optional(),
  assignee: text(100).optional(),
  done: z.enum(['true', 'false']).optional(),
});
/**
 * A day the calendar can show: years 1000–9998, so the day's bounds in any time zone (a day before or after
 * in UTC) stay within what dates and the database hold.
 */
const shownDay = isoDay.refine((d) => d >= '1000-01-01' && d <= '9998-12-31', {
  error: 'Use a year from 1000 to 9998',
});
export const dayQuery = z.object({ date: shownDay, timeZone: text(64).optional() });
export const daySchema = z.object({
  date: z.string(),
  timeZone: z.string(),
  events: z.array(eventSchema),
  tasks: z.array(taskSchema),
  warnings: z.array(warningSchema),
});
