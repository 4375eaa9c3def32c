// What the adapters share: HMAC checks in constant time, JSON parsed without losing large integers,
// header reads, and the one upstream per provider.
import { createHmac } from 'node:crypto';
import { parse as parseLossless } from 'lossless-json';
import {
  createUpstream,
  type UpstreamConfig,
  UpstreamError,
  type UpstreamResponse,
} from '../../../platform/upstream/index.js';
import { SendFailed, type WebhookRequest } from './types.js';

export const hmacHex = (algorithm: 'sha256' | 'sha1', key: string, data: Buffer | string) =>
  createHmac(algorithm, key).update(data).digest('hex');

export function header(request: WebhookRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Integers beyond 2^53 stay exact (as bigint); everything else is an ordinary number. */
const exactNumber = (text: string): number | bigint => {
  const n = Number(text);
  return /^-?\d+$/.test(text) && !Number.isSafeInteger(n) ? BigInt(text) : n;
};

export class MalformedPayload extends Error {}

/** JSON without losing precision; a malformed body, duplicate keys or a non-object root throw MalformedPayload. */
export function parseJsonExact(raw: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseLossless(raw.toString('utf8'), null, exactNumber);
  } catch {
    throw new MalformedPayload('The body is not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new MalformedPayload('The body is not a JSON object');
  return value as Record<string, unknown>;
}

/** A provider id as the exact string (numbers and bigints both). */
export const idText = (value: unknown): string => (typeof value === 'bigint' ? value.toString() : String(value));

/**
 * A reply is sent while someone waits at the reply box: a provider's rate limit is waited for only up
 * to this long; a longer one answers `failed` at once, in the provider's words, and the inbox offers Retry.
 */
export const SEND_RETRY_AFTER_CAP_MS = 3_000;

export const upstreamFor = (name: string, options: Pick<UpstreamConfig, 'retryAfterFromBody'> = {}) =>
  createUpstream({
    name: `channels:${name}`,
    timeoutMs: 10_000,
    retries: 2,
    retryAfterCapMs: SEND_RETRY_AFTER_CAP_MS,
    breaker: { consecutiveFailures: 5 },
    ...options,
  });

/** A send call's outcome: the provider's JSON on 2xx, else SendFailed with its words. */
export async function sendCall<T>(
  call: () => Promise<UpstreamResponse>,
  describe: (status: number, body: unknown) => string,
  /** Parse large integers exactly (Viber's message tokens). */
  exact = false,
): Promise<T> {
  let response: UpstreamResponse;
  try {
    response = await call();
  } catch (err) {
    if (err instanceof UpstreamError) throw new SendFailed(`The provider could not be reached (${err.kind})`);
    throw err;
  }
  let body: unknown;
  try {
    body = exact ? parseJsonExact(response.body) : response.json();
  } catch {
    body = response.text().slice(0, 300);
  }
  if (!response.ok) throw new SendFailed(describe(response.status, body));
  return body as T;
}
