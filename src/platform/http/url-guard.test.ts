import { describe, expect, it, vi } from 'vitest';
import { checkOutboundUrl, type HostResolver, linkUrl, type UnsafeReason, UnsafeUrlError } from './url-guard.js';

const noResolve: HostResolver = async () => {
  throw new Error('resolver must not be called for IP literals');
};

async function reasonOf(raw: string, allowCidrs: string[] = [], resolve?: HostResolver) {
  try {
    await checkOutboundUrl(raw, { allowCidrs, resolve });
    return null;
  } catch (err) {
    if (err instanceof UnsafeUrlError) return err.reason;
    throw err;
  }
}

// [url, expected reason (null = allowed)] for literal hosts: no DNS involved.
const LITERALS: Array<[string, UnsafeReason | null]> = [
  ['https://8.8.8.8/', null],
  ['HTTPS://8.8.8.8/hook?x=1', null],
  ['https://8.8.8.8:8443/hook', null],
  ['https://134744072/', null], // decimal 8.8.8.8
  ['https://0x8.0x8.0x8.0x8/', null], // hex octets
  ['https://[2606:4700:4700::1111]/', null],
  ['https://[::ffff:8.8.8.8]/', null],
  ['https://127.0.0.1/', 'blocked_address'],
  ['https://2130706433/', 'blocked_address'], // decimal
  ['https://0x7f000001/', 'blocked_address'], // hex
  ['https://0x7f.1/', 'blocked_address'], // hex, short
  ['https://0177.0.0.1/', 'blocked_address'], // octal
  ['https://017700000001/', 'blocked_address'], // octal, single number
  ['https://127.1/', 'blocked_address'], // two parts
  ['https://127.0.1/', 'blocked_address'], // three parts
  ['https://0/', 'blocked_address'], // 0.0.0.0
  ['https://10.0.0.1/', 'blocked_address'],
  ['https://169.254.169.254/latest/meta-data/', 'blocked_address'],
  ['https://2852039166/', 'blocked_address'], // 169.254.169.254 in decimal
  ['https://0xa9.0xfe.0xa9.0xfe/', 'blocked_address'],
  ['https://0251.0376.0251.0376/', 'blocked_address'], // 169.254.169.254 in octal
  ['https://100.100.100.200/', 'blocked_address'],
  ['https://[::1]/', 'blocked_address'],
  ['https://[0:0:0:0:0:0:0:1]/', 'blocked_address'],
  ['https://[::]/', 'blocked_address'],
  ['https://[::ffff:127.0.0.1]/', 'blocked_address'], // parser turns it into [::ffff:7f00:1]
  ['https://[::ffff:a9fe:a9fe]/', 'blocked_address'],
  ['https://[::127.0.0.1]/', 'blocked_address'],
  ['https://[64:ff9b::7f00:1]/', 'blocked_address'],
  ['https://[2002:7f00:1::]/', 'blocked_address'],
  ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'blocked_address'],
  ['https://[fd00:ec2::254]/latest/meta-data/', 'blocked_address'],
  ['https://[fe80::1]/', 'blocked_address'],
  ['https://[ff02::1]/', 'blocked_address'],
  ['https://[2001:db8::1]/', 'blocked_address'],
  ['http://8.8.8.8/', 'scheme'],
  ['HTTP://8.8.8.8/', 'scheme'],
  ['ftp://8.8.8.8/', 'scheme'],
  ['file:///etc/passwd', 'scheme'],
  ['javascript:alert(1)', 'scheme'],
  ['ws://8.8.8.8/', 'scheme'],
  ['https://user:pass@8.8.8.8/', 'credentials'],
  ['https://user@8.8.8.8/', 'credentials'],
  ['https://:pass@8.8.8.8/', 'credentials'],
  ['https://user:pass@127.0.0.1/', 'credentials'],
  ['', 'invalid'],
  ['not a url', 'invalid'],
  ['/relative/path', 'invalid'],
  ['https://', 'invalid'],
  ['https://[::1/', 'invalid'],
  ['https://1.2.3.256/', 'invalid'],
  ['https://0x100000000/', 'invalid'],
  ['https://[fe80::1%25eth0]/', 'invalid'], // the URL standard has no zone ids
  ['https://exa mple.com/', 'invalid'],
];

