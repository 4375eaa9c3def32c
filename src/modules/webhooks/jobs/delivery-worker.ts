// Webhook delivery as the platform/jobs type `webhooks.deliver`: the claim loads each delivery with
// its event and endpoint, the handler sends it signed through the SSRF-safe customer-URL policy of
// platform/upstream outside any transaction, and the results of a batch are written in one statement
// inside the runner's fenced outcome transaction.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../../config.js';
import type { SecretKey } from '../../../platform/crypto.js';
import { MAX_RESPONSE_BYTES, OutboundError, toOutboundError } from '../../../platform/http/safe-client.js';
import { UnsafeUrlError } from '../../../platform/http/url-guard.js';
import { newId } from '../../../platform/ids.js';
import {
  defineJob,
  type JobDefinition,
  PermanentJobError,
  RetryJobError,
  startJobWorker,
} from '../../../platform/jobs/index.js';
import { enqueueMail } from '../../../platform/mail/mailer.js';
import { signedHeaders, signPayload } from '../../../platform/signing.js';
import type { AppDeps } from '../../../platform/types.js';
import { createUpstream, UpstreamError } from '../../../platform/upstream/index.js';
import type { Worker } from '../../../platform/worker.js';
import { adminEmails } from '../../identity/index.js';
import * as repo from '../repository.js';
import { openSecret, postInboxNotice } from '../service.js';
import { FAILURE_MAIL_WINDOW_MS, failureMail } from './failure-mail.js';

export interface DeliveryJobOptions {
  webhooks: Config['webhooks'];
  keys: SecretKey[];
  /** Running deliveries per endpoint across all instances. */
  perEndpoint?: number;
  /** How long a claim lasts without a heartbeat; past it another worker may take the delivery again. */
  leaseMs?: number;
  /** The web app's base URL, for the link to the endpoint in the dead-letter e-mail (the app's public URL). */
  appUrl?: () => string;
  /** At most one dead-letter e-mail per endpoint and admin within this time (default an hour). */
  failureMailWindowMs?: number;
}

