// The webhook delivery worker: claims due deliveries, sends them signed through the SSRF-safe
// customer-URL policy of platform/upstream outside any transaction, and writes the results back
// in batches.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../../config.js';
import type { SecretKey } from '../../../platform/crypto.js';
import type { Database, Tx } from '../../../platform/db/client.js';
import { withSystem } from '../../../platform/db/tenant.js';
import { EVENTS_CHANNEL } from '../../../platform/events/events.js';
import { MAX_RESPONSE_BYTES, OutboundError, toOutboundError } from '../../../platform/http/safe-client.js';
import { UnsafeUrlError } from '../../../platform/http/url-guard.js';
import { newId } from '../../../platform/ids.js';
import { enqueueMail } from '../../../platform/mail/mailer.js';
import { signedHeaders, signPayload } from '../../../platform/signing.js';
import { createUpstream, UpstreamError } from '../../../platform/upstream/index.js';
import { startPollingWorker, type Worker } from '../../../platform/worker.js';
import { adminEmails } from '../../identity/index.js';
import * as repo from '../repository.js';
import { openSecret } from '../service.js';

export interface WebhookWorkerOptions {
  database: Database;
  log: FastifyBaseLogger;
  webhooks: Config['webhooks'];
  keys: SecretKey[];
  pollMs: number;
  /** Deliveries in flight in this process. */
  maxInFlight?: number;
  /** Leased deliveries per endpoint across all instances. */
  perEndpoint?: number;
  /** How long a claim is ours; past it another worker may take the delivery again. */
  leaseMs?: number;
}

export const DEFAULT_MAX_IN_FLIGHT = 256;
export const DEFAULT_PER_ENDPOINT = 32;
const MAX_ERROR_LENGTH = 500;

/** The exact bytes delivered (and signed): stable across retries and replays. */
/** Response bytes kept per attempt for the delivery detail view (contract §7.1). */
export const EXCHANGE_BODY_BYTES = 4096;

export function eventBody(
  claimed: Pick<repo.ClaimedDelivery, 'event_id' | 'event_type' | 'event_created_at' | 'workspace_id' | 'data'>,
): string {
  return JSON.stringify({
    event_id: claimed.event_id,
    type: claimed.event_type,
    created_at: new Date(claimed.event_created_at).toISOString(),
    workspace_id: claimed.workspace_id,
    data: claimed.data,
  });
}

/** Contract §7.2 headers; during a rotation both secrets sign (space-separated, as Standard Webhooks allows). */
export function deliveryHeaders(
  secret: string,
  previousSecret: string | null,
  eventId: string,
  body: string,
  now = new Date(),
): Record<string, string> {
  const headers: Record<string, string> = {
    ...signedHeaders(secret, eventId, body, now),
    'user-agent': 'Atrium-Webhooks/1',
  };
  if (previousSecret) {
    const extra = signPayload(previousSecret, eventId, Number(headers['webhook-timestamp']), body);
    headers['webhook-signature'] = `${headers['webhook-signature']} ${extra}`;
    headers['x-service-signature'] = headers['webhook-signature'];
  }
  return headers;
}

