// STUN Binding codec against RFC 5769's test vectors, and a real UDP round trip to the responder.
import dgram from 'node:dgram';
import { describe, expect, it } from 'vitest';
import {
  bindingRequest,
  bindingSuccess,
  mappedAddress,
  parseStun,
  parseStunUrl,
  startStunResponder,
  stunBinding,
} from './stun.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// RFC 5769 §2.2 and §2.3: sample responses (SOFTWARE, XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY, FINGERPRINT).
const RFC5769_IPV4 = hex(`0101003c 2112a442 b7e7a701 bc34d686 fa87dfae 8022000b 74657374 20766563 746f7220
  00200008 0001a147 e112a643 00080014 2b91f599 fd9e90c3 8c7489f9 2af9ba53 f06be7d7 80280004 c07d4c96`);
const RFC5769_IPV6 = hex(`01010048 2112a442 b7e7a701 bc34d686 fa87dfae 8022000b 74657374 20766563 746f7220
  00200014 0002a147 0113a9fa a5d3f179 bc25f4b5 bed2b9d9 00080014 a382954e 4be67bf1 1784c97c 8292c275 bfe3ed41
  80280004 c8fb0b4c`);

describe('STUN codec (RFC 5389)', () => {
  it("reads RFC 5769's sample responses, fingerprint checked", () => {
    expect(mappedAddress(parseStun(RFC5769_IPV4)!)).toEqual({ family: 'IPv4', address: '192.0.2.1', port: 32853 });
    expect(mappedAddress(parseStun(RFC5769_IPV6)!)).toEqual({
      family: 'IPv6',
      address: '2001:db8:1234:5678:11:2233:4455:6677',
      port: 32853,
    });
  });

  it('rejects a wrong fingerprint, a wrong cookie, a short or lying length, and non-STUN bytes', () => {
    const badFingerprint = Buffer.from(RFC5769_IPV4);
    badFingerprint[badFingerprint.length - 1] ^= 1;
    const badCookie = Buffer.from(RFC5769_IPV4);
    badCookie[4] = 0;
    const lying = Buffer.from(RFC5769_IPV4);
    lying.writeUInt16BE(0x0040, 2);
    for (const bytes of [
      badFingerprint,
      badCookie,
      lying,
      RFC5769_IPV4.subarray(0, 19),
      Buffer.from('GET / HTTP/1.1'),
    ]) {
      expect(parseStun(bytes)).toBeUndefined();
    }
  });

  it('writes a response whose XOR-MAPPED-ADDRESS and fingerprint read back', () => {
    const transactionId = Buffer.alloc(12, 7);
    const request = parseStun(bindingRequest(transactionId))!;
    expect(request.type).toBe(0x0001);
    expect(request.transactionId).toEqual(transactionId);
    for (const from of [
      { family: 'IPv4' as const, address: '203.0.113.9', port: 54321 },
      { family: 'IPv6' as const, address: '2001:db8:0:0:0:0:0:1', port: 3478 },
    ]) {
      const response = parseStun(bindingSuccess(transactionId, from))!;
      expect(response.type).toBe(0x0101);
      expect(mappedAddress(response)).toEqual(from);
    }
  });

  it('parses stun: and turn: URLs (default port 3478) and refuses others', () => {
    expect(parseStunUrl('stun:relay.example')).toEqual({ host: 'relay.example', port: 3478 });
    expect(parseStunUrl('turn:10.0.0.2:5349?transport=udp')).toEqual({ host: '10.0.0.2', port: 5349 });
    expect(parseStunUrl('stun:[::1]:3479')).toEqual({ host: '::1', port: 3479 });
    for (const bad of ['http://relay.example', 'stun:', 'turn:host:99999', 'turn:host?transport=tcp']) {
      expect(() => parseStunUrl(bad)).toThrow();
    }
  });
});

describe('STUN over UDP', () => {
  it('a relay that refuses answers a Binding error response, and the client says so at once', async () => {
    const responder = await startStunResponder({ fault: () => 503 });
    try {
      const started = performance.now();
      await expect(stunBinding(responder.url, { timeoutMs: 5_000 })).rejects.toThrow(
        /STUN binding refused: 503 Server Error/,
      );
      // It did not wait out the retransmissions (0, 250, 750 ms) or the timeout.
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      await responder.close();
    }
  });

  it('a Binding transaction gets our own address back; garbage gets no answer and does not stop the responder', async () => {
    let dropNext = false;
    const responder = await startStunResponder({
      fault: () => {
        const d = dropNext;
        dropNext = false;
        return d ? 'drop' : undefined;
      },
    });
    try {
      const garbage = dgram.createSocket('udp4');
      await new Promise<void>((r) =>
        garbage.send(Buffer.from('\0\0\0\0not stun'), responder.port, '127.0.0.1', () => r()),
      );
      garbage.close();
      const answer = await stunBinding(responder.url, { timeoutMs: 2_000 });
      expect(answer).toMatchObject({ family: 'IPv4', address: '127.0.0.1' });
      expect(answer.port).toBeGreaterThan(0);
      // One dropped request: the client retransmits and still gets an answer.
      dropNext = true;
      expect((await stunBinding(responder.url, { timeoutMs: 2_000 })).address).toBe('127.0.0.1');
    } finally {
      await responder.close();
    }
  });

  it('times out against a port where nothing answers', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', () => r()));
    const port = silent.address().port;
    await expect(stunBinding(`stun:127.0.0.1:${port}`, { timeoutMs: 600 })).rejects.toThrow(/No STUN answer/);
    silent.close();
  });
});
