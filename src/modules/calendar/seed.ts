// Demo calendars: Dr. Lee's Google calendar and the front desk's Microsoft calendar, connected as
// if each had clicked Connect, with a realistic week of appointments (some recurring, some with
// Meet, Teams or Zoom), and Harbor Therapy's Google calendar (Casey Kim's), which Riverside's All
// locations shows beside its own. The seed runs before the server listens, so it talks to the emulators
// through app.inject with tokens the emulators mint, in each provider's own wire format.
import type { FastifyInstance } from 'fastify';
import rrulePkg from 'rrule';
import { mintEmulatorTokens } from '../../emulators/calendar/index.js';
import { withTenant } from '../../platform/db/tenant.js';
import { newId } from '../../platform/ids.js';
import type { SeedState } from '../../platform/module.js';
import { saveConnection } from '../../platform/oauth/index.js';
import { fromFloating, toFloating } from '../../platform/zoned-time.js';
import { demoAdminContext, demoTenancy } from '../identity/index.js';
import { listAuthorizations, listPatients } from '../patients/index.js';
import { requestRoom } from '../telehealth/index.js';
import { emitAppointment, saveAppointment } from './appointments.js';
import { storeCalendars, storedCalendars } from './connections.js';
import { encodeEventId } from './ids.js';
import { readGoogleEvent, toGoogle } from './providers/google.js';
import { oauthDeps, resolveProvider } from './providers/index.js';
import { readGraphEvent, toGraph } from './providers/microsoft.js';
import type { ProviderDraft, ProviderEvent } from './providers/types.js';
import { localDateTime } from './providers/zoned.js';
import { calendarSessions, calendarTasks } from './tables.js';

const { RRule } = rrulePkg;
const ZONE = 'America/New_York';

interface DemoEvent {
  day: number;
  at: string;
  minutes: number;
  title: string;
  patient?: string;
  recurrence?: string[];
  conference?: 'native' | 'zoom';
  /** Booked from the patient's authorization: one unit per occurrence. */
  sessions?: boolean;
  /** Tasks for this visit (the day view's sidebar). */
  tasks?: string[];
  location?: string;
  description?: string;
  /** An all-day event of this many days from `day` (`at` and `minutes` unused). */
  allDayDays?: number;
  /** Free/busy as the provider shows it; by default timed events are busy and all-day ones free (notices). */
  showAs?: 'busy' | 'free';
}

