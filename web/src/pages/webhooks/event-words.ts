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

/**
 * What the receiving server did with an attempt, in words: "Answered 500 (an error on the receiving server)", or
 * "No answer" when it never answered (the reason is `failureWords`).
 */
export function answerWords(status: number | null): string {
  if (status === null) return 'No answer';
  if (status >= 200 && status < 300) return `Answered ${status} (accepted)`;
  if (status >= 300 && status < 400) return `Answered ${status} (a redirect, which is not followed)`;
  if (status >= 500) return `Answered ${status} (an error on the receiving server)`;
  return `Answered ${status} (refused by the receiving server)`;
}

/** Why an attempt failed without an answer, in words; null for an answer the receiver gave (its body says why). */
export function failureWords(error: string | null): string | null {
  if (!error) return null;
  if (/^connection:/.test(error)) {
    if (/ENOTFOUND|EAI_AGAIN/.test(error)) return 'Its address could not be found.';
    if (/ECONNREFUSED/.test(error)) return 'The receiving server refused the connection.';
    return 'The connection to the receiving server failed.';
  }
  if (/^timeout:/.test(error)) return 'The receiving server did not answer in time.';
  if (/^tls:/.test(error)) return 'Its security certificate was not accepted.';
  if (/^unsafe_url/.test(error)) return 'Its address is not one Atrium may call (private or local).';
  return null;
}
