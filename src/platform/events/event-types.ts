// Dependency-free so the web app can import it too.

/** Every event kind of contract §7.2. */
export const EVENT_TYPES = [
  'patient.created',
  'patient.updated',
  'appointment.created',
  'appointment.cancelled',
  'appointment.completed',
  'soap_note.signed',
  'claim.submitted',
  'claim.paid',
  'claim.denied',
  'mail.received',
  'channel.message.received',
  'meeting.started',
  'meeting.ended',
  'auth.signed_in',
  'break_glass.invoked',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
