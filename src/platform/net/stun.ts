// STUN Binding (RFC 5389) over UDP: the request a relay probe sends to a STUN or TURN server, and
// the success response a responder gives (XOR-MAPPED-ADDRESS + FINGERPRINT). Only the Binding
// method is spoken: it is all a reachability check needs, and TURN servers (coturn) answer it too.
// Written here rather than taken from the `stun` package, whose dependencies (`ip`, `parse-url`)
// carry published advisories; the wire format is small and checked against RFC 5769's vectors.
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import { performance } from 'node:perf_hooks';
import { crc32 } from 'node:zlib';

export const MAGIC_COOKIE = 0x2112a442;
const HEADER = 20;
const BINDING_REQUEST = 0x0001;
const BINDING_SUCCESS = 0x0101;
const BINDING_ERROR = 0x0111;
const ATTR = {
  MAPPED_ADDRESS: 0x0001,
  ERROR_CODE: 0x0009,
  XOR_MAPPED_ADDRESS: 0x0020,
  SOFTWARE: 0x8022,
  FINGERPRINT: 0x8028,
} as const;
const FINGERPRINT_XOR = 0x5354554e;

export interface StunMessage {
  type: number;
  transactionId: Buffer;
  attributes: { type: number; value: Buffer }[];
}

export interface MappedAddress {
  family: 'IPv4' | 'IPv6';
  address: string;
  port: number;
}

const pad4 = (n: number) => (n + 3) & ~3;

function attribute(type: number, value: Buffer): Buffer {
  const out = Buffer.alloc(4 + pad4(value.length));
  out.writeUInt16BE(type, 0);
  out.writeUInt16BE(value.length, 2);
  value.copy(out, 4);
  return out;
}

/** Header + attributes, with a FINGERPRINT attribute last (its length counted in the header first). */
function encode(type: number, transactionId: Buffer, attrs: Buffer[], fingerprint: boolean): Buffer {
  const body = Buffer.concat(attrs);
  const header = Buffer.alloc(HEADER);
  header.writeUInt16BE(type, 0);
  header.writeUInt16BE(body.length + (fingerprint ? 8 : 0), 2);
  header.writeUInt32BE(MAGIC_COOKIE, 4);
  transactionId.copy(header, 8);
  const message = Buffer.concat([header, body]);
  if (!fingerprint) return message;
  const value = Buffer.alloc(4);
  value.writeUInt32BE((crc32(message) ^ FINGERPRINT_XOR) >>> 0, 0);
  return Buffer.concat([message, attribute(ATTR.FINGERPRINT, value)]);
}

/** A Binding request with a fresh 96-bit transaction id. */
export function bindingRequest(transactionId: Buffer = randomBytes(12)): Buffer {
  return encode(BINDING_REQUEST, transactionId, [], true);
}

/**
 * Reads a STUN message, or undefined for anything that is not one (RFC 5389 §7.3: leading zero
 * bits, the magic cookie, a length that matches the datagram, well-formed attributes, and a
 * FINGERPRINT that matches when present).
 */
export function parseStun(buf: Buffer): StunMessage | undefined {
  if (buf.length < HEADER || (buf[0] & 0xc0) !== 0) return undefined;
  const length = buf.readUInt16BE(2);
  if (length % 4 !== 0 || HEADER + length !== buf.length || buf.readUInt32BE(4) !== MAGIC_COOKIE) return undefined;
  const attributes: StunMessage['attributes'] = [];
  let at = HEADER;
  while (at < buf.length) {
    if (at + 4 > buf.length) return undefined;
    const type = buf.readUInt16BE(at);
    const len = buf.readUInt16BE(at + 2);
    if (at + 4 + len > buf.length) return undefined;
    if (type === ATTR.FINGERPRINT) {
      const expected = (crc32(buf.subarray(0, at)) ^ FINGERPRINT_XOR) >>> 0;
      if (len !== 4 || buf.readUInt32BE(at + 4) !== expected || at + 8 !== buf.length) return undefined;
    }
    attributes.push({ type, value: buf.subarray(at + 4, at + 4 + len) });
    at += 4 + pad4(len);
  }
  return { type: buf.readUInt16BE(0), transactionId: Buffer.from(buf.subarray(8, HEADER)), attributes };
}

