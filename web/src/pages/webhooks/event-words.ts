/**
 * Event types in plain words for the Webhooks pages. The codes are part of the API (a receiver's developer needs
 * them), so the pages show them too, after the words.
 */

const EVENT_WORDS: Record<string, string> = {
  'patient.created': 'New patient',
  'patient.updated': 'Patient details changed',
  'appointment.created': 'Appointment booked',
  'appointment.cancelled': 'Appointment cancelled',
  'appointment.completed': 'Appointment completed',
  'soap_note.signed': 'Visit note signed',
  'claim.submitted': 'Claim submitted',
  'claim.paid': 'Claim paid',
  'claim.denied': 'Claim denied',
  'mail.received': 'E-mail received',
  'channel.message.received': 'Patient message received',
  'meeting.started': 'Video visit started',
  'meeting.ended': 'Video visit ended',
  'auth.signed_in': 'Someone signed in',
  'break_glass.invoked': 'Emergency access to a record',
  'webhook.test': 'Test event',
  // Inbox items that are not webhook deliveries.
  'mail.send': 'E-mail not delivered',
  'telehealth.room_failed': 'Video room not created',
};

/** The parts of Atrium the health checks watch (`health.<component>`). */
const COMPONENT_WORDS: Record<string, string> = {
  database: 'Database',
  storage: 'File storage',
  ai: 'AI assistant',
  tts: 'Read-aloud voice',
  mail: 'E-mail sending',
  payments: 'Payments',
  video: 'Video visits',
  'oauth-google': 'Google Calendar',
  'oauth-microsoft': 'Outlook Calendar',
  'oauth-zoom': 'Zoom',
  'oauth-meta': 'Facebook and WhatsApp messages',
};

function componentWords(component: string): string {
  const known = COMPONENT_WORDS[component];
  if (known) return known;
  const words = component.replace(/^oauth-/, '').replace(/[-_]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** What an event (or an inbox item, given its `kind`) is, in words: "New patient", "Outage: Google Calendar". */
export function eventWords(eventType: string | null, kind?: string): string {
  if (!eventType) return kind === 'mail.undeliverable' ? 'E-mail not delivered' : 'Something failed';
  if (eventType.startsWith('health.')) {
    const component = componentWords(eventType.slice('health.'.length));
    return kind === 'health.incident_resolved' ? `Working again: ${component}` : `Outage: ${component}`;
  }
  const known = EVENT_WORDS[eventType];
  if (known) return known;
  const words = eventType.replace(/[._]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The last characters of an id, which tell apart two items of one kind and time (the whole id is on the page). */
export const idSuffix = (id: string | null) => (id ? `…${id.slice(-4)}` : '');
