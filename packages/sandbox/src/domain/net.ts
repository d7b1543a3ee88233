import { BlockList, isIP, isIPv4 } from 'node:net';

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

export function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}
