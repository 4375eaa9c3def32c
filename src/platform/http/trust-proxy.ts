import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `ATRIUM_TRUST_PROXY` (comma-separated addresses or CIDRs); throws naming the bad entry. */
export function parseTrustedProxies(text: string): string[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) toRange(entry);
  return entries;
}

function toRange(entry: string): Range {
  try {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    const address = ipaddr.parse(entry);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  } catch {
    throw new Error(`"${entry}" is not an IP address or CIDR range`);
  }
}

/**
 * Fastify's `trustProxy` for the configured proxies: the X-Forwarded-For hop from `address` is
 * believed only when `address` is one of them, so `request.ip` is the client behind a trusted proxy
 * and the socket's peer otherwise. IPv4-mapped IPv6 peers (`::ffff:10.0.0.1`) match IPv4 ranges.
 */
export function trustProxyFunction(entries: string[]): ((address: string, hop: number) => boolean) | false {
  if (entries.length === 0) return false;
  const ranges = entries.map(toRange);
  return (address) => {
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      parsed = ipaddr.process(address);
    } catch {
      return false;
    }
    return ranges.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
  };
}