const GOOGLE_WEEK: DemoEvent[] = [
  { day: 0, at: '08:30', minutes: 15, title: 'Morning huddle', recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR'] },
  {
    day: 0,
    at: '09:00',
    minutes: 45,
    title: 'Physical therapy: Eleanor Vance',
    patient: 'RC-1001',
    recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO,TH;COUNT=8'],
    sessions: true,
    location: 'Room 2',
  },
  {
    day: 1,
    at: '10:00',
    minutes: 30,
    title: 'Follow-up: Marcus Okafor',
    patient: 'RC-1002',
    conference: 'native',
    tasks: ['Send the telehealth link by text'],
  },
  {
    day: 2,
    at: '14:00',
    minutes: 30,
    title: 'Telehealth intake: Priya Natarajan',
    patient: 'RC-1003',
    conference: 'native',
  },
  {
    day: 4,
    at: '11:00',
    minutes: 45,
    title: 'Case review',
    description: 'Discharge plans for the week',
    tasks: ['Bring discharge summaries'],
  },
  // Away for the day: busy, so no visit can be booked with Dr. Lee then (the EHR notice below is free).
  {
    day: 4,
    at: '00:00',
    minutes: 0,
    allDayDays: 1,
    title: 'Dr. Lee at the CME conference (no visits)',
    showAs: 'busy',
  },
];

const MICROSOFT_WEEK: DemoEvent[] = [
  {
    day: 0,
    at: '12:00',
    minutes: 60,
    title: 'Staff meeting',
    recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO'],
    conference: 'native',
  },
  { day: 1, at: '15:00', minutes: 30, title: 'Billing review with Aetna', conference: 'native' },
  { day: 2, at: '16:00', minutes: 60, title: 'Insurance verification block', location: 'Front desk' },
  { day: 2, at: '00:00', minutes: 0, allDayDays: 2, title: 'EHR upgrade: paper forms at the front desk' },
  {
    day: 3,
    at: '13:30',
    minutes: 30,
    title: 'New patient call: Marcus Okafor',
    patient: 'RC-1004',
    conference: 'zoom',
  },
];

/** Harbor Therapy's week (Casey Kim's Google calendar): what Riverside's All locations shows beside its own. */
const HARBOR_WEEK: DemoEvent[] = [
  { day: 0, at: '08:00', minutes: 15, title: 'Therapists’ check-in', recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR'] },
  {
    day: 1,
    at: '09:30',
    minutes: 50,
    title: 'Occupational therapy: Tomas Lindqvist',
    patient: 'HT-2001',
    recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=6'],
    location: 'Therapy room B',
  },
  { day: 2, at: '13:00', minutes: 60, title: 'Hand therapy group', location: 'Gym' },
  { day: 3, at: '11:00', minutes: 30, title: 'Home exercise review (video)', conference: 'native' },
];

/** The starts of a demo series (its RRULE from `start`, in the clinic's zone). */
function occurrenceStarts(lines: string[], start: string): number[] {
  const rule = lines.find((l) => l.startsWith('RRULE:'));
  if (!rule) return [];
  return new RRule({ ...RRule.parseString(rule.slice(6)), dtstart: new Date(toFloating(Date.parse(start), ZONE)) })
    .all()
    .map((d) => fromFloating(d.getTime(), ZONE));
}

/** Monday 00:00 of this week in the clinic's zone, as a local date. */
function mondayOfThisWeek(): string {
  const today = localDateTime(new Date().toISOString(), ZONE).slice(0, 10);
  const d = new Date(`${today}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

/** The UTC instant of a local wall-clock time in ZONE (two passes settle the offset across DST). */
function zoned(date: string, time: string): string {
  const wanted = Date.parse(`${date}T${time}:00Z`);
  let guess = wanted;
  for (let i = 0; i < 2; i++) {
    const shown = Date.parse(`${localDateTime(new Date(guess).toISOString(), ZONE)}Z`);
    guess += wanted - shown;
  }
  return new Date(guess).toISOString();
}

function draftOf(e: DemoEvent, monday: string, zoomUrl?: string): ProviderDraft {
  const date = new Date(`${monday}T12:00:00Z`);
  date.setUTCDate(date.getUTCDate() + e.day);
  if (e.allDayDays) {
    // An all-day event is its dates (the API's form: each day at 00:00Z, the end the day after the last).
    const after = new Date(date);
    after.setUTCDate(after.getUTCDate() + e.allDayDays);
    const day = (d: Date) => `${d.toISOString().slice(0, 10)}T00:00:00.000Z`;
    return {
      title: e.title,
      start: day(date),
      end: day(after),
      timeZone: ZONE,
      allDay: true,
      description: null,
      showAs: e.showAs ?? 'free',
    };
  }
  const start = zoned(date.toISOString().slice(0, 10), e.at);
  return {
    title: e.title,
    start,
    end: new Date(Date.parse(start) + e.minutes * 60_000).toISOString(),
    timeZone: ZONE,
    allDay: false,
    description: zoomUrl ? `Join Zoom meeting: ${zoomUrl}` : (e.description ?? null),
    location: zoomUrl ?? e.location ?? null,
    recurrence: e.recurrence,
    showAs: e.showAs ?? 'busy',
    nativeConference: e.conference === 'native' ? true : undefined,
  };
}

export async function seedCalendar(app: FastifyInstance, state: SeedState): Promise<void> {
  const deps = app.atrium;
  if (!deps.config.emulators) return;
  const tenancy = demoTenancy(state);
  const clinic = tenancy.workspaces['Riverside Clinic'];
  const harbor = tenancy.workspaces['Harbor Therapy'];
  const monday = mondayOfThisWeek();
  const byMrn = new Map<string, string>();
  const authorizationOf = new Map<string, string>();
  for (const workspace of ['Riverside Clinic', 'Harbor Therapy'] as const) {
    const admin = demoAdminContext(app, state, workspace);
    for (const p of (await listPatients(deps, admin, { limit: 200 })).items) {
      if (!p.mrn) continue;
      byMrn.set(p.mrn, p.id);
      const [first] = await listAuthorizations(deps, admin, p.id);
      if (first) authorizationOf.set(p.id, first.id);
    }
  }

  const ownHost = new URL(deps.selfUrl()).host;
  const inject = async (method: 'GET' | 'POST', url: string, token: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url,
      // As if called at the server's own address (the Zoom emulator writes its join links from it).
      headers: { authorization: `Bearer ${token}`, prefer: 'outlook.timezone="UTC"', host: ownHost },
      payload: body as Record<string, unknown> | undefined,
    });
    if (res.statusCode >= 300) throw new Error(`demo calendar seed: ${method} ${url} answered ${res.statusCode}`);
    return res.json();
  };

  async function zoomMeeting(e: DemoEvent, draft: ProviderDraft): Promise<{ id: string; joinUrl: string }> {
    const basic = Buffer.from('atrium-local:atrium-local-secret').toString('base64');
    const token = await app.inject({
      method: 'POST',
      url: '/_emulators/zoom/oauth/token?grant_type=account_credentials&account_id=atrium-local',
      headers: { authorization: `Basic ${basic}` },
    });
    const meeting = await inject('POST', '/_emulators/zoom/v2/users/me/meetings', token.json().access_token, {
      topic: e.title,
      type: 2,
      start_time: draft.start,
      duration: e.minutes,
      timezone: ZONE,
    });
    return { id: String(meeting.id), joinUrl: meeting.join_url };
  }

  const accounts = [
    {
      workspace: 'Riverside Clinic' as const,
      provider: 'google' as const,
      email: 'dr.lee@riverside.example',
      userId: tenancy.userIds['dr.lee@riverside.example'],
      week: GOOGLE_WEEK,
    },
    {
      workspace: 'Riverside Clinic' as const,
      provider: 'microsoft' as const,
      email: 'frontdesk@riverside.example',
      userId: clinic.adminUserId,
      week: MICROSOFT_WEEK,
    },
    {
      workspace: 'Harbor Therapy' as const,
      provider: 'google' as const,
      email: 'casey@harbor.example',
      userId: tenancy.userIds['casey@harbor.example'] ?? harbor.adminUserId,
      week: HARBOR_WEEK,
    },
  ];
  for (const account of accounts) {
    const ctx = demoAdminContext(app, state, account.workspace);
    const resolved = resolveProvider(deps, account.provider);
    if (!resolved?.apiBase.includes('/_emulators/')) continue;
    const tokens = mintEmulatorTokens(account.provider, account.email);
    const user = { ...ctx, userId: account.userId };
    const { connectionId } = await saveConnection(oauthDeps(deps), user, account.provider, account.email, {
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      expiresInSec: tokens.expires_in,
    });
    const api = `/_emulators/${account.provider}${account.provider === 'google' ? '/calendar/v3' : '/v1.0'}`;
    const listed =
      account.provider === 'google'
        ? (await inject('GET', `${api}/users/me/calendarList`, tokens.access_token)).items.map(
            (c: { id: string; summary?: string; primary?: boolean; backgroundColor?: string }) => ({
              providerCalendarId: c.id,
              name: c.summary ?? 'Calendar',
              primary: c.primary === true,
              color: c.backgroundColor ?? null,
            }),
          )
        : (await inject('GET', `${api}/me/calendars`, tokens.access_token)).value.map(
            (c: { id: string; name?: string; isDefaultCalendar?: boolean; hexColor?: string }) => ({
              providerCalendarId: c.id,
              name: c.name ?? 'Calendar',
              primary: c.isDefaultCalendar === true,
              color: c.hexColor || null,
            }),
          );
    const connection = {
      id: connectionId,
      provider: account.provider,
      accountEmail: account.email,
      userId: account.userId,
    };
    await storeCalendars(deps, user, connection, listed);
    const calendar = (await storedCalendars(deps, ctx)).find((c) => c.connectionId === connectionId && c.primary);
    if (!calendar) continue;

    for (const e of account.week) {
      let draft = draftOf(e, monday);
      const zoom = e.conference === 'zoom' ? await zoomMeeting(e, draft) : undefined;
      if (zoom) draft = draftOf(e, monday, zoom.joinUrl);
      const path = `${api}${account.provider === 'google' ? `/calendars/${encodeURIComponent(calendar.providerCalendarId)}/events?conferenceDataVersion=1` : `/me/calendars/${encodeURIComponent(calendar.providerCalendarId)}/events`}`;
      const raw = await inject(
        'POST',
        path,
        tokens.access_token,
        account.provider === 'google' ? toGoogle(draft) : toGraph(draft),
      );
      const created: ProviderEvent | undefined =
        account.provider === 'google' ? readGoogleEvent(raw, ZONE) : readGraphEvent(raw);
      const patientId = e.patient ? byMrn.get(e.patient) : undefined;
      if (!created) continue;
      const eventId = encodeEventId(calendar.id, created.providerEventId);
      await withTenant(deps.db, ctx, async (tx) => {
        for (const title of e.tasks ?? []) {
          await tx.insert(calendarTasks).values({
            workspaceId: ctx.workspaceId,
            id: newId('tsk'),
            title,
            eventId,
            // Due when the visit ends, as the web app files a task for an event: one left undone after its
            // visit is carried to Today's list, overdue.
            dueAt: created.allDay ? null : new Date(created.end),
            assigneeUserId: account.userId,
            createdBy: ctx.userId,
          });
        }
        // Every visit with video gets its telehealth room, Zoom ones too (as a visit booked in the app
        // does); a repeating one's is standing, for every occurrence.
        if (e.conference) await requestRoom(tx, ctx.workspaceId, eventId, { standing: Boolean(e.recurrence?.length) });
        const authorization = patientId ? authorizationOf.get(patientId) : undefined;
        if (e.sessions && patientId && authorization) {
          const minutes = e.minutes;
          for (const start of occurrenceStarts(e.recurrence ?? [], created.start)) {
            await tx.insert(calendarSessions).values({
              workspaceId: ctx.workspaceId,
              id: newId('ses'),
              authorizationId: authorization,
              patientId,
              calendarId: calendar.id,
              seriesEventId: created.providerEventId,
              startAt: new Date(start),
              endAt: new Date(start + minutes * 60_000),
              units: 1,
              status: 'booked',
            });
          }
        }
      });
      if (!patientId && !zoom) continue;
      await withTenant(deps.db, ctx, async (tx) => {
        await saveAppointment(tx, {
          workspaceId: ctx.workspaceId,
          calendarId: calendar.id,
          providerEventId: created.providerEventId,
          patientId: patientId ?? null,
          hostUserId: account.userId,
          zoomMeetingId: zoom?.id ?? null,
          zoomJoinUrl: zoom?.joinUrl ?? null,
          startAt: new Date(created.start),
          endAt: new Date(created.end),
        });
        if (patientId) {
          await emitAppointment(tx, ctx.workspaceId, 'appointment.created', {
            eventId,
            calendarId: calendar.id,
            patientId,
            start: created.start,
            end: created.end,
            hostUserId: account.userId,
          });
        }
      });
    }
  }
}
