import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface SecretKey {
  id: string;
  key: Buffer;
}

/**
 * AES-256-GCM with a key id, so keys can rotate: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url).
 * `aad` binds the ciphertext to its owner (e.g. workspace id) so rows can't be swapped.
 */
export function encryptSecret(key: SecretKey, plaintext: string, aad = ''): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return ['v1', key.id, iv.toString('base64url'), tag.toString('base64url'), body.toString('base64url')].join('.');
}

export function decryptSecret(keys: SecretKey[], blob: string, aad = ''): string {
  const [version, keyId, iv, tag, body] = blob.split('.');
  if (version !== 'v1' || !body) throw new Error('Unrecognised secret format');
  const key = keys.find((k) => k.id === keyId);
  if (!key) throw new Error(`Unknown secret key id ${keyId}`);
  const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