function describeFailure(err: unknown): string {
  if (err instanceof UnsafeUrlError) return `unsafe_url (${err.reason}): ${err.message}`;
  if (err instanceof UpstreamError) return describeFailure(toOutboundError(err));
  if (err instanceof OutboundError) return `${err.kind}: ${err.message}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

export interface WebhookWorker extends Worker {
  /** Deliveries currently being sent by this process. */
  inFlight(): number;
}

export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const { database, log, webhooks, keys } = options;
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  const perEndpoint = options.perEndpoint ?? DEFAULT_PER_ENDPOINT;
  const leaseMs = options.leaseMs ?? webhooks.timeoutMs + 60_000;
  const retryDelaysMs = webhooks.retryDelaysMs;
  // One attempt per delivery: the delivery schedule owns retries, and the per-endpoint lease cap
  // bounds what a failing endpoint costs, so no breaker (one endpoint's failures must never make
  // another endpoint's deliveries fail fast). The receiver's body is kept only for the error text.
  const receivers = createUpstream({
    name: 'webhooks',
    customerUrls: { allowCidrs: webhooks.allowCidrs },
    timeoutMs: webhooks.timeoutMs,
    retries: 0,
    breaker: false,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    oversize: 'truncate',
    connections: 64,
  });
  const secrets = new Map<string, string>();
  const inFlight = new Set<Promise<void>>();
  let results: repo.AttemptResult[] = [];
  let flushing: Promise<void> | undefined;
  let dueTimer: NodeJS.Timeout | undefined;
  let dueTimerAt = 0;
  let stopping = false;

  /** The worker's own transactions (claims, results): system scope, since it serves every workspace. */
  const bookkeeping = <T>(fn: (tx: Tx) => Promise<T>) => withSystem(database.db, fn);

  const secretOf = (blob: string, workspaceId: string, endpointId: string) => {
    let secret = secrets.get(blob);
    if (!secret) {
      secret = openSecret(keys, blob, workspaceId, endpointId);
      if (secrets.size > 10_000) secrets.clear();
      secrets.set(blob, secret);
    }
    return secret;
  };

  async function deliver(claimed: repo.ClaimedDelivery, leaseToken: string): Promise<repo.AttemptResult> {
    const attemptedAt = new Date();
    const base = {
      workspaceId: claimed.workspace_id,
      endpointId: claimed.endpoint_id,
      eventId: claimed.event_id,
      eventType: claimed.event_type,
      leaseToken,
      attempt: claimed.attempts,
      attemptId: newId('dlv'),
      attemptedAt,
      scheduledAt: new Date(claimed.scheduled_at),
    };
    const retryInSeconds = claimed.attempts <= retryDelaysMs.length ? retryDelaysMs[claimed.attempts - 1] / 1000 : null;
    const started = performance.now();
    let sent: { url: string; requestHeaders: Record<string, string> } | undefined;
    try {
      const body = eventBody(claimed);
      const rotating =
        claimed.previous_secret_enc &&
        claimed.previous_secret_expires_at &&
        new Date(claimed.previous_secret_expires_at) > attemptedAt;
      const headers = deliveryHeaders(
        secretOf(claimed.secret_enc, claimed.workspace_id, claimed.endpoint_id),
        rotating ? secretOf(claimed.previous_secret_enc!, claimed.workspace_id, claimed.endpoint_id) : null,
        claimed.event_id,
        body,
        attemptedAt,
      );
      sent = { url: claimed.url, requestHeaders: headers };
      const res = await receivers.request({ method: 'POST', url: claimed.url, headers, body });
      const ok = res.status >= 200 && res.status < 300;
      const error = ok
        ? null
        : res.status >= 300 && res.status < 400
          ? `redirect not followed (HTTP ${res.status}${res.headers.location ? ` to ${res.headers.location}` : ''})`
          : `HTTP ${res.status}${res.body.length > 0 ? `: ${res.text().slice(0, 200)}` : ''}`;
      const kept = res.body.subarray(0, EXCHANGE_BODY_BYTES);
      return {
        ...base,
        outcome: ok ? 'success' : 'fail',
        status: res.status,
        error: error?.slice(0, MAX_ERROR_LENGTH) ?? null,
        durationMs: res.durationMs,
        retryInSeconds: ok ? null : retryInSeconds,
        exchange: {
          ...sent,
          responseHeaders: res.headers,
          // A multi-byte character cut at the boundary becomes U+FFFD; NUL cannot go into a text column.
          responseBody: kept.toString('utf8').replaceAll(String.fromCharCode(0), '\uFFFD'),
          responseTruncated: res.truncated || res.body.length > EXCHANGE_BODY_BYTES,
        },
      };
    } catch (err) {
      return {
        ...base,
        outcome: 'fail',
        status: null,
        error: describeFailure(err).slice(0, MAX_ERROR_LENGTH),
        durationMs: Math.round(performance.now() - started),
        retryInSeconds,
        ...(sent ? { exchange: { ...sent, responseHeaders: null, responseBody: null, responseTruncated: false } } : {}),
      };
    }
  }

  /** Writes finished attempts in one transaction (dead-letters: inbox item + admin e-mail in the same one). */
  async function flush(): Promise<void> {
    while (results.length > 0) {
      const batch = results;
      results = [];
      try {
        await bookkeeping(async (tx) => {
          const dead = await repo.recordAttempts(tx, batch);
          for (const row of dead) {
            const result = batch.find((r) => r.endpointId === row.endpoint_id && r.eventId === row.event_id)!;
            await repo.insertInboxItem(tx, {
              workspaceId: result.workspaceId,
              id: newId('inb'),
              kind: 'webhook.dead_lettered',
              endpointId: result.endpointId,
              eventId: result.eventId,
              eventType: result.eventType,
              lastStatus: result.status,
              lastError: result.error,
            });
            await enqueueMail(tx, result.workspaceId, {
              to: await adminEmails(tx, result.workspaceId),
              subject: `Webhook delivery failed: ${result.eventType} to endpoint ${result.endpointId}`,
              text: [
                `Atrium gave up delivering event ${result.eventId} (${result.eventType}) to webhook endpoint ${result.endpointId}`,
                `after ${result.attempt} attempts.`,
                `Last result: ${result.status ?? 'no HTTP response'}${result.error ? ` — ${result.error}` : ''}`,
                '',
                'The event is in the workspace inbox; fix the endpoint, then replay it from Admin → Webhooks.',
              ].join('\n'),
            });
          }
        });
      } catch (err) {
        // The leases run out and the deliveries are retried: at-least-once, nothing is lost.
        log.error({ err, count: batch.length }, 'recording webhook attempts failed');
      }
      // Capacity freed (leases released): claim more without waiting for the rest in flight.
      loop?.wake();
    }
  }

  function finished(result: repo.AttemptResult) {
    results.push(result);
    startFlush();
  }

  function startFlush() {
    if (flushing) return;
    flushing = (async () => {
      // Let results that finish in the same tick join the batch.
      await new Promise((resolve) => setImmediate(resolve));
      await flush();
    })().finally(() => {
      flushing = undefined;
      if (results.length > 0) startFlush();
    });
  }

  // Wakes the loop when the earliest future retry falls due (sooner than the poll would). Calls overlap
  // (every result batch ends with one), and a call that read before another batch committed may see no
  // pending retry: so a timer is only ever replaced by an earlier one, never cleared by a later read,
  // and each firing looks for the next due time itself.
  async function scheduleNextDue(): Promise<void> {
    const at = await withSystem(database.db, (tx) => repo.nextDueAt(tx));
    if (!at || stopping) return;
    const due = at.getTime();
    const wait = due - Date.now();
    if (wait <= 0 || wait >= options.pollMs) return;
    if (dueTimer && dueTimerAt <= due) return;
    if (dueTimer) clearTimeout(dueTimer);
    dueTimerAt = due;
    dueTimer = setTimeout(() => {
      dueTimer = undefined;
      loop?.wake();
      void scheduleNextDue().catch((err) => options.log.warn({ err }, 'webhook retry timer failed'));
    }, wait + 5);
    dueTimer.unref();
  }

  async function runOnce(): Promise<number> {
    if (stopping) return 0;
    const capacity = maxInFlight - inFlight.size;
    if (capacity <= 0) return 0;
    const leaseToken = randomUUID();
    const claimed = await bookkeeping((tx) =>
      repo.claimDueDeliveries(tx, { limit: Math.min(capacity, 200), perEndpoint, leaseMs, leaseToken, maxInFlight }),
    );
    for (const delivery of claimed) {
      const running: Promise<void> = deliver(delivery, leaseToken)
        .then(finished)
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
    // Whenever nothing more can be claimed now (idle, or every due endpoint at its cap).
    if (claimed.length === 0) await scheduleNextDue();
    return claimed.length;
  }

  let loop: Worker | undefined;
  loop = await startPollingWorker({
    name: 'webhooks',
    database,
    log,
    pollMs: options.pollMs,
    channel: EVENTS_CHANNEL,
    runOnce,
  });
  const started = loop;
  return {
    name: started.name,
    wake: () => started.wake(),
    inFlight: () => inFlight.size,
    async stop() {
      stopping = true;
      if (dueTimer) clearTimeout(dueTimer);
      await started.stop();
      await Promise.allSettled([...inFlight]);
      while (flushing) await flushing;
    },
  };
}
