// Sessions from authorized units (contract §5.2): one recurring series as long as the units allow
// and never past the authorization's end. Units are reserved under a per-authorization lock before
// the provider is called (no transaction spans the call), so concurrent requests cannot overbook;
// a failed calendar write gives the reservation back, and one whose request died (a crash) is free
// again when its lease ends; cancelling a future session returns its units.
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, lt, ne, sql } from 'drizzle-orm';
import rrulePkg from 'rrule';
import type { RequestContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/client.js';
import { lockUntilCommit, withTenant } from '../../platform/db/tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { AppDeps } from '../../platform/types.js';
import { fromFloating, isTimeZone, toFloating } from '../../platform/zoned-time.js';
import { getPatient, listAuthorizations } from '../patients/index.js';
import { createEvent, createKeyOf, deleteEvent, invalidDraft, sessionCache, targets, windowOf } from './events.js';
import { decodeEventId } from './ids.js';
import { calendarSessions } from './tables.js';

const { RRule, Frequency } = rrulePkg;

export interface SessionsInput {
  patientId: string;
  authorizationId: string;
  calendar: string;
  firstStart: string;
  timeZone: string;
  frequency?: 'weekly' | 'daily';
  unitsPerSession?: number;
  conference?: 'auto' | 'meet' | 'teams' | 'zoom' | null;
}

/**
 * How long units stay reserved for the request that reserved them (from the reservation, or from a retry's taking
 * it over). No request runs this long (each provider call ends within the calendar timeout), so a reservation
 * older than this belongs to a request that died before booking it (the server was killed or restarted during its
 * provider call): its units count as free again, and the next reservation for the authorization deletes it. A retry
 * with the same Idempotency-Key takes its reservation over instead, and books the series the provider may hold.
 */
export const RESERVATION_LEASE_MS = 5 * 60_000;

/** A session that holds its units: booked, or reserved by a request that may still be running. */
const holdsUnits = () =>
  sql`(${calendarSessions.status} = 'booked' OR (${calendarSessions.status} = 'reserved'
       AND ${calendarSessions.createdAt} > now() - make_interval(secs => ${RESERVATION_LEASE_MS / 1000})))`;

/** Units held (booked, or reserved within the lease) per authorization: the patients module's `unitsUsed`. */
export async function unitsHeld(tx: Tx, workspaceId: string, authorizationIds: string[]): Promise<Map<string, number>> {
  const rows = await tx
    .select({
      id: calendarSessions.authorizationId,
      units: sql<number>`coalesce(sum(${calendarSessions.units}), 0)::int`,
    })
    .from(calendarSessions)
    .where(
      and(
        eq(calendarSessions.workspaceId, workspaceId),
        inArray(calendarSessions.authorizationId, authorizationIds),
        holdsUnits(),
      ),
    )
    .groupBy(calendarSessions.authorizationId);
  return new Map(rows.map((r) => [r.id, Number(r.units)]));
}

/** Session starts from `first`, every day or week in `timeZone` (wall clock kept across DST), up to `max`, none after `lastDay`. */
function sessionStarts(
  first: string,
  timeZone: string,
  frequency: 'weekly' | 'daily',
  max: number,
  lastDay: string,
): number[] {
  if (max <= 0) return [];
  const rule = new RRule({
    freq: frequency === 'daily' ? Frequency.DAILY : Frequency.WEEKLY,
    dtstart: new Date(toFloating(Date.parse(first), timeZone)),
    until: new Date(`${lastDay}T23:59:59Z`),
    count: max,
  });
  return rule.all().map((d) => fromFloating(d.getTime(), timeZone));
}

export async function bookSessions(deps: AppDeps, ctx: RequestContext, input: SessionsInput) {
  const unitsPerSession = input.unitsPerSession ?? 1;
  const frequency = input.frequency ?? 'weekly';
  if (!isTimeZone(input.timeZone)) throw invalidDraft(`Unknown time zone ${input.timeZone}`);
  const patient = await getPatient(deps, ctx, input.patientId);
  const authorization = (await listAuthorizations(deps, ctx, input.patientId)).find(
    (a) => a.id === input.authorizationId,
  );
  if (!authorization) throw notFound('Authorization');
  const firstDay = new Date(toFloating(Date.parse(input.firstStart), input.timeZone)).toISOString().slice(0, 10);
  if (firstDay > authorization.validTo) {
    throw new AppError('authorization_expired', 422, `The authorization ended on ${authorization.validTo}`);
  }
  if (firstDay < authorization.validFrom) throw invalidDraft(`The authorization starts on ${authorization.validFrom}`);
  const cal = (await targets(deps, ctx)).find((c) => c.id === input.calendar);
  if (!cal) throw new AppError('calendar_not_found', 404, 'Calendar not found');
  const minutes = unitsPerSession * authorization.unitMinutes;

  // Reserve under the authorization's lock: whoever comes second sees the first one's units. A keyed request's
  // reservation is named by the key its create gives the provider, so the same-key retry of a request killed during
  // its provider call finds it. A reservation is not the request's outcome (it is freed by its lease, or taken over
  // by that retry): it leaves the Idempotency-Key to the retry (platform/db/tenant.ts).
  const clientKey = createKeyOf(ctx, cal.id);
  const reservation = `pending:${clientKey ?? randomUUID()}`;
  const ofReservation = and(
    eq(calendarSessions.workspaceId, ctx.workspaceId),
    eq(calendarSessions.seriesEventId, reservation),
    eq(calendarSessions.status, 'reserved'),
  );
  const lock = (tx: Tx) => lockUntilCommit(tx, `${ctx.workspaceId}:${authorization.id}`);
  const sessionRows = (starts: number[], status: 'reserved' | 'booked', seriesEventId: string) =>
    starts.map((start) => ({
      workspaceId: ctx.workspaceId,
      id: newId('ses'),
      authorizationId: authorization.id,
      patientId: patient.id,
      calendarId: cal.id,
      seriesEventId,
      startAt: new Date(start),
      endAt: new Date(start + minutes * 60_000),
      units: unitsPerSession,
      status,
    }));
  const reserved = await withTenant(
    deps.db,
    ctx,
    async (tx) => {
      await lock(tx);
      // Reservations of requests that died (their lease is over) are deleted; an earlier attempt of this same keyed
      // request (its claim was stale, so it is not running) is taken over, lease renewed, with the sessions it had.
      await tx
        .delete(calendarSessions)
        .where(
          and(
            eq(calendarSessions.workspaceId, ctx.workspaceId),
            eq(calendarSessions.authorizationId, authorization.id),
            eq(calendarSessions.status, 'reserved'),
            ne(calendarSessions.seriesEventId, reservation),
            lt(calendarSessions.createdAt, sql`now() - make_interval(secs => ${RESERVATION_LEASE_MS / 1000})`),
          ),
        );
      const earlier = await tx
        .update(calendarSessions)
        .set({ createdAt: sql`now()` })
        .where(ofReservation)
        .returning({ startAt: calendarSessions.startAt, units: calendarSessions.units });
      const units = (await unitsHeld(tx, ctx.workspaceId, [authorization.id])).get(authorization.id) ?? 0;
      if (earlier.length > 0) {
        const ours = earlier.reduce((n, r) => n + r.units, 0);
        return {
          starts: earlier.map((r) => r.startAt.getTime()).sort((a, b) => a - b),
          remaining: authorization.units - (units - ours),
        };
      }
      const remaining = authorization.units - units;
      if (remaining < unitsPerSession) {
        throw new AppError('units_exhausted', 409, 'No authorized units are left for another session', {
          unitsRemaining: remaining,
        });
      }
      const starts = sessionStarts(
        input.firstStart,
        input.timeZone,
        frequency,
        Math.floor(remaining / unitsPerSession),
        authorization.validTo,
      );
      if (starts.length === 0)
        throw new AppError('authorization_expired', 422, `The authorization ended on ${authorization.validTo}`);
      await tx.insert(calendarSessions).values(sessionRows(starts, 'reserved', reservation));
      return { starts, remaining };
    },
    { outcome: false },
  );
  const release = () =>
    withTenant(deps.db, ctx, (tx) => tx.delete(calendarSessions).where(ofReservation), { outcome: false });

  /**
   * The reserved sessions become the series' booked ones in the transaction that saves its appointment: the
   * request's outcome, all or nothing. A request that outran its lease (its reservation was freed) books again only
   * units that are still free.
   */
  let outran: string | undefined;
  const book = async (tx: Tx, event: { id: string }) => {
    const seriesEventId = decodeEventId(event.id).providerEventId;
    await lock(tx);
    const booked = await tx
      .update(calendarSessions)
      .set({ seriesEventId, status: 'booked' })
      .where(ofReservation)
      .returning({ id: calendarSessions.id });
    if (booked.length > 0) return;
    const units = (await unitsHeld(tx, ctx.workspaceId, [authorization.id])).get(authorization.id) ?? 0;
    if (authorization.units - units < reserved.starts.length * unitsPerSession) {
      outran = event.id;
      throw new AppError('units_exhausted', 409, 'No authorized units are left for another session', {
        unitsRemaining: authorization.units - units,
      });
    }
    await tx.insert(calendarSessions).values(sessionRows(reserved.starts, 'booked', seriesEventId));
  };

  let created: Awaited<ReturnType<typeof createEvent>>;
  try {
    const first = new Date(reserved.starts[0]).toISOString();
    created = await createEvent(
      deps,
      ctx,
      {
        calendar: cal.id,
        draft: {
          title: `${authorization.service}: ${patient.givenName} ${patient.familyName}`,
          start: first,
          end: new Date(reserved.starts[0] + minutes * 60_000).toISOString(),
          timeZone: input.timeZone,
          recurrence:
            reserved.starts.length > 1
              ? [`RRULE:FREQ=${frequency === 'daily' ? 'DAILY' : 'WEEKLY'};COUNT=${reserved.starts.length}`]
              : undefined,
          patientId: patient.id,
          conference: input.conference,
        },
      },
      { saveWith: book },
    );
  } catch (err) {
    await release();
    // The series was made but its units are gone: it goes again.
    if (outran)
      await deleteEvent(deps, ctx, outran).catch((e) =>
        ctx.log.warn({ err: e }, 'a series whose units were gone could not be deleted'),
      );
    throw err;
  }

  // The instances' own ids, from the provider (each is changed or cancelled one at a time).
  const last = reserved.starts[reserved.starts.length - 1] + minutes * 60_000;
  const listed = await windowOf(
    deps,
    ctx,
    [cal],
    { timeMin: new Date(reserved.starts[0]).toISOString(), timeMax: new Date(last).toISOString() },
    sessionCache(deps, ctx, 'calendar.events.list'),
  ).catch(() => ({ items: [] }));
  const instances = listed.items.filter((e) => e.recurringEventId === created.eventId || e.id === created.eventId);
  const unitsBooked = reserved.starts.length * unitsPerSession;
  return {
    eventId: created.eventId,
    sessions: reserved.starts.map((start) => {
      const at = new Date(start).toISOString();
      return {
        eventId: instances.find((e) => e.start === at)?.id ?? created.eventId,
        start: at,
        end: new Date(start + minutes * 60_000).toISOString(),
      };
    }),
    unitsBooked,
    unitsRemaining: reserved.remaining - unitsBooked,
  };
}

/**
 * The booked sessions of a series: every one still to come, or one occurrence, known by its
 * original start (the series' rule) or, once moved here, by its new one.
 */
function bookedOf(workspaceId: string, calendarId: string, seriesEventId: string, starts?: string[]) {
  return and(
    eq(calendarSessions.workspaceId, workspaceId),
    eq(calendarSessions.calendarId, calendarId),
    eq(calendarSessions.seriesEventId, seriesEventId),
    eq(calendarSessions.status, 'booked'),
    starts
      ? inArray(
          calendarSessions.startAt,
          starts.map((s) => new Date(s)),
        )
      : sql`${calendarSessions.startAt} > now()`,
  );
}

/** Gives back the units of cancelled sessions that had not happened yet (a whole series, or one occurrence). */
export async function releaseSessions(
  tx: Tx,
  workspaceId: string,
  calendarId: string,
  target: { seriesEventId: string; occurrenceStart?: string | string[] },
): Promise<void> {
  const starts = target.occurrenceStart === undefined ? undefined : [target.occurrenceStart].flat();
  await tx
    .update(calendarSessions)
    .set({ status: 'cancelled' })
    .where(bookedOf(workspaceId, calendarId, target.seriesEventId, starts));
}

/** A session's occurrence moved to another time: its row follows, so the sessions list shows when it now is. */
export async function moveSession(
  tx: Tx,
  workspaceId: string,
  calendarId: string,
  occurrence: { seriesEventId: string; from: string[]; start: string; end: string },
): Promise<void> {
  await tx
    .update(calendarSessions)
    .set({ startAt: new Date(occurrence.start), endAt: new Date(occurrence.end) })
    .where(bookedOf(workspaceId, calendarId, occurrence.seriesEventId, occurrence.from));
}

/** Units per authorization of a patient: authorized, booked (not cancelled), remaining; and the sessions. */
export async function sessionUsage(deps: AppDeps, ctx: RequestContext, patientId: string) {
  const authorizations = await listAuthorizations(deps, ctx, patientId);
  // Cancelled sessions and reservations whose lease is over hold nothing.
  const rows = await withTenant(deps.db, ctx, (tx) =>
    tx
      .select()
      .from(calendarSessions)
      .where(
        and(eq(calendarSessions.workspaceId, ctx.workspaceId), eq(calendarSessions.patientId, patientId), holdsUnits()),
      )
      .orderBy(calendarSessions.startAt),
  );
  return {
    items: authorizations.map((a) => {
      const mine = rows.filter((r) => r.authorizationId === a.id);
      const booked = mine.reduce((n, r) => n + r.units, 0);
      return {
        authorizationId: a.id,
        service: a.service,
        units: a.units,
        unitsBooked: booked,
        unitsRemaining: a.units - booked,
        validTo: a.validTo,
        sessions: mine
          .filter((r) => r.status === 'booked')
          .map((r) => ({ start: r.startAt.toISOString(), end: r.endAt.toISOString(), units: r.units })),
      };
    }),
  };
}
