import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { decryptSecret, encryptSecret, type SecretKey, safeEqual } from '../crypto.js';
import { AppError } from '../errors.js';

/** What the `state` parameter carries through the provider's consent page and back. */
export interface AuthorizationState {
  workspaceId: string;
  userId: string;
  provider: string;
  /** The PKCE verifier; sealed inside the state, so the URL never shows it. */
  codeVerifier: string;
  /** The redirect_uri sent to the authorize endpoint (the token request must repeat it). */
  redirectUri: string;
  /** Where the app sends the user afterwards (a path of ours, chosen by the module). */
  returnTo?: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

const payloadSchema = z.object({
  w: z.string(),
  u: z.string(),
  p: z.string(),
  v: z.string(),
  r: z.string(),
  t: z.string().optional(),
  e: z.number(),
  n: z.string(),
});

export const invalidState = (detail = 'The authorization state is invalid or has expired; start connecting again') =>
  new AppError('invalid_state', 400, detail);

/** Keys for the state, derived from the encryption key so no other secret has to be configured. */
function stateKeys(encryptionKey: Buffer): { mac: Buffer; seal: SecretKey } {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', encryptionKey, Buffer.alloc(0), info, 32));
  return {
    mac: derive('atrium/oauth/state-mac/v1'),
    seal: { id: 'oauth-state', key: derive('atrium/oauth/state-seal/v1') },
  };
}

/**
 * `v1.<payload>.<HMAC-SHA256>` (base64url). The HMAC makes it tamper-evident; the PKCE verifier
 * inside is additionally sealed (AES-GCM), since the state travels through browser URLs and the
 * verifier must stay secret for PKCE to protect the code.
 */
export function signState(encryptionKey: Buffer, state: AuthorizationState): string {
  const keys = stateKeys(encryptionKey);
  const nonce = randomBytes(12).toString('base64url');
  const payload = {
    w: state.workspaceId,
    u: state.userId,
    p: state.provider,
    v: encryptSecret(keys.seal, state.codeVerifier, `oauth-state:${nonce}`),
    r: state.redirectUri,
    t: state.returnTo,
    e: state.expiresAt,
    n: nonce,
  };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `v1.${body}.${mac(keys.mac, body)}`;
}

/** The state's contents, or 400 `invalid_state` when it was altered, is from another key, or has expired. */
export function verifyState(encryptionKey: Buffer, text: string, now = Date.now()): AuthorizationState {
  const keys = stateKeys(encryptionKey);
  const [version, body, signature, extra] = String(text).split('.');
  if (version !== 'v1' || !body || !signature || extra !== undefined) throw invalidState();
  if (!safeEqual(signature, mac(keys.mac, body))) throw invalidState();
  let payload: z.infer<typeof payloadSchema>;
  try {
    payload = payloadSchema.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
  } catch {
    throw invalidState();
  }
  if (payload.e <= now) throw invalidState('The authorization state has expired; start connecting again');
  let codeVerifier: string;
  try {
    codeVerifier = decryptSecret([keys.seal], payload.v, `oauth-state:${payload.n}`);
  } catch {
    throw invalidState();
  }
  return {
    workspaceId: payload.w,
    userId: payload.u,
    provider: payload.p,
    codeVerifier,
    redirectUri: payload.r,
    returnTo: payload.t,
    expiresAt: payload.e,
  };
}

function mac(key: Buffer, body: string): string {
  return createHmac('sha256', key).update(`oauth-state.v1.${body}`).digest('base64url');
}
