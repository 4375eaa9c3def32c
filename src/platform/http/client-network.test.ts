import { describe, expect, it } from 'vitest';
import { clientNetwork } from './client-network.js';

describe('clientNetwork', () => {
  it('is an IPv4 address itself, an IPv6 address its /64, an IPv4-mapped one its IPv4 address', () => {
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:0db8:0001:0003::1')).toBe('2001:db8:1:3::/64');
    expect(clientNetwork('::ffff:198.51.100.4')).toBe('198.51.100.4');
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientNetwork('not an address')).toBe('not an address');
  });
});
