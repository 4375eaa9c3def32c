// Which IP addresses outbound calls (webhooks, custom skills) may reach: contract §7.3.
// Allow-list thinking: only what ipaddr.js classifies as public 'unicast' passes; every other
// range (private, loopback, reserved, documentation, …) is refused, so a range we forgot to
// name is refused too. IPv6 forms that carry an IPv4 address are judged by that address.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Address = IPv4 | IPv6;
type Cidr = [Address, number];

// Hex-only constants: safe for ipaddr.js to parse directly.
const cidr = (text: string): Cidr => ipaddr.parseCIDR(text);

// Public-looking unicast that is still a cloud platform endpoint. (AWS/GCP/Azure IMDS at
// 169.254.169.254, Alibaba 100.100.100.200, Oracle 192.0.0.192 and AWS fd00:ec2::254 already
// fall in blocked ranges.)
const EXTRA_BLOCKED_V4: Array<[Cidr, string]> = [[cidr('168.63.129.16/32'), 'cloudMetadata']]; // Azure WireServer

// IANA's global unicast space; ipaddr.js calls the unassigned rest of ::/0 'unicast' too.
const GLOBAL_UNICAST_V6 = cidr('2000::/3');

// Prefixes whose addresses carry an IPv4 address, and where it sits (byte offsets).
const MAPPED = cidr('::ffff:0:0/96'); // ::ffff:a.b.c.d
const TRANSLATED = cidr('::ffff:0:0:0/96'); // RFC 6145 ::ffff:0:a.b.c.d
const COMPATIBLE = cidr('::/96'); // deprecated ::a.b.c.d
const NAT64_WELL_KNOWN = cidr('64:ff9b::/96'); // RFC 6052: only ever used with /96
const NAT64_LOCAL = cidr('64:ff9b:1::/48'); // RFC 8215 local-use, operator picks the length
const SIX_TO_FOUR = cidr('2002::/16'); // 2002:AABB:CCDD::/48
const TEREDO = cidr('2001::/32'); // 2001:0:server(32):flags:port:~client(32)

// RFC 6052 §2.2 byte positions of the IPv4 address for the prefix lengths possible inside
// 64:ff9b:1::/48 (byte 8 is the reserved 'u' octet and is skipped).
const NAT64_LOCAL_LAYOUTS = [
  [6, 7, 9, 10], // /48
  [7, 9, 10, 11], // /56
  [9, 10, 11, 12], // /64
  [12, 13, 14, 15], // /96
];

interface Embedded {
  via: string;
  address: IPv4;
}

/** True when outbound connections to `ip` must be refused. Unparseable input is blocked. */
export function isBlockedAddress(ip: string, allowCidrs: readonly string[] = []): boolean {
  return blockedReasonFor(ip, allowCidrs) !== null;
}

/**
 * Why `ip` is blocked (an ipaddr.js range name such as 'loopback' or 'private', prefixed with
 * the embedding for IPv6 forms, e.g. 'ipv4Mapped:loopback'), or null when it may be reached.
 * Ranges in `allowCidrs` are exempt, including IPv4 ranges reached through an IPv6 embedding.
 */
export function blockedReasonFor(ip: string, allowCidrs: readonly string[] = []): string | null {
  const address = parseAddress(ip);
  if (!address) return 'invalid';
  const reason = reasonFor(address, compileAllowList(allowCidrs));
  // A zone id only makes sense on link-local addresses (blocked anyway); refuse it elsewhere too.
  return reason ?? (ip.includes('%') ? 'zoneId' : null);
}

/**
 * Splits and validates an allow-list such as ATRIUM_WEBHOOK_ALLOW_CIDRS (`127.0.0.0/8,::1/128`;
 * a bare address means that one address). Throws on an invalid entry so config fails fast.
 */
export function parseAllowCidrs(value: string | readonly string[]): string[] {
  const items = typeof value === 'string' ? value.split(/[\s,]+/) : value;
  const cidrs = items.map((item) => item.trim()).filter((item) => item !== '');
  for (const item of cidrs) parseCidrEntry(item);
  return cidrs;
}

