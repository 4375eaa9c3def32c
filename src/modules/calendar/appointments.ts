// Atrium's own facts about provider events (patient, host, completed, Zoom meeting), and the
// appointment.* events. An event with a patient is an appointment.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/db/client.js';
import { inList } from '../../platform/db/lists.js';
import { publishEvent } from '../../platform/events/events.js';
import { calendarAppointments } from './tables.js';

export type AppointmentRow = typeof calendarAppointments.$inferSelect;
export const rowKey = (calendarId: string, providerEventId: string) => `${calendarId}\n${providerEventId}`;

/**
 * Our rows for these provider events (of these calendars), by `rowKey`: only the events a list
 * returned are read, so a week view costs the same after years of appointments.
 */
export async function appointmentsOf(
  tx: Tx,
  workspaceId: string,
  calendarIds: string[],
  providerEventIds: string[],
): Promise<Map<string, AppointmentRow>> {
  if (calendarIds.length === 0 || providerEventIds.length === 0) return new Map();
  const rows = await tx
    .select()
    .from(calendarAppointments)
    .where(
      and(
        eq(calendarAppointments.workspaceId, workspaceId),
        inArray(calendarAppointments.calendarId, calendarIds),
        inList(calendarAppointments.providerEventId, providerEventIds),
      ),
    );
  return new Map(rows.map((r) => [rowKey(r.calendarId, r.providerEventId), r]));
}

export async function appointmentOf(
  tx: Tx,
  workspaceId: string,
  calendarId: string,
  providerEventIds: (string | null)[],
): Promise<AppointmentRow | undefined> {
  const ids = providerEventIds.filter((id): id is string => Boolean(id));
  const rows = await appointmentsOf(tx, workspaceId, [calendarId], ids);
  // The instance's own row wins over its series'.
  return ids.map((id) => rows.get(rowKey(calendarId, id))).find(Boolean);
}

export async function saveAppointment(
  tx: Tx,
  row: Pick<AppointmentRow, 'workspaceId' | 'calendarId' | 'providerEventId'> & Partial<AppointmentRow>,
): Promise<void> {
  const { workspaceId, calendarId, providerEventId, ...rest } = row;
  await tx
    .insert(calendarAppointments)
    .values({ workspaceId, calendarId, providerEventId, ...rest })
    .onConflictDoUpdate({
      target: [calendarAppointments.workspaceId, calendarAppointments.calendarId, calendarAppointments.providerEventId],
      set: { ...rest, updatedAt: sql`now()` },
    });
}

export type AppointmentEvent = 'appointment.created' | 'appointment.cancelled' | 'appointment.completed';

export async function emitAppointment(
  tx: Tx,
  workspaceId: string,
  type: AppointmentEvent,
  data: {
    eventId: string;
    calendarId: string;
    patientId: string;
    start: string;
    end: string;
    hostUserId: string | null;
  },
): Promise<void> {
  await publishEvent(tx, { workspaceId }, type, data);
}