describe('checkOutboundUrl: literal hosts and URL forms', () => {
  it.each(LITERALS)('%s → %s', async (raw, expected) => {
    expect(await reasonOf(raw, [], noResolve)).toBe(expected);
  });

  it('covers at least 60 URL forms together with the resolver cases', () => {
    expect(LITERALS.length + RESOLVED.length).toBeGreaterThanOrEqual(60);
  });

  it('returns the normalised literal as the only address', async () => {
    const resolve = noResolve;
    const { url, addresses } = await checkOutboundUrl('https://0x7f.1:8443/x', {
      allowCidrs: ['127.0.0.0/8'],
      resolve,
    });
    expect(url.hostname).toBe('127.0.0.1');
    expect(addresses).toEqual(['127.0.0.1']);
    const v6 = await checkOutboundUrl('https://[0:0::1]/', { allowCidrs: ['::1/128'], resolve });
    expect(v6.addresses).toEqual(['::1']);
  });

  it('lets the allow-list exempt ranges and nothing else', async () => {
    const allow = ['127.0.0.0/8'];
    expect(await reasonOf('https://127.0.0.1/', allow, noResolve)).toBeNull();
    expect(await reasonOf('https://2130706433/', allow, noResolve)).toBeNull();
    expect(await reasonOf('https://[::1]/', allow, noResolve)).toBe('blocked_address');
    expect(await reasonOf('https://169.254.169.254/', allow, noResolve)).toBe('blocked_address');
    expect(await reasonOf('http://127.0.0.1/', allow, noResolve)).toBe('scheme');
  });
});

const fixed =
  (...addresses: string[]): HostResolver =>
  async () =>
    addresses;
const failing: HostResolver = async () => {
  throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
};

// [url, resolver, allowCidrs, expected reason]
const RESOLVED: Array<[string, HostResolver, string[], UnsafeReason | null]> = [
  ['https://hooks.example.com/in', fixed('93.184.216.34'), [], null],
  ['https://hooks.example.com/in', fixed('93.184.216.34', '2606:2800:220:1::1'), [], null],
  ['https://hooks.example.com/in', fixed('93.184.216.34', '10.0.0.5'), [], 'blocked_address'], // one private answer
  ['https://hooks.example.com/in', fixed('10.0.0.5', '93.184.216.34'), [], 'blocked_address'],
  ['https://hooks.example.com/in', fixed('2606:2800:220:1::1', '::1'), [], 'blocked_address'],
  ['https://hooks.example.com/in', fixed('93.184.216.34', '::ffff:169.254.169.254'), [], 'blocked_address'],
  ['https://hooks.example.com/in', fixed('64:ff9b::a00:1'), [], 'blocked_address'],
  ['https://hooks.example.com/in', fixed('not-an-address'), [], 'blocked_address'], // garbage fails closed
  ['https://hooks.example.com/in', fixed(), [], 'unresolvable'],
  ['https://hooks.example.com/in', failing, [], 'unresolvable'],
  ['https://localhost/', fixed('127.0.0.1'), [], 'blocked_address'],
  ['https://localhost/', fixed('127.0.0.1'), ['127.0.0.0/8'], null],
  ['https://localhost/', fixed('127.0.0.1', '::1'), ['127.0.0.0/8'], 'blocked_address'],
  ['https://localhost/', fixed('127.0.0.1', '::1'), ['127.0.0.0/8', '::1/128'], null],
  ['https://metadata.google.internal/', fixed('169.254.169.254'), [], 'blocked_address'],
];

describe('checkOutboundUrl: resolved host names', () => {
  it.each(RESOLVED)('%s via %#', async (raw, resolve, allow, expected) => {
    expect(await reasonOf(raw, allow, resolve)).toBe(expected);
  });

  it('resolves the host name once and returns every unique address', async () => {
    const resolve = vi.fn(fixed('93.184.216.34', '2606:2800:220:1::1', '93.184.216.34'));
    const { addresses } = await checkOutboundUrl('https://Hooks.Example.COM./in', { allowCidrs: [], resolve });
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(resolve).toHaveBeenCalledWith('hooks.example.com.');
    expect(addresses).toEqual(['93.184.216.34', '2606:2800:220:1::1']);
  });

  it('checks scheme and credentials before resolving', async () => {
    const resolve = vi.fn(fixed('93.184.216.34'));
    expect(await reasonOf('http://hooks.example.com/', [], resolve)).toBe('scheme');
    expect(await reasonOf('https://a:b@hooks.example.com/', [], resolve)).toBe('credentials');
    expect(resolve).not.toHaveBeenCalled();
  });

  it('keeps the blocked address out of the error message', async () => {
    const err = await checkOutboundUrl('https://intranet.example/', {
      allowCidrs: [],
      resolve: fixed('10.20.30.40'),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeUrlError);
    expect((err as Error).message).not.toContain('10.20.30.40');
  });

  it('uses the system resolver by default', async () => {
    expect(await reasonOf('https://localhost/')).toBe('blocked_address');
    expect(await reasonOf('https://does-not-exist.invalid/')).toBe('unresolvable');
  });
});

describe('linkUrl: links others wrote, shown for a click', () => {
  it('keeps absolute http(s) URLs and drops every other scheme, relative and broken ones', () => {
    expect(linkUrl('https://meet.google.com/abc-defg-hij')).toBe('https://meet.google.com/abc-defg-hij');
    expect(linkUrl('http://example.test/a')).toBe('http://example.test/a');
    for (const bad of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      'data:text/html,x',
      'vbscript:x',
      '/x',
      'not a url',
      '',
      null,
      undefined,
    ]) {
      expect(linkUrl(bad), String(bad)).toBeNull();
    }
  });
});