/** The XOR-MAPPED-ADDRESS value for an address (RFC 5389 §15.2). */
function xorAddress(mapped: MappedAddress, transactionId: Buffer): Buffer {
  const v6 = mapped.family === 'IPv6';
  const out = Buffer.alloc(v6 ? 20 : 8);
  out.writeUInt8(v6 ? 0x02 : 0x01, 1);
  out.writeUInt16BE(mapped.port ^ (MAGIC_COOKIE >>> 16), 2);
  const key = Buffer.alloc(16);
  key.writeUInt32BE(MAGIC_COOKIE, 0);
  transactionId.copy(key, 4);
  const raw = v6 ? ipv6Bytes(mapped.address) : Buffer.from(mapped.address.split('.').map(Number));
  for (let i = 0; i < raw.length; i++) out[4 + i] = raw[i] ^ key[i];
  return out;
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const part = (s: string) => (s ? s.split(':') : []);
  const groups = [...part(head), ...Array(8 - part(head).length - part(tail).length).fill('0'), ...part(tail)];
  const out = Buffer.alloc(16);
  for (const [i, g] of groups.entries()) out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  return out;
}

/** Reads XOR-MAPPED-ADDRESS (or the legacy MAPPED-ADDRESS) from a message. */
export function mappedAddress(message: StunMessage): MappedAddress | undefined {
  const xor = message.attributes.find((a) => a.type === ATTR.XOR_MAPPED_ADDRESS);
  const plain = message.attributes.find((a) => a.type === ATTR.MAPPED_ADDRESS);
  const attr = xor ?? plain;
  if (!attr || attr.value.length < 8) return undefined;
  const family = attr.value[1] === 0x02 ? 'IPv6' : 'IPv4';
  const size = family === 'IPv6' ? 16 : 4;
  if (attr.value.length < 4 + size) return undefined;
  const key = Buffer.alloc(16);
  key.writeUInt32BE(MAGIC_COOKIE, 0);
  message.transactionId.copy(key, 4);
  const bytes = Buffer.from(attr.value.subarray(4, 4 + size).map((b, i) => (xor ? b ^ key[i] : b)));
  const port = attr.value.readUInt16BE(2) ^ (xor ? MAGIC_COOKIE >>> 16 : 0);
  const address =
    family === 'IPv4'
      ? [...bytes].join('.')
      : Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(':');
  return { family, address, port };
}

/** The success response to a Binding request from `from` (what a STUN server answers). */
export function bindingSuccess(transactionId: Buffer, from: MappedAddress, software = 'Atrium STUN'): Buffer {
  return encode(
    BINDING_SUCCESS,
    transactionId,
    [
      attribute(ATTR.XOR_MAPPED_ADDRESS, xorAddress(from, transactionId)),
      attribute(ATTR.SOFTWARE, Buffer.from(software)),
    ],
    true,
  );
}

/**
 * The error response to a Binding request (RFC 5389 §15.6): ERROR-CODE as class (hundreds) and
 * number, with a reason phrase. A server that cannot serve answers this instead of staying silent.
 */
export function bindingError(transactionId: Buffer, code: number, reason: string): Buffer {
  const value = Buffer.concat([Buffer.from([0, 0, Math.floor(code / 100) & 0x07, code % 100]), Buffer.from(reason)]);
  return encode(BINDING_ERROR, transactionId, [attribute(ATTR.ERROR_CODE, value)], true);
}

/** The ERROR-CODE of an error response: `code` (300–699) and its reason. */
function errorCode(message: StunMessage): { code: number; reason: string } | undefined {
  const value = message.attributes.find((a) => a.type === ATTR.ERROR_CODE)?.value;
  if (!value || value.length < 4) return undefined;
  return { code: (value[2] & 0x07) * 100 + value[3], reason: value.subarray(4).toString('utf8') };
}

