// Decides whether an outbound URL may be called (contract §7.3) and returns the checked
// addresses, so the caller connects to exactly those and never resolves the name again.
import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';
import { blockedReasonFor } from './address-policy.js';

export type UnsafeReason = 'scheme' | 'credentials' | 'blocked_address' | 'unresolvable' | 'invalid';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';

  constructor(
    readonly reason: UnsafeReason,
    message: string,
  ) {
    super(message);
  }
}

/** Returns every address (A and AAAA) a host name resolves to. */
export type HostResolver = (host: string) => Promise<string[]>;

export interface OutboundUrlOptions {
  allowCidrs: string[];
  resolve?: HostResolver;
}

export interface CheckedUrl {
  url: URL;
  /** The addresses that passed the policy; connect only to these. */
  addresses: string[];
}

/** getaddrinfo, as Node's own connections would use: /etc/hosts included, answer order kept. */
export const systemResolver: HostResolver = async (host) => {
  const records = await lookup(host, { all: true, verbatim: true });
  return records.map((record) => record.address);
};

/**
 * Parses `raw` with the WHATWG URL parser (which normalises IPv4 in decimal, hex, octal and
 * short forms to dotted quads), requires https without userinfo, resolves the host and checks
 * every address. Throws UnsafeUrlError with the contract's reason.
 */
export async function checkOutboundUrl(raw: string, opts: OutboundUrlOptions): Promise<CheckedUrl> {
  const url = parseUrl(raw);
  if (url.protocol !== 'https:') throw new UnsafeUrlError('scheme', 'Only https URLs are allowed');
  if (url.username !== '' || url.password !== '') {
    throw new UnsafeUrlError('credentials', 'URLs must not contain a user name or password');
  }
  // https URLs always have a host per the URL standard; kept as a guard, not as a code path.
  if (url.hostname === '') throw new UnsafeUrlError('invalid', 'The URL has no host');

  const addresses = await addressesOf(url.hostname, opts.resolve ?? systemResolver);
  for (const address of addresses) {
    const reason = blockedReasonFor(address, opts.allowCidrs);
    // The address itself stays out of the message: it may reveal internal network layout.
    if (reason) throw new UnsafeUrlError('blocked_address', `The host resolves to a blocked address (${reason})`);
  }
  return { url, addresses };
}

function parseUrl(raw: string): URL {
  if (typeof raw !== 'string') throw new UnsafeUrlError('invalid', 'The URL must be a string');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('invalid', 'Not a valid absolute URL');
  }
  return url;
}

async function addressesOf(hostname: string, resolve: HostResolver): Promise<string[]> {
  // IP literals: the parser has already normalised them, so no resolution is needed.
  if (hostname.startsWith('[')) return [hostname.slice(1, -1)];
  if (isIPv4(hostname)) return [hostname];

  let resolved: string[];
  try {
    resolved = await resolve(hostname);
  } catch {
    throw new UnsafeUrlError('unresolvable', 'The host name could not be resolved');
  }
  const unique = [...new Set(resolved.filter((address) => typeof address === 'string' && address !== ''))];
  if (unique.length === 0) throw new UnsafeUrlError('unresolvable', 'The host name has no addresses');
  return unique;
}

/**
 * A link someone else wrote that we show for a click (a video call's join link from a calendar, an
 * attachment's address in a patient's message): kept only when it is an absolute http(s) URL, so a
 * `javascript:`, `data:` or other scheme never becomes a link in the web app.
 */
export function linkUrl(raw: string | null | undefined): string | null {
  if (!raw) return null;
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? raw : null;
  } catch {
    return null;
  }
}