export interface WebhookWorkerOptions extends DeliveryJobOptions {
  deps: AppDeps;
  log: FastifyBaseLogger;
  pollMs?: number;
  /** Deliveries in flight in this process. */
  maxInFlight?: number;
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

/** A failed attempt as the logs may have it: `HTTP 500`, `redirect (HTTP 302)`, `timeout`, `unsafe_url (private)`. */
export function loggableFailure(result: Pick<repo.AttemptResult, 'status' | 'error'>): string {
  if (result.status !== null && result.status >= 300 && result.status < 400) return `redirect (HTTP ${result.status})`;
  if (result.status !== null) return `HTTP ${result.status}`;
  const kind = /^[a-z_]+(?: \([a-z_]+\))?/.exec(result.error ?? '')?.[0];
  return kind ?? 'delivery failed';
}

function describeFailure(err: unknown): string {
  if (err instanceof UnsafeUrlError) return `unsafe_url (${err.reason}): ${err.message}`;
  if (err instanceof UpstreamError) return describeFailure(toOutboundError(err));
  if (err instanceof OutboundError) return `${err.kind}: ${err.message}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * The delivery job type. A failed attempt is retried on the delivery's schedule
 * (`ATRIUM_WEBHOOK_RETRY_DELAYS`, counted on the delivery row, so a claim lost in a crash spends
 * no retry); after the last one the delivery is dead-lettered: an inbox item and an e-mail to the
 * workspace's admins (at most one per endpoint and admin per hour), in the transaction that records it.
 */
export function webhookDeliveryJob(
  options: DeliveryJobOptions,
): JobDefinition<repo.DeliveryPayload, repo.ClaimedDelivery, repo.AttemptResult> {
  const { webhooks, keys } = options;
  const failureMailWindowMs = options.failureMailWindowMs ?? FAILURE_MAIL_WINDOW_MS;
  const retryDelaysMs = webhooks.retryDelaysMs;
  // One attempt per delivery: the delivery schedule owns retries, and the per-endpoint cap bounds
  // what a failing endpoint costs, so no breaker (one endpoint's failures must never make another
  // endpoint's deliveries fail fast). The receiver's body is kept only for the error text.
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
  const secretOf = (blob: string, workspaceId: string, endpointId: string) => {
    let secret = secrets.get(blob);
    if (!secret) {
      secret = openSecret(keys, blob, workspaceId, endpointId);
      if (secrets.size > 10_000) secrets.clear();
      secrets.set(blob, secret);
    }
    return secret;
  };

  async function deliver(claimed: repo.ClaimedDelivery): Promise<repo.AttemptResult> {
    const attemptedAt = new Date();
    const base = {
      workspaceId: claimed.workspace_id,
      endpointId: claimed.endpoint_id,
      eventId: claimed.event_id,
      eventType: claimed.event_type,
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

  return defineJob({
    type: repo.DELIVERY_JOB.type,
    schema: repo.deliveryPayloadSchema,
    maxAttempts: repo.DELIVERY_JOB.maxAttempts,
    // The handler names each retry's delay (the delivery's schedule), so no backoff of the job's own.
    backoff: () => 0,
    leaseMs: options.leaseMs ?? webhooks.timeoutMs + 60_000,
    maxConcurrentPerKey: options.perEndpoint ?? DEFAULT_PER_ENDPOINT,
    // The delivery row and the attempt log are the record: a delivered job's row goes at once.
    keepDone: false,
    // A disabled endpoint's deliveries, and those of a workspace below Advanced, wait (no attempt used).
    keyEligible: repo.endpointAcceptsDeliveries,
    load: repo.loadDeliveries,
    settleMany: repo.recordAttempts,
    async handler(ctx, _payload, claimed) {
      const result = await deliver(claimed);
      ctx.record(result);
      if (result.outcome === 'success') return;
      // The attempt row keeps the receiver's words for the admin; the job's error is logged, so it says only
      // the status or the kind of failure (contract §1: logs never carry response bodies or addresses).
      const reason = loggableFailure(result);
      if (result.retryInSeconds === null) throw new PermanentJobError(reason);
      throw new RetryJobError(reason, result.retryInSeconds * 1000);
    },
    async onDead(tx, job) {
      const payload = repo.deliveryPayloadSchema.safeParse(job.payload);
      if (!payload.success || !job.workspaceId) return;
      const key = { workspaceId: job.workspaceId, ...payload.data };
      const dead = await repo.markDeliveryDead(tx, key, job.error);
      if (!dead) return;
      await postInboxNotice(tx, key.workspaceId, {
        kind: 'webhook.dead_lettered',
        endpointId: key.endpointId,
        eventId: key.eventId,
        eventType: dead.event_type,
        lastStatus: dead.last_status,
        message: dead.last_error ?? job.error,
      });
      // At most one e-mail per endpoint and admin in the window; the next one sums up the dead letters held back.
      const endpoint = await repo.findEndpoint(tx, key.workspaceId, key.endpointId);
      const recipients = (await adminEmails(tx, key.workspaceId)).map((e) => e.trim().toLowerCase());
      const due = await repo.claimFailureMails(tx, key.workspaceId, key.endpointId, recipients, failureMailWindowMs);
      const batches = new Map<string, repo.FailureMailDue[]>();
      for (const d of due) {
        const same = `${d.held}:${d.previousSentAt?.toISOString() ?? ''}`;
        batches.set(same, [...(batches.get(same) ?? []), d]);
      }
      for (const batch of batches.values()) {
        await enqueueMail(tx, key.workspaceId, {
          to: batch.map((d) => d.recipient),
          ...failureMail({
            endpointId: key.endpointId,
            url: endpoint?.url ?? null,
            description: endpoint?.description ?? null,
            eventId: key.eventId,
            eventType: dead.event_type,
            attempts: dead.attempts,
            lastStatus: dead.last_status,
            lastError: dead.last_error,
            link: options.appUrl ? `${options.appUrl()}/admin/webhooks/${encodeURIComponent(key.endpointId)}` : null,
            previousSentAt: batch[0].previousSentAt,
            held: batch[0].held,
            windowMs: failureMailWindowMs,
          }),
        });
      }
    },
  });
}

/**
 * The delivery worker: a job worker of its own for `webhooks.deliver` (the type is not in the shared
 * worker), with many deliveries in flight, since each mostly waits on a receiver.
 */
export function startWebhookWorker(options: WebhookWorkerOptions): Promise<Worker> {
  return startJobWorker({
    deps: options.deps,
    log: options.log,
    jobs: [webhookDeliveryJob({ appUrl: () => options.deps.selfUrl(), ...options })],
    concurrency: options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
    pollMs: options.pollMs,
    name: 'webhooks',
  });
}
