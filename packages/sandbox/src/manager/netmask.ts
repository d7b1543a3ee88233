// A whitelist entry as the real manager 1.570.247 stores it in its all-ports whitelist: it reads each
// entry with the `netmask` package its lockfile pins (2.0.1; lib/manager.js 538-545) and keeps the
// network's base address, with `/<bits>` unless the mask is 32. That version reads addresses its own
// way, which later versions changed, so no IP library gives the same answers: parts fill the address
// from the right (`1` is 0.0.0.1, `1.2` is 0.0.1.2), `0x` starts a hexadecimal part and a `0` before an
// octal digit an octal one, each part at most 255, and the empty text is 0.0.0.0 (netmask 2.0.1
// lib/netmask.js 14-89 `ip2long`, `atob`; 92-140 the constructor). The real-manager test
// coercion.test.ts holds this function to that very package, installed beside the real manager.

/** One part of an address: its value and how many characters it took; undefined where netmask throws. */
function part(s: string): [number, number] | undefined {
  let base = 10;
  let max = '9';
  let i = 0;
  if (s.length > 1 && s[0] === '0') {
    if (s[1] === 'x' || s[1] === 'X') {
      i = 2;
      base = 16;
    } else if ((s[1] as string) >= '0' && (s[1] as string) <= '7') {
      i = 1;
      base = 8;
      max = '7';
    }
  }
  const start = i;
  let n = 0;
  for (; i < s.length; i++) {
    const ch = s[i] as string;
    if (ch >= '0' && ch <= max) n = n * base + Number(ch);
    else if (base === 16 && ch >= 'a' && ch <= 'f') n = n * base + 10 + ch.charCodeAt(0) - 97;
    else if (base === 16 && ch >= 'A' && ch <= 'F') n = n * base + 10 + ch.charCodeAt(0) - 65;
    else break;
    if (n > 0xff) return undefined;
  }
  return i === start ? undefined : [n, i];
}

/** An address as a 32-bit number; undefined where netmask throws. */
function addressOf(text: string): number | undefined {
  const parts: number[] = [];
  let rest = text;
  for (let i = 0; i < 4 && rest.length > 0; i++) {
    if (i > 0) {
      if (rest[0] !== '.') return undefined;
      rest = rest.slice(1);
    }
    const p = part(rest);
    if (!p) return undefined;
    parts.push(p[0]);
    rest = rest.slice(p[1]);
  }
  if (rest.length) return undefined;
  while (parts.length < 4) parts.unshift(0);
  const [a, b, c, d] = parts as [number, number, number, number];
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

const maskOfBits = (bits: number) => (bits > 0 ? (0xffffffff << (32 - bits)) >>> 0 : 0);

/** The entry as the real manager keeps it (`base` or `base/bits`), or undefined for one it drops. */
export function whitelistEntryAsStored(entry: unknown): string | undefined {
  if (typeof entry !== 'string') return undefined;
  // `split('/', 2)`: a second slash and what follows it are not read.
  const [net = '', maskText] = entry.split('/', 2);
  let bits: number | undefined;
  let mask: number;
  if (maskText?.includes('.')) {
    const m = addressOf(maskText);
    if (m === undefined) return undefined;
    mask = m;
    // As netmask 2.0.1 looks for it: 32 down to 1 (a mask of 0.0.0.0 matches none of them).
    for (let i = 32; i >= 0; i--)
      if (m === (0xffffffff << (32 - i)) >>> 0) {
        bits = i;
        break;
      }
  } else {
    bits = maskText ? Number.parseInt(maskText, 10) : 32;
    mask = maskOfBits(bits);
  }
  const address = addressOf(net);
  if (address === undefined || bits === undefined || !(bits <= 32)) return undefined;
  const base = (address & mask) >>> 0;
  const text = [24, 16, 8, 0].map((shift) => (base >>> shift) & 0xff).join('.');
  return bits === 32 ? text : `${text}/${bits}`;
}
