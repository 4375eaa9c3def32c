// Stripe's wire protocol, the part Atrium speaks: Checkout Sessions (form-encoded, bearer secret
// key) and webhook signatures (`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`,
// five minutes of tolerance, any of several v1 values may match).
import { createHmac } from 'node:crypto';
import { safeEqual } from '../../platform/crypto.js';
import type { AppDeps } from '../../platform/types.js';

/** The emulator's signing secret (only ever used against the local emulator). */
export const EMULATOR_WEBHOOK_SECRET = 'whsec_atrium_local_payments_emulator';
export const EMULATOR_SECRET_KEY = 'sk_test_atrium_local_payments_emulator';
export const TOLERANCE_S = 300;

export interface PaymentsProvider {
  apiBase: string;
  secretKey: string;
  webhookSecret: string;
}

/** Stripe when configured, the emulator when emulators are on, else undefined (payments answer unavailable). */
export function resolvePayments(deps: AppDeps): PaymentsProvider | undefined {
  const stripe = deps.config.stripe;
  if (stripe) return { apiBase: 'https://api.stripe.com', ...stripe };
  if (deps.config.emulators) {
    return {
      apiBase: `${deps.selfUrl()}/_emulators/payments`,
      secretKey: EMULATOR_SECRET_KEY,
      webhookSecret: EMULATOR_WEBHOOK_SECRET,
    };
  }
  return undefined;
}

export function signPayload(secret: string, timestamp: number, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** Whether the header carries a v1 signature of this body within the tolerance (constant-time). */
export function verifyStripeSignature(
  header: string | undefined,
  body: Buffer,
  secret: string,
  nowS = Date.now() / 1000,
): boolean {
  if (!header || header.length > 2000) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowS - t) > TOLERANCE_S) return false;
  const expected = signPayload(secret, t, body);
  return parts.filter(([k]) => k === 'v1').some(([, v]) => typeof v === 'string' && safeEqual(v, expected));
}
