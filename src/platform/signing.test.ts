import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateSigningSecret, signedHeaders, signPayload, verifySignedRequest } from './signing.js';

describe('request signing (contract §7.2)', () => {
  it('generates whsec_ secrets of 32 random bytes', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateSigningSecret()).not.toBe(secret);
  });

  it('signs "{id}.{timestamp}.{body}" with the decoded key', () => {
    const secret = `whsec_${Buffer.from('k'.repeat(32)).toString('base64')}`;
    const body = '{"a":1}';
    const expected = createHmac('sha256', Buffer.from('k'.repeat(32)))
      .update(`msg_1.1700000000.${body}`)
      .digest('base64');
    expect(signPayload(secret, 'msg_1', 1700000000, body)).toBe(`v1,${expected}`);
  });

  it('produces headers a Standard Webhooks library verifies', () => {
    const secret = generateSigningSecret();
    const body = JSON.stringify({ event_id: 'evt_1', type: 'patient.created' });
    const headers = signedHeaders(secret, 'evt_1', body);
    expect(headers['x-service-signature']).toBe(headers['webhook-signature']);
    expect(headers['x-service-timestamp']).toBe(headers['webhook-timestamp']);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('verifies its own signatures and rejects tampering, wrong keys and stale timestamps', () => {
    const secret = generateSigningSecret();
    const body = '{"tool":"x"}';
    const headers = signedHeaders(secret, 'inv_1', body);
    expect(verifySignedRequest(secret, headers, body)).toEqual({ ok: true });
    expect(verifySignedRequest(secret, headers, '{"tool":"y"}').reason).toBe('bad_signature');
    expect(verifySignedRequest(generateSigningSecret(), headers, body).reason).toBe('bad_signature');
    expect(verifySignedRequest(secret, {}, body).reason).toBe('missing_headers');
    const old = signedHeaders(secret, 'inv_1', body, new Date(Date.now() - 6 * 60 * 1000));
    expect(verifySignedRequest(secret, old, body).reason).toBe('stale_timestamp');
    // Several signatures (key rotation): any one matching is enough.
    const rotated = { ...headers, 'webhook-signature': `v1,AAAA ${headers['webhook-signature']}` };
    expect(verifySignedRequest(secret, rotated, body).ok).toBe(true);
  });
});
