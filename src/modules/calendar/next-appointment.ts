// A patient's next appointment, for the skills (the pre-call brief): the calendar owns that data, so it registers
// this source with the skills module (skills' registerAppointmentSource). Read as the patient record's schedule is
// (listEvents with a patientId: the workspace's calendars, a phi_access row, providers asked in parallel), over the
// widest window a list allows from now.
import type { AppointmentSource } from '../skills/index.js';
import { listEvents, MAX_WINDOW_MS } from './events.js';

export const nextAppointment: AppointmentSource = async (deps, ctx, patientId, now) => {
  const { items, warnings } = await listEvents(deps, ctx, {
    timeMin: now.toISOString(),
    timeMax: new Date(now.getTime() + MAX_WINDOW_MS).toISOString(),
    patientId,
  });
  // Still to come or under way, not cancelled; the soonest first.
  const next = items
    .filter((e) => e.status !== 'cancelled' && Date.parse(e.end) > now.getTime())
    .sort((a, b) => Date.parse(a.start) - Date.parse(b.start))[0];
  // None found while a calendar could not be read (an outage, a connection to renew): not known, rather than none.
  if (!next) return warnings.length > 0 ? 'unavailable' : null;
  return {
    id: next.id,
    title: next.title,
    start: next.start,
    end: next.end,
    timeZone: next.timeZone,
    joinUrl: next.telehealth?.joinUrl ?? next.conference?.joinUrl ?? null,
  };
};
