import { describe, expect, it } from 'vitest';
import { intToIpv4, ipInList, ipv4Range, ipv4ToInt, isLoopback, isWhitelistEntry } from '../../src/domain/net.js';

// The whitelist arithmetic (src/domain/net.ts): the real manager's and the account API's entries are an
// IP (v4 or v6), a range `a-b`, a subnet `a/n`, a netmask `a/m.m.m.m` or `any`.

const range = (entry: string) => ipv4Range(entry)?.map(intToIpv4);

describe('IPv4 as numbers', () => {
  it('ipv4ToInt and intToIpv4 are inverse at the edges and in between', () => {
    expect(ipv4ToInt('0.0.0.0')).toBe(0);
    expect(ipv4ToInt('0.0.0.1')).toBe(1);
    expect(ipv4ToInt('0.0.1.0')).toBe(256);
    expect(ipv4ToInt('1.0.0.0')).toBe(16_777_216);
    expect(ipv4ToInt('255.255.255.255')).toBe(4_294_967_295);
    expect(ipv4ToInt('192.0.2.7')).toBe(3_221_225_991);
    for (const ip of ['0.0.0.0', '10.1.2.3', '127.0.0.1', '192.0.2.255', '255.255.255.255']) expect(intToIpv4(ipv4ToInt(ip))).toBe(ip);
    expect(intToIpv4(4_294_967_295)).toBe('255.255.255.255');
    expect(intToIpv4(258)).toBe('0.0.1.2');
  });
});

describe('ipv4Range', () => {
  it('an IP is a range of one', () => {
    expect(range('10.1.1.1')).toEqual(['10.1.1.1', '10.1.1.1']);
  });

  it('a range a-b, in order; reversed is no range', () => {
    expect(range('10.0.0.1-10.0.0.9')).toEqual(['10.0.0.1', '10.0.0.9']);
    expect(range('10.0.0.5-10.0.0.5')).toEqual(['10.0.0.5', '10.0.0.5']);
    expect(ipv4Range('10.0.0.9-10.0.0.1')).toBeUndefined();
    expect(ipv4Range('10.0.0.1-x')).toBeUndefined();
    expect(ipv4Range('x-10.0.0.1')).toBeUndefined();
    expect(ipv4Range('10.0.0.1-10.0.0.2-10.0.0.3')).toBeUndefined();
  });

  it('a subnet a/n from its network address to its broadcast address, whatever host bits it names', () => {
    expect(range('10.9.0.0/16')).toEqual(['10.9.0.0', '10.9.255.255']);
    expect(range('10.9.8.7/16')).toEqual(['10.9.0.0', '10.9.255.255']);
    expect(range('192.0.2.77/24')).toEqual(['192.0.2.0', '192.0.2.255']);
    expect(range('192.0.2.77/32')).toEqual(['192.0.2.77', '192.0.2.77']);
    expect(range('192.0.2.77/31')).toEqual(['192.0.2.76', '192.0.2.77']);
    expect(range('192.0.2.77/0')).toEqual(['0.0.0.0', '255.255.255.255']);
    expect(range('192.0.2.77/9')).toEqual(['192.0.0.0', '192.127.255.255']);
  });

  it('bits above 32, three digits, or not digits are no subnet', () => {
    expect(ipv4Range('10.0.0.0/33')).toBeUndefined();
    expect(ipv4Range('10.0.0.0/100')).toBeUndefined();
    expect(ipv4Range('10.0.0.0/008')).toBeUndefined();
    expect(ipv4Range('10.0.0.0/x')).toBeUndefined();
    expect(ipv4Range('10.0.0.0/')).toBeUndefined();
    expect(ipv4Range('10.0.0.0/8/8')).toBeUndefined();
    expect(ipv4Range('x/8')).toBeUndefined();
  });

  it('a netmask a/m.m.m.m: contiguous ones only', () => {
    expect(range('10.9.8.7/255.255.0.0')).toEqual(['10.9.0.0', '10.9.255.255']);
    expect(range('10.9.8.7/255.255.255.255')).toEqual(['10.9.8.7', '10.9.8.7']);
    expect(range('10.9.8.7/255.255.255.254')).toEqual(['10.9.8.6', '10.9.8.7']);
    expect(range('10.9.8.7/128.0.0.0')).toEqual(['0.0.0.0', '127.255.255.255']);
    expect(range('10.9.8.7/0.0.0.0')).toEqual(['0.0.0.0', '255.255.255.255']);
    expect(ipv4Range('10.9.8.7/255.0.255.0')).toBeUndefined();
    expect(ipv4Range('10.9.8.7/0.255.255.255')).toBeUndefined();
    expect(ipv4Range('10.9.8.7/255.255.0.1')).toBeUndefined();
  });

  it('anything else is no range', () => {
    for (const x of ['', 'any', 'not-an-ip', '300.1.1.1', '10.1.1.1.1', '::1', '2001:db8::/32']) expect(ipv4Range(x), x).toBeUndefined();
  });
});

