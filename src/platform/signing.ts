// Signing of outbound calls to customer endpoints (webhooks, private skills), contract §7.2:
// Standard Webhooks headers plus the X-Service-* pair, HMAC-SHA256 over "{id}.{timestamp}.{body}".
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
/** Receivers reject timestamps further than this from their clock (contract §7.2: 5 minutes). */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

/** A new signing secret: `whsec_` + base64 of 32 random bytes. Show it once, store it encrypted. */
export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key: the base64-decoded part after `whsec_` (a bare base64 string is accepted too). */
export function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('The signing secret is empty');
  return key;
}

/** `v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  const mac = createHmac('sha256', signingKey(secret));
  mac.update(`${id}.${timestampSeconds}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

export interface SignedHeaders {
  'content-type': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'x-service-timestamp': string;
  'x-service-signature': string;
  [name: string]: string;
}

/** Every header a signed request carries; the Standard Webhooks and X-Service pairs are identical in value. */
export function signedHeaders(
  secret: string,
  id: string,
  body: string | Buffer,
  now: Date = new Date(),
): SignedHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signature = signPayload(secret, id, timestamp, body);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
    'x-service-timestamp': String(timestamp),
    'x-service-signature': signature,
  };
}

export type VerifyFailure = 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature';

export interface VerifyResult {
  ok: boolean;
  reason?: VerifyFailure;
}

/**
 * Verifies a signed request (receiver side; used by tests and the Skill SDK's mirror of it).
 * `webhook-signature` may carry several space-separated `v1,<sig>` entries (key rotation).
 */
export function verifySignedRequest(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string | Buffer,
  opts: { toleranceSeconds?: number; now?: Date } = {},
): VerifyResult {
  const header = (name: string) => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'bad_timestamp' };
  const seconds = Number(timestamp);
  const nowSeconds = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - seconds) > (opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    return { ok: false, reason: 'stale_timestamp' };
  }
  const expected = Buffer.from(signPayload(secret, id, seconds, body));
  for (const candidate of signatures.split(' ')) {
    const given = Buffer.from(candidate);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'bad_signature' };
}
