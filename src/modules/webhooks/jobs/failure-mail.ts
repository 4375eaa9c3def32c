// The e-mail admins get when a webhook event is dead-lettered: which endpoint (its URL and description, not only
// its id), what failed, what to do, and a link to the endpoint's page. At most one per endpoint and admin per
// hour (repository claimFailureMails); the next one says how many more failed since.

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

export function failureMail(m: FailureMailInput): { subject: string; text: string } {
  const where = m.url ? displayUrl(m.url) : `endpoint ${m.endpointId}`;
  const host = m.url ? displayUrl(m.url).split('/')[0] : `endpoint ${m.endpointId}`;
  const named = m.description ? ` ("${m.description.replace(/\s+/g, ' ').trim()}")` : '';
  const hours = m.windowMs / 3_600_000;
  const per =
    hours === 1
      ? 'hour'
      : Number.isInteger(hours)
        ? `${hours} hours`
        : `${Math.max(1, Math.round(m.windowMs / 60_000))} minutes`;
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
        `failed every retry. They are in the inbox too.`,
    );
  }
  lines.push(
    '',
    'What to do:',
    `1. Check that the receiver at ${where} is up and answers with a 2xx status within 10 seconds. The endpoint's ` +
      "delivery log shows each attempt's status and the receiver's answer.",
    `2. If the receiver has moved, change the endpoint's URL with Edit on the Webhooks page. Its secret stays.`,
    '3. Then press Replay on the failed events in the inbox on that page, or Resolve the ones that need nothing more.',
  );
  if (m.link) lines.push('', `The endpoint: ${m.link}`);
  lines.push(
    '',
    `You get at most one such e-mail about an endpoint per ${per}; the next one says how many more failed meanwhile.`,
  );
  return { subject, text: lines.join('\n') };
}
