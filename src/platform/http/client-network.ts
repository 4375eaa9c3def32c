// The network a client address stands for, for counting per client: an IPv4 address is itself, an IPv6
// address its /64 (one subscriber's or host's share: anyone holding one address holds 2^64 of them), an
// IPv4-mapped IPv6 address its IPv4 address. Anything unreadable is counted as written.
import ipaddr from 'ipaddr.js';

export function clientNetwork(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/%.*$/, ''));
  } catch {
    return address;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    const parts = v6.parts.slice(0, 4).map((p) => p.toString(16));
    return `${parts.join(':')}::/64`;
  }
  return parsed.toString();
}