/** `stun:host[:port]` / `turn:host[:port][?transport=udp]` → host and port (3478 by default). */
export function parseStunUrl(url: string): { host: string; port: number } {
  const m = /^(?:stun|turn):(\[[0-9a-fA-F:.]+\]|[^:?/\s]+)(?::(\d{1,5}))?(?:\?transport=udp)?$/i.exec(url.trim());
  const port = m?.[2] ? Number(m[2]) : 3478;
  if (!m || port < 1 || port > 65535) throw new Error(`Not a stun:/turn: URL over UDP: ${url}`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

/**
 * One Binding transaction against a STUN/TURN server: retransmits (RFC 5389 §7.2.1, RTO 250 ms
 * doubling) until a matching success response or the timeout; resolves with the mapped address
 * and the round trip of the answered attempt.
 */
export async function stunBinding(
  url: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<MappedAddress & { rttMs: number }> {
  const { host, port } = parseStunUrl(url);
  const timeoutMs = options.timeoutMs ?? 3_000;
  const socket = dgram.createSocket(isIPv6(host) ? 'udp6' : 'udp4');
  const transactionId = randomBytes(12);
  const request = bindingRequest(transactionId);
  return new Promise((resolve, reject) => {
    const timers: NodeJS.Timeout[] = [];
    let sentAt = performance.now();
    const finish = (err?: Error, value?: MappedAddress & { rttMs: number }) => {
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener('abort', onAbort);
      socket.close();
      if (err) reject(err);
      else resolve(value!);
    };
    const onAbort = () => finish(new Error('STUN binding aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (err) => finish(err));
    socket.on('message', (buf) => {
      const message = parseStun(buf);
      if (!message?.transactionId.equals(transactionId)) return;
      if (message.type === BINDING_ERROR) {
        const error = errorCode(message);
        return finish(new Error(`STUN binding refused: ${error ? `${error.code} ${error.reason}` : 'no error code'}`));
      }
      if (message.type !== BINDING_SUCCESS) return;
      const mapped = mappedAddress(message);
      if (!mapped) return finish(new Error('STUN success response without a mapped address'));
      finish(undefined, { ...mapped, rttMs: Math.round((performance.now() - sentAt) * 10) / 10 });
    });
    const send = () => {
      sentAt = performance.now();
      socket.send(request, port, host);
    };
    send();
    for (let rto = 250, at = 250; at < timeoutMs; rto *= 2, at += rto) timers.push(setTimeout(send, at));
    timers.push(
      setTimeout(() => finish(new Error(`No STUN answer from ${host}:${port} in ${timeoutMs} ms`)), timeoutMs),
    );
  });
}

export interface StunResponder {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A STUN server answering Binding requests on UDP (what the video emulator runs). Anything that
 * is not a well-formed Binding request is dropped without an answer. `fault()` lets a caller make
 * it fail one request: `'drop'` (an unreachable relay: no answer) or an error code (a relay that
 * answers with a Binding error response, e.g. 500).
 */
export async function startStunResponder(
  options: { host?: string; port?: number; fault?: () => 'drop' | number | undefined } = {},
): Promise<StunResponder> {
  const host = options.host ?? '127.0.0.1';
  const socket = dgram.createSocket(isIPv6(host) ? 'udp6' : 'udp4');
  socket.on('message', (buf, rinfo) => {
    const message = parseStun(buf);
    if (!message || message.type !== BINDING_REQUEST) return;
    const fault = options.fault?.();
    if (fault === 'drop') return;
    if (fault !== undefined) {
      const code = fault >= 300 && fault <= 699 ? fault : 500;
      socket.send(bindingError(message.transactionId, code, 'Server Error'), rinfo.port, rinfo.address);
      return;
    }
    const from: MappedAddress = {
      family: rinfo.family === 'IPv6' ? 'IPv6' : 'IPv4',
      address: rinfo.address,
      port: rinfo.port,
    };
    socket.send(bindingSuccess(message.transactionId, from), rinfo.port, rinfo.address);
  });
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(options.port ?? 0, host, () => resolve());
  });
  const port = socket.address().port;
  return {
    url: `stun:${isIPv6(host) ? `[${host}]` : host}:${port}`,
    port,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
