import { describe, expect, it } from 'vitest';
import { blockedReasonFor, isBlockedAddress, parseAllowCidrs } from './address-policy.js';

// [address, expected reason (null = reachable)]
const PUBLIC: string[] = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255', // just below CGNAT
  '100.128.0.0', // just above CGNAT
  '172.15.255.255', // just outside 172.16/12
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.1',
  '169.253.255.255',
  '198.17.255.255', // just below benchmarking 198.18/15
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8', // mapped, public inside
  '::ffff:0:8.8.8.8', // RFC 6145 translated, public inside
  '::8.8.8.8', // compatible, public inside
  '64:ff9b::8.8.8.8', // NAT64 well-known prefix
  '64:ff9b:1:808:8:808:808:808', // NAT64 local-use: 8.8.8.8 under every prefix length
  '2002:808:808::1', // 6to4 of 8.8.8.8
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo: server 65.54.227.120, client ~f7f7f7f7 = 8.8.8.8
];

const BLOCKED: Array<[string, string]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['100.100.100.200', 'carrierGradeNat'], // Alibaba Cloud metadata
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.0.1', 'linkLocal'],
  ['169.254.169.254', 'linkLocal'], // AWS/GCP/Azure metadata
  ['168.63.129.16', 'cloudMetadata'], // Azure WireServer
  ['192.0.0.1', 'reserved'],
  ['192.0.0.192', 'reserved'], // Oracle Cloud metadata
  ['192.0.2.1', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.9', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['192.88.99.1', 'reserved'], // 6to4 relay anycast
  ['240.0.0.1', 'reserved'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['192.31.196.1', 'as112'], // anycast, not plain unicast: refused by allow-list thinking
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['2606:4700:4700::1111%eth0', 'zoneId'],
  ['febf:ffff::1', 'linkLocal'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456:789a::1', 'uniqueLocal'],
  ['fd00:ec2::254', 'uniqueLocal'], // AWS IMDS over IPv6
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['100::1', 'discard'],
  ['2001:db8::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['2001:2::1', 'benchmarking'],
  ['2001:20::1', 'orchid2'],
  ['4000::1', 'nonGlobal'], // outside 2000::/3
  ['::1:0:0:1', 'nonGlobal'],
  ['::ffff:127.0.0.1', 'ipv4Mapped:loopback'],
  ['::ffff:7f00:1', 'ipv4Mapped:loopback'],
  ['::ffff:10.0.0.1', 'ipv4Mapped:private'],
  ['::ffff:169.254.169.254', 'ipv4Mapped:linkLocal'],
  ['::ffff:0.0.0.0', 'ipv4Mapped:unspecified'],
  ['::ffff:0:127.0.0.1', 'ipv4Translated:loopback'],
  ['::127.0.0.1', 'ipv4Compatible:loopback'],
  ['::10.0.0.1', 'ipv4Compatible:private'],
  ['::2', 'ipv4Compatible:unspecified'],
  ['64:ff9b::127.0.0.1', 'nat64:loopback'],
  ['64:ff9b::a9fe:a9fe', 'nat64:linkLocal'],
  ['64:ff9b:1::7f00:1', 'nat64:unspecified'], // the /48 reading is 0.0.x.x
  ['64:ff9b:1:7f00:0:100::', 'nat64:loopback'], // 127.0.0.1 in the /48 layout
  ['64:ff9b:1:808:8:808:808:a00:1', 'invalid'], // nine groups
  ['2002:7f00:1::1', '6to4:loopback'],
  ['2002:a9fe:a9fe::1', '6to4:linkLocal'],
  ['2002:c0a8:101::1', '6to4:private'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo:loopback'], // client ~80fffffe = 127.0.0.1
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo:reserved'], // RFC 4380 example, client 192.0.2.45
  ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'teredoServer:private'], // server 10.0.0.1
  ['', 'invalid'],
  ['not-an-ip', 'invalid'],
  ['1.2.3', 'invalid'],
  ['0x7f.1', 'invalid'], // non-canonical forms must be normalised by the URL parser first
  ['2130706433', 'invalid'],
  ['127.0.0.1 ', 'invalid'],
  ['[::1]', 'invalid'],
  ['::ffff:999.0.0.1', 'invalid'],
];

describe('address policy', () => {
  it.each(PUBLIC)('allows public unicast %s', (ip) => {
    expect(blockedReasonFor(ip)).toBeNull();
    expect(isBlockedAddress(ip)).toBe(false);
  });

  it.each(BLOCKED)('blocks %s (%s)', (ip, reason) => {
    expect(blockedReasonFor(ip)).toBe(reason);
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it('covers at least 60 addresses', () => {
    expect(PUBLIC.length + BLOCKED.length).toBeGreaterThanOrEqual(60);
  });
});

describe('allow-list exemptions', () => {
  const cases: Array<[string, string[], boolean]> = [
    ['127.0.0.1', ['127.0.0.0/8'], false],
    ['127.9.9.9', ['127.0.0.0/8', '::1/128'], false],
    ['::1', ['127.0.0.0/8'], true], // an IPv4 range does not exempt IPv6 loopback
    ['::1', ['127.0.0.0/8', '::1/128'], false],
    ['::ffff:127.0.0.1', ['127.0.0.0/8'], false], // same host as 127.0.0.1
    ['64:ff9b::10.1.2.3', ['10.0.0.0/8'], false],
    ['10.1.2.3', ['10.0.0.0/8'], false],
    ['10.1.2.3', ['10.2.0.0/16'], true],
    ['192.168.1.5', ['192.168.1.5'], false], // a bare address is a single-host range
    ['192.168.1.6', ['192.168.1.5'], true],
    ['169.254.169.254', ['127.0.0.0/8'], true],
    ['fd00::5', ['fd00::/8'], false],
    ['::7f00:1', ['::127.0.0.0/104'], false], // dotted IPv6 in the allow-list means the same bytes
    ['::ffff:7f00:1', ['::127.0.0.0/104'], true], // a different prefix: not exempt
    ['8.8.8.8', ['127.0.0.0/8'], false],
  ];

  it.each(cases)('%s with %j → blocked=%s', (ip, allow, blocked) => {
    expect(isBlockedAddress(ip, allow)).toBe(blocked);
  });

  it('parses ATRIUM_WEBHOOK_ALLOW_CIDRS and rejects invalid entries', () => {
    expect(parseAllowCidrs('127.0.0.0/8, ::1/128,,')).toEqual(['127.0.0.0/8', '::1/128']);
    expect(parseAllowCidrs('')).toEqual([]);
    expect(() => parseAllowCidrs('127.0.0.0/33')).toThrow(/Invalid CIDR/);
    expect(() => parseAllowCidrs('localhost')).toThrow(/Invalid CIDR/);
    expect(() => isBlockedAddress('127.0.0.1', ['nope/8'])).toThrow(/Invalid CIDR/);
  });
});