describe('isWhitelistEntry', () => {
  it('takes any, IPv4, IPv6, ranges, subnets, netmasks and IPv6 subnets', () => {
    for (const x of ['any', '10.1.1.1', '::1', '2001:db8::7', '10.0.0.1-10.0.0.9', '10.9.0.0/16', '10.0.0.0/255.0.0.0', '2001:db8::/32'])
      expect(isWhitelistEntry(x), x).toBe(true);
    expect(isWhitelistEntry('2001:db8::/0')).toBe(true);
    expect(isWhitelistEntry('2001:db8::/128')).toBe(true);
  });

  it('refuses what is none of them', () => {
    for (const x of [
      '',
      'Any',
      'all',
      '300.1.1.1',
      '10.0.0.9-10.0.0.1',
      '10.0.0.0/33',
      '2001:db8::/129',
      '2001:db8::/1234',
      '2001:db8::/x',
      '2001:db8::/',
      '2001:db8::/32/1',
      '2001:db8::/-1',
      '2001:db8::/ 12',
      '2001:db8::/1e2',
      '2001:db8::/12 ',
      '10.0.0.0/200',
      'example.com/8',
    ])
      expect(isWhitelistEntry(x), x).toBe(false);
  });
});

describe('ipInList', () => {
  it('an empty list matches nothing; any matches every client', () => {
    expect(ipInList('10.1.1.1', [])).toBe(false);
    expect(ipInList('10.1.1.1', ['any'])).toBe(true);
    expect(ipInList('2001:db8::1', ['any'])).toBe(true);
  });

  it('an IPv4 client by equal IP, range, subnet or netmask, inclusive at both ends', () => {
    const list = ['10.0.0.5-10.0.0.9'];
    expect(['10.0.0.4', '10.0.0.5', '10.0.0.9', '10.0.0.10'].map((ip) => ipInList(ip, list))).toEqual([false, true, true, false]);
    expect(ipInList('192.0.2.255', ['192.0.2.0/24'])).toBe(true);
    expect(ipInList('192.0.3.0', ['192.0.2.0/24'])).toBe(false);
    expect(ipInList('10.200.1.1', ['10.0.0.0/255.0.0.0'])).toBe(true);
    expect(ipInList('10.1.1.1', ['10.1.1.2', '10.1.1.1'])).toBe(true);
    expect(ipInList('10.1.1.3', ['10.1.1.2', 'not-an-entry'])).toBe(false);
  });

  it('an IPv4-mapped IPv6 client is its IPv4 address', () => {
    expect(ipInList('::ffff:10.1.1.1', ['10.1.1.1'])).toBe(true);
    expect(ipInList('::ffff:10.1.1.1', ['10.1.0.0/16'])).toBe(true);
    expect(ipInList('::ffff:10.1.1.1', ['10.2.0.0/16'])).toBe(false);
  });

  it('an IPv6 client by equal IP or an IPv6 subnet, never by an IPv4 entry', () => {
    expect(ipInList('2001:db8::1', ['2001:db8::1'])).toBe(true);
    expect(ipInList('2001:db8:1::5', ['10.0.0.0/8', '2001:db8::/32'])).toBe(true);
    expect(ipInList('2001:db9::5', ['2001:db8::/32'])).toBe(false);
    expect(ipInList('2001:db8::1', ['0.0.0.0/0'])).toBe(false);
    expect(ipInList('10.0.0.1', ['2001:db8::/32'])).toBe(false);
    expect(ipInList('2001:db8::2', ['2001:db8::/128', '2001:db8::2/128'])).toBe(true);
  });

  it('a client that is not an IP matches only the same text or any', () => {
    expect(ipInList('unknown', ['unknown'])).toBe(true);
    expect(ipInList('unknown', ['0.0.0.0/0', '2001:db8::/0'])).toBe(false);
  });
});

describe('isLoopback', () => {
  it('127/8, ::1 and their IPv4-mapped form', () => {
    for (const ip of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1']) expect(isLoopback(ip), ip).toBe(true);
    for (const ip of ['128.0.0.1', '10.127.0.1', '::2', '::ffff:10.0.0.1', '1.127.0.0', '']) expect(isLoopback(ip), ip).toBe(false);
  });
});
