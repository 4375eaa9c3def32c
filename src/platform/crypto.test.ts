import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decryptSecret, encryptSecret } from './crypto.js';
import { newId } from './ids.js';

describe('secrets at rest', () => {
  const k1 = { id: 'k1', key: randomBytes(32) };
  const k2 = { id: 'k2', key: randomBytes(32) };

  it('round-trips with the key id and refuses tampering or another owner', () => {
    const blob = encryptSecret(k1, 'refresh-token-value', 'ws_a');
    expect(blob.startsWith('v1.k1.')).toBe(true);
    expect(blob).not.toContain('refresh-token-value');
    expect(decryptSecret([k2, k1], blob, 'ws_a')).toBe('refresh-token-value');
    expect(() => decryptSecret([k1], blob, 'ws_b')).toThrow();
    const parts = blob.split('.');
    parts[4] = Buffer.from('x').toString('base64url') + parts[4].slice(2);
    expect(() => decryptSecret([k1], parts.join('.'), 'ws_a')).toThrow();
    expect(() => decryptSecret([k2], blob, 'ws_a')).toThrow(/Unknown secret key id/);
  });

  it('encrypts the same text differently every time', () => {
    expect(encryptSecret(k1, 'same')).not.toBe(encryptSecret(k1, 'same'));
  });
});

describe('ids', () => {
  it('are prefixed and sort by creation time', () => {
    const ids = Array.from({ length: 200 }, () => newId('evt'));
    expect(ids.every((id) => /^evt_[0-9a-z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
