// The e-mail admins get when a webhook event is dead-lettered: which endpoint (its URL and description, not only
// its id), what failed, what to do, and a link to the endpoint's page. At most one per endpoint and admin per
// hour (repository claimFailureMails); the dead letters held back meanwhile are summed up in the next one, or at
// the hour's end when none comes (heldFailureMail, sent by the webhooks.failure-mail-digest schedule).

/** How long after an e-mail about an endpoint's dead letters the next one to the same admin waits. */
export const FAILURE_MAIL_WINDOW_MS = 60 * 60 * 1000;

/**
 * An endpoint's URL as a mail may show it: host (with port) and path. Never a user name or password, and never
 * the query, which often carries a token (`?…` says there was one).
 */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.host}${url.pathname === '/' ? '' : url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return '(an unreadable URL)';
  }
}

const minute = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export interface FailureMailInput {
  endpointId: string;
  /** Null when the endpoint is gone. */
  url: string | null;
  description: string | null;
  eventId: string;
  eventType: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  /** The endpoint's page in the web app, e.g. https://atrium.example/admin/webhooks/whk_…; null when unknown. */
  link: string | null;
  /** When this admin was last e-mailed about this endpoint (null: never), and how many failed since unmailed. */
  previousSentAt: Date | null;
  held: number;
  windowMs: number;
}

/** How an endpoint is named in a mail: its URL (host and path), its host alone, and its description. */
function endpointWords(endpointId: string, url: string | null, description: string | null) {
  return {
    where: url ? displayUrl(url) : `endpoint ${endpointId}`,
    host: url ? displayUrl(url).split('/')[0] : `endpoint ${endpointId}`,
    named: description ? ` ("${description.replace(/\s+/g, ' ').trim()}")` : '',
  };
}

/** What to do, the link, and how often such e-mails come: the end of every dead-letter e-mail. */
function closingLines(where: string, link: string | null, windowMs: number): string[] {
  const hours = windowMs / 3_600_000;
  const per =
    hours === 1
      ? 'hour'
      : Number.isInteger(hours)
        ? `${hours} hours`
        : `${Math.max(1, Math.round(windowMs / 60_000))} minutes`;
  return [
    '',
    'What to do:',
    `1. Check that the receiver at ${where} is up and answers with a 2xx status within 10 seconds. The endpoint's ` +
      "delivery log shows each attempt's status and the receiver's answer.",
    `2. If the receiver has moved, change the endpoint's URL with Edit on the Webhooks page. Its secret stays.`,
    '3. Then press Replay on the failed events under Needs attention on that page, or Resolve the ones that need nothing more.',
    ...(link ? ['', `The endpoint: ${link}`] : []),
    '',
    `You get at most one such e-mail about an endpoint per ${per}; events that fail meanwhile are counted in the ` +
      'next one, or in one at the end of that time.',
  ];
}

export function failureMail(m: FailureMailInput): { subject: string; text: string } {
  const { where, host, named } = endpointWords(m.endpointId, m.url, m.description);
  const subject =
    m.held > 0
      ? `Webhook deliveries failed: ${m.eventType} and ${m.held} more to ${host}`
      : `Webhook delivery failed: ${m.eventType} to ${host}`;
  const lines = [
    `Atrium gave up delivering an event to your webhook endpoint ${where}${named} after ${m.attempts} attempts.`,
    '',
    `Event: ${m.eventType} (${m.eventId})`,
    `Last result: ${m.lastStatus !== null ? `HTTP ${m.lastStatus}` : 'no HTTP response'}${m.lastError ? ` — ${m.lastError}` : ''}`,
  ];
  if (m.held > 0 && m.previousSentAt) {
    lines.push(
      '',
      `Since the last e-mail about this endpoint (${minute(m.previousSentAt)}), ${m.held} more of its events ` +
        `failed every retry. They are under Needs attention on the Webhooks page too.`,
    );
  }
  lines.push(...closingLines(where, m.link, m.windowMs));
  return { subject, text: lines.join('\n') };
}

export interface HeldFailureMailInput {
  endpointId: string;
  url: string | null;
  description: string | null;
  link: string | null;
  /** The last e-mail about this endpoint to these admins, and how many of its events failed since. */
  previousSentAt: Date;
  held: number;
  windowMs: number;
}

/** The e-mail at the end of a window in which an endpoint's dead letters were held back (no later one came). */
export function heldFailureMail(m: HeldFailureMailInput): { subject: string; text: string } {
  const { where, host, named } = endpointWords(m.endpointId, m.url, m.description);
  const events = m.held === 1 ? '1 more event' : `${m.held} more events`;
  const lines = [
    `Since the last e-mail about your webhook endpoint ${where}${named} (${minute(m.previousSentAt)}), Atrium gave ` +
      `up delivering ${events} to it after every retry. ${m.held === 1 ? 'It is' : 'They are'} under Needs ` +
      'attention on the Webhooks page.',
    ...closingLines(where, m.link, m.windowMs),
  ];
  return { subject: `Webhook deliveries failed: ${events} to ${host}`, text: lines.join('\n') };
}