function parseAddress(ip: string): Address | null {
  // net.isIP accepts only canonical dotted-quad IPv4 and real IPv6: ipaddr.js alone would also
  // read '0x7f.1' or '127.1', which callers must normalise (WHATWG URL does) before asking.
  const version = typeof ip === 'string' ? isIP(ip) : 0;
  try {
    if (version === 4) return ipaddr.IPv4.parse(ip);
    if (version !== 6) return null;
    // ipaddr.js reads '::a.b.c.d' as '::ffff:a.b.c.d', unlike the socket API. Rewriting through
    // the URL parser (hex groups only, zone id dropped) makes us judge the bytes we connect to.
    const bare = ip.split('%')[0];
    return ipaddr.IPv6.parse(new URL(`http://[${bare}]`).hostname.slice(1, -1));
  } catch {
    return null;
  }
}

function reasonFor(address: Address, allow: readonly Cidr[]): string | null {
  if (isAllowListed(address, allow)) return null;
  return address.kind() === 'ipv4' ? ipv4Reason(address as IPv4) : ipv6Reason(address as IPv6, allow);
}

function ipv4Reason(address: IPv4): string | null {
  const range = address.range();
  if (range !== 'unicast') return range;
  for (const [blocked, name] of EXTRA_BLOCKED_V4) if (address.match(blocked)) return name;
  return null;
}

function ipv6Reason(address: IPv6, allow: readonly Cidr[]): string | null {
  const range = address.range();
  // '::' and '::1' sit inside the IPv4-compatible prefix; they are not IPv4 addresses.
  if (range === 'unspecified' || range === 'loopback') return range;
  const embedded = embeddedIpv4(address);
  if (embedded) {
    // Every candidate must pass: we cannot know which one the network will actually use.
    for (const { via, address: inner } of embedded) {
      const reason = reasonFor(inner, allow);
      if (reason) return `${via}:${reason}`;
    }
    return null;
  }
  if (range !== 'unicast') return range;
  if (!address.match(GLOBAL_UNICAST_V6)) return 'nonGlobal';
  return null;
}

function embeddedIpv4(address: IPv6): Embedded[] | null {
  const bytes = address.toByteArray();
  const at = (via: string, offsets: number[], invert = false): Embedded => ({
    via,
    address: new ipaddr.IPv4(offsets.map((i) => (invert ? ~bytes[i] & 0xff : bytes[i]))),
  });
  const last32 = [12, 13, 14, 15];
  if (address.match(MAPPED)) return [at('ipv4Mapped', last32)];
  if (address.match(TRANSLATED)) return [at('ipv4Translated', last32)];
  if (address.match(COMPATIBLE)) return [at('ipv4Compatible', last32)];
  if (address.match(NAT64_WELL_KNOWN)) return [at('nat64', last32)];
  if (address.match(NAT64_LOCAL)) return NAT64_LOCAL_LAYOUTS.map((offsets) => at('nat64', offsets));
  if (address.match(SIX_TO_FOUR)) return [at('6to4', [2, 3, 4, 5])];
  // Teredo: the client address is stored bit-inverted. The server is checked too, because a
  // blocked server means the address was made up to reach something it should not.
  if (address.match(TEREDO)) return [at('teredo', [12, 13, 14, 15], true), at('teredoServer', [4, 5, 6, 7])];
  return null;
}

function isAllowListed(address: Address, allow: readonly Cidr[]): boolean {
  return allow.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

function parseCidrEntry(entry: string): Cidr {
  const [text, bitsText, ...rest] = entry.split('/');
  const address = parseAddress(text);
  const max = address?.kind() === 'ipv4' ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
  if (!address || rest.length > 0 || !(bits >= 0 && bits <= max)) {
    throw new Error(`Invalid CIDR in outbound allow-list: ${entry}`);
  }
  return [address, bits];
}

// The allow-list comes from config and rarely changes; cache its parsed form so the hot path
// (every webhook attempt) does not re-parse it.
const compiledAllowLists = new Map<string, Cidr[]>();

function compileAllowList(allowCidrs: readonly string[]): Cidr[] {
  if (allowCidrs.length === 0) return [];
  const key = allowCidrs.join(',');
  let compiled = compiledAllowLists.get(key);
  if (!compiled) {
    compiled = parseAllowCidrs(allowCidrs).map(parseCidrEntry);
    if (compiledAllowLists.size >= 32) compiledAllowLists.clear();
    compiledAllowLists.set(key, compiled);
  }
  return compiled;
}
