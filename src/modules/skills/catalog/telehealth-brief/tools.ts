import { hasAppointmentSource } from '../../capabilities.js';
import { need, type ToolImpl, today } from '../types.js';

const age = (dob: string | null, now: Date) => {
  if (!dob) return null;
  const [y, m, d] = dob.split('-').map(Number);
  let years = now.getUTCFullYear() - y;
  if (now.getUTCMonth() + 1 < m || (now.getUTCMonth() + 1 === m && now.getUTCDate() < d)) years--;
  return years;
};

/** "Mon, Nov 30, 2:00 PM EST": when, in the appointment's own zone (UTC when it has none or an unknown one). */
function whenInWords(iso: string, timeZone: string | undefined): string {
  const format = (zone: string) =>
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      month: 'short',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
    })
      .format(new Date(iso))
      .replace(/[\u2009\u202f]/g, ' ');
  try {
    return format(timeZone || 'UTC');
  } catch {
    return format('UTC');
  }
}

/** A sentence's end: its own full stop (or ? !) kept, one added otherwise. */
const sentence = (text: string) => (/[.!?…]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

const precallBrief: ToolImpl = async (input, caps) => {
  const patients = need(caps.patients, 'patients:read');
  const patientId = String(input.patientId);
  const patient = await patients.get(patientId);
  const date = today(caps.now);
  const [authorizations, next, notes, mentions] = await Promise.all([
    patients.authorizations(patientId),
    patients.nextAppointment(patientId),
    patients.recentNotes(patientId, 3),
    patients.recentMentions(patientId, 5),
  ]);
  const appointment = next === 'unavailable' ? null : next;
  const active = authorizations.filter((a) => a.validFrom <= date && a.validTo >= date);
  const withheld: { section: string; scope: string }[] = [];
  // Coverage and claims are billing data: only with billing:read, else named as withheld.
  let coverage: unknown = null;
  let claims: unknown[] = [];
  if (caps.billing) {
    const coverages = await caps.billing.coverages(patientId);
    coverage = coverages.find((c) => c.effectiveFrom <= date && (!c.effectiveTo || c.effectiveTo >= date)) ?? null;
    claims = await caps.billing.recentClaims(patientId, 3);
  } else {
    withheld.push({ section: 'coverage', scope: 'billing:read' }, { section: 'claims', scope: 'billing:read' });
  }
  const years = age(patient.dateOfBirth, caps.now);
  const name = `${patient.givenName} ${patient.familyName}`;
  const lines = [
    `${name}${years !== null ? `, ${years}` : ''}${patient.mrn ? ` (MRN ${patient.mrn})` : ''}.`,
    appointment
      ? `Next appointment: ${appointment.title}, ${whenInWords(appointment.start, appointment.timeZone)}.`
      : next === 'unavailable'
        ? 'The calendars could not be read just now, so the next appointment is not known.'
        : hasAppointmentSource()
          ? 'No upcoming appointment.'
          : 'No appointment source is connected.',
    active.length
      ? `Active authorizations: ${active.map((a) => `${a.service} ${a.units}×${a.unitMinutes} min until ${a.validTo}`).join('; ')}.`
      : 'No active authorizations.',
    notes.length
      ? `${notes.length} recent note(s); latest assessment: ${sentence(notes[0].assessment || '—')}`
      : 'No notes yet.',
    mentions.length
      ? `${mentions.length} recent mention(s) by the team; latest: "${mentions[0].excerpt}".`
      : 'No recent mentions.',
  ];
  if (withheld.length) lines.push('Coverage and claims withheld (billing:read not granted).');
  return {
    patient: { ...patient, age: years },
    upcomingAppointment: appointment,
    /** True when the calendars could not be read, so `upcomingAppointment: null` means "not known", not "none". */
    appointmentUnknown: next === 'unavailable',
    activeAuthorizations: active,
    recentNotes: notes.map((n) => ({
      id: n.id,
      status: n.status,
      assessment: n.assessment,
      plan: n.plan,
      createdAt: n.createdAt,
    })),
    recentMentions: mentions,
    coverage,
    recentClaims: claims,
    withheld,
    summary: lines.join(' '),
  };
};

export const tools = { precall_brief: precallBrief };
