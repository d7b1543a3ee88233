import { BlockList, isIP, isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

export function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

function maskBits(mask: string): number | undefined {
  if (/^\d{1,2}$/.test(mask)) {
    const bits = Number(mask);
    return bits <= 32 ? bits : undefined;
  }
  if (!isIPv4(mask)) return undefined;
  const n = ipv4ToInt(mask);
  const bits = n.toString(2).padStart(32, '0');
  return /^1*0*$/.test(bits) ? (bits.indexOf('0') === -1 ? 32 : bits.indexOf('0')) : undefined;
}

/** An IPv4 range `[first, last]` for an IP, a range `a-b`, a subnet `a/n` or a netmask `a/m.m.m.m`. */
export function ipv4Range(entry: string): [number, number] | undefined {
  if (isIPv4(entry)) {
    const n = ipv4ToInt(entry);
    return [n, n];
  }
  const dash = entry.split('-');
  if (dash.length === 2 && isIPv4(dash[0] as string) && isIPv4(dash[1] as string)) {
    const a = ipv4ToInt(dash[0] as string);
    const b = ipv4ToInt(dash[1] as string);
    return a <= b ? [a, b] : undefined;
  }
  const slash = entry.split('/');
  if (slash.length === 2 && isIPv4(slash[0] as string)) {
    const bits = maskBits(slash[1] as string);
    if (bits === undefined) return undefined;
    const size = 2 ** (32 - bits);
    const base = Math.floor(ipv4ToInt(slash[0] as string) / size) * size;
    return [base, base + size - 1];
  }
  return undefined;
}

/** A whitelist entry: `any`, an IP (v4 or v6), a range, a subnet or a netmask. */
export function isWhitelistEntry(entry: string): boolean {
  return entry === 'any' || isIP(entry) !== 0 || ipv4Range(entry) !== undefined || isIPv6Subnet(entry);
}

function isIPv6Subnet(entry: string): boolean {
  const [addr, bits, ...rest] = entry.split('/');
  return rest.length === 0 && bits !== undefined && isIP(addr as string) === 6 && /^\d{1,3}$/.test(bits) && Number(bits) <= 128;
}

/** Whether `ip` is matched by one of the entries. */
export function ipInList(ip: string, list: readonly string[]): boolean {
  const plain = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  const n = isIPv4(plain) ? ipv4ToInt(plain) : undefined;
  for (const entry of list) {
    if (entry === 'any' || entry === plain) return true;
    if (n === undefined) {
      if (isIP(plain) === 6 && isIPv6Subnet(entry)) {
        // IPv6 subnets match IPv6 clients (node's BlockList does the prefix arithmetic).
        const [addr, bits] = entry.split('/') as [string, string];
        const block = new BlockList();
        block.addSubnet(addr, Number(bits), 'ipv6');
        if (block.check(plain, 'ipv6')) return true;
      }
      continue;
    }
    const r = ipv4Range(entry);
    if (r && n >= r[0] && n <= r[1]) return true;
  }
  return false;
}

/**
 * The address `host` names when it is an IP address in any spelling a connection would take for one
 * (`127.1`, `0x7f.1`, `2130706433`, `0177.0.0.1`, bracketed IPv6, a trailing dot): the same parse as
 * the system's resolver gives such text (inet_aton's one to four parts, each decimal, octal or hex).
 * Undefined for a name.
 */
export function addressOf(host: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const text = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '');
  if (!ipaddr.isValid(text)) return undefined;
  try {
    return ipaddr.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether `host` is an address that reaches this machine's loopback, however it is spelt: 127.0.0.0/8
 * and ::1, "this host" (0.0.0.0/8 and ::, which a connection takes to loopback), and those inside IPv6
 * (IPv4-mapped `::ffff:127.0.0.1` in either form, the old IPv4-compatible `::127.0.0.1`). The one
 * decision of loopback for egress, lookups and client addresses. A name (`localhost` too) is not an
 * address: what it resolves to is checked where it resolves.
 */
export function isLoopback(host: string): boolean {
  const range = plainAddress(host)?.range();
  return range === 'loopback' || range === 'unspecified';
}

/**
 * The address `host` names (addressOf), an IPv4 address carried in IPv6 (mapped, or the old
 * IPv4-compatible form) as that IPv4 address, in its usual text: undefined for a name.
 */
export function plainAddress(host: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const address = addressOf(host);
  if (address?.kind() !== 'ipv6') return address;
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  if (v6.parts.slice(0, 6).every((p) => p === 0) && (v6.parts[6] as number) !== 0) return ipaddr.fromByteArray(v6.toByteArray().slice(12));
  return v6;
}
