// Stateless OAuth artefacts of the calendar emulators: authorization codes, access and refresh
// tokens are HMAC-signed JSON, so they survive a restart of the product. What must be remembered
// (the expire-tokens generation, revoked refresh tokens) lives in the emulator's `__oauth` document.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type EmulatorName = 'google' | 'microsoft' | 'zoom';

const KEY = (emulator: EmulatorName) => `atrium-emulator:${emulator}:v1`;
export const ACCESS_TTL_SECS = 3600;

interface Signed {
  /** kind: a = access, r = refresh, c = code */
  k: 'a' | 'r' | 'c';
  e: string;
  /** expires, epoch ms */
  x: number;
  /** generation of access tokens (expire-tokens bumps it) */
  g?: number;
  /** nonce */
  n: string;
  /** code only: redirect_uri and PKCE challenge */
  r?: string;
  c?: string;
}

function sign(emulator: EmulatorName, body: Signed): string {
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  const mac = createHmac('sha256', KEY(emulator)).update(payload).digest('base64url');
  return `${emulator.slice(0, 2)}.${payload}.${mac}`;
}

export function verify(emulator: EmulatorName, token: string, kind: Signed['k']): Signed | undefined {
  const [, payload, mac] = token.split('.');
  if (!payload || !mac || token.length > 4000) return undefined;
  const expected = createHmac('sha256', KEY(emulator)).update(payload).digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Signed;
    if (body.k !== kind || typeof body.e !== 'string' || body.x < Date.now()) return undefined;
    return body;
  } catch {
    return undefined;
  }
}

const nonce = () => randomBytes(9).toString('base64url');

export function issueCode(emulator: EmulatorName, email: string, redirectUri: string, challenge: string): string {
  return sign(emulator, { k: 'c', e: email, x: Date.now() + 10 * 60_000, n: nonce(), r: redirectUri, c: challenge });
}

export function issueTokens(emulator: EmulatorName, email: string, generation: number, withRefresh = true) {
  return {
    access_token: sign(emulator, {
      k: 'a',
      e: email,
      x: Date.now() + ACCESS_TTL_SECS * 1000,
      g: generation,
      n: nonce(),
    }),
    refresh_token: withRefresh
      ? sign(emulator, { k: 'r', e: email, x: Date.now() + 180 * 24 * 3600_000, n: nonce() })
      : undefined,
    expires_in: ACCESS_TTL_SECS - 1,
  };
}

/** Tokens for the demo seed, which connects accounts without a browser (generation 0: a fresh emulator). */
export function mintEmulatorTokens(emulator: 'google' | 'microsoft', email: string) {
  const t = issueTokens(emulator, email.toLowerCase(), 0);
  return { access_token: t.access_token, refresh_token: t.refresh_token as string, expires_in: t.expires_in };
}

/** An unsigned JWT-shaped id_token (the emulators' consumers read the e-mail claim). */
export function idToken(issuer: string, audience: string, email: string, extra: Record<string, unknown> = {}): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return [
    part({ alg: 'none', typ: 'JWT' }),
    part({ iss: issuer, aud: audience, sub: email, email, email_verified: true, iat: now, exp: now + 3600, ...extra }),
    '',
  ].join('.');
}
