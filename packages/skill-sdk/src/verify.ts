// Verification of Atrium's signed calls on the customer's endpoint: Standard Webhooks headers,
// HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{raw body}" with the whsec_ secret's key.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type HeaderBag = Record<string, string | string[] | undefined> | Headers;

export interface VerifyOptions {
  /** Reject timestamps further than this from now (default 300 s, as Atrium's contract requires). */
  toleranceSeconds?: number;
  now?: Date;
}

export class SignatureError extends Error {
  override readonly name = 'SignatureError';
  constructor(
    readonly reason: 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature',
    message: string,
  ) {
    super(message);
  }
}

function read(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const value = bag[name] ?? Object.entries(bag).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** Computes `v1,<base64 signature>` exactly as Atrium does. */
export function computeSignature(secret: string, id: string, timestamp: number | string, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Throws SignatureError unless the request was signed with `secret` within the tolerance.
 * Pass the raw body exactly as received (before JSON parsing). Returns the invocation id.
 */
export function verifyRequest(secret: string, headers: HeaderBag, rawBody: string, opts: VerifyOptions = {}): string {
  const id = read(headers, 'webhook-id');
  const timestamp = read(headers, 'webhook-timestamp');
  const signature = read(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) throw new SignatureError('missing_headers', 'Missing webhook-* headers');
  if (!/^\d{1,12}$/.test(timestamp)) throw new SignatureError('bad_timestamp', 'Invalid webhook-timestamp');
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (opts.toleranceSeconds ?? 300)) {
    throw new SignatureError('stale_timestamp', 'The request timestamp is too old or in the future');
  }
  const expected = Buffer.from(computeSignature(secret, id, timestamp, rawBody));
  const match = signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) throw new SignatureError('bad_signature', 'The signature does not match');
  return id;
}

/** Signs a body the way Atrium's dispatcher does (for the local harness and tests). */
export function signRequest(secret: string, id: string, rawBody: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signature = computeSignature(secret, id, timestamp, rawBody);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
    'x-service-timestamp': String(timestamp),
    'x-service-signature': signature,
  };
}
