import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLoopback } from '../../src/domain/net.js';
import { loopbackRefused } from '../../src/traffic/egress.js';

// Every spelling of an address that reaches this machine's loopback is loopback to egress (issue 39):
// with `--host 0.0.0.0 --egress-allow '*'`, `0.0.0.0` and `[::ffff:127.0.0.1]` (which a URL writes
// `[::ffff:7f00:1]`) once took a client from beyond loopback to loopback-only services, while
// `127.0.0.1` was refused. The spellings are the ones a connection takes for an address: inet_aton's
// one to four parts, each decimal, octal or hex; IPv6 in full, short or mixed form, IPv4 inside it.

/** The 32-bit value `n` in one of inet_aton's forms: 1 to 4 parts, each in decimal, octal or hex. */
const ipv4Spelling = (n: number) =>
  fc
    .record({
      parts: fc.integer({ min: 1, max: 4 }),
      bases: fc.array(fc.constantFrom(10, 8, 16), { minLength: 4, maxLength: 4 }),
      upper: fc.boolean(),
    })
    .map(({ parts, bases, upper }) => {
      const bytes = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
      // The last part holds what the earlier parts leave: a.b.c.d, a.b.(c·256+d), a.(b·65536+…), one number.
      const values = [...bytes.slice(0, parts - 1), bytes.slice(parts - 1).reduce((v, b) => v * 256 + b, 0)];
      const text = values
        .map((v, i) => {
          const base = bases[i] as number;
          if (base === 16) return `0x${v.toString(16)}`;
          if (base === 8 && v !== 0) return `0${v.toString(8)}`;
          return String(v);
        })
        .join('.');
      return upper ? text.toUpperCase().replace('0X', '0x') : text;
    });

/** `n` as an IPv6 address that carries it: mapped (`::ffff:`) in dotted or hex form, full or short, bracketed or not. */
const ipv6Carrying = (n: number) =>
  fc
    .record({ dotted: fc.boolean(), full: fc.boolean(), zeros: fc.boolean(), bracket: fc.boolean(), compat: fc.boolean() })
    .map(({ dotted, full, zeros, bracket, compat }) => {
      const hi = (n >>> 16).toString(16);
      const lo = (n & 0xffff).toString(16);
      const tail = dotted
        ? [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')
        : `${zeros ? hi.padStart(4, '0') : hi}:${zeros ? lo.padStart(4, '0') : lo}`;
      // The old IPv4-compatible form (::a.b.c.d) only for addresses that do not begin with zeros (:: itself is "this host" anyway).
      const mark = compat && n >>> 24 !== 0 ? '' : 'ffff:';
      const text = full ? `0:0:0:0:0:${mark || '0:'}${tail}` : `::${mark}${tail}`;
      return bracket ? `[${text}]` : text;
    });

/** A trailing dot (the resolver's absolute form) sometimes. */
const maybeDot = (s: fc.Arbitrary<string>) => fc.tuple(s, fc.boolean()).map(([t, dot]) => (dot && !t.startsWith('[') ? `${t}.` : t));

const loopbackV4 = fc.integer({ min: 0x7f000000, max: 0x7fffffff });
const thisHostV4 = fc.integer({ min: 0, max: 0x00ffffff });
/** An IPv4 address neither loopback (127/8) nor "this host" (0/8). */
const otherV4 = fc.integer({ min: 0x01000000, max: 0xffffffff }).filter((n) => n >>> 24 !== 127);

describe('isLoopback: one decision for every spelling', () => {
  it('127.0.0.0/8 and 0.0.0.0/8 in any IPv4 spelling are loopback', () => {
    let runs = 0;
    fc.assert(
      fc.property(
        fc.oneof(loopbackV4, thisHostV4).chain((n) => maybeDot(ipv4Spelling(n))),
        (text) => {
          runs++;
          expect(isLoopback(text), text).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
    expect(runs).toBe(500);
  });

  it('the same inside IPv6 (mapped, IPv4-compatible, dotted or hex, full or short, bracketed); ::1 and :: in their forms', () => {
    fc.assert(
      fc.property(fc.oneof(loopbackV4, thisHostV4).chain(ipv6Carrying), (text) => {
        expect(isLoopback(text), text).toBe(true);
      }),
      { numRuns: 500 },
    );
    for (const text of [
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '0000:0000:0000:0000:0000:0000:0000:0001',
      '::',
      '[::]',
      '0:0:0:0:0:0:0:0',
      '::0',
    ])
      expect(isLoopback(text), text).toBe(true);
  });

  it('any other address, in the same spellings, is not; nor is a name', () => {
    fc.assert(
      fc.property(
        otherV4.chain((n) => fc.oneof(maybeDot(ipv4Spelling(n)), ipv6Carrying(n))),
        (text) => {
          expect(isLoopback(text), text).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
    for (const text of ['::2', '2001:db8::1', 'fe80::1', 'localhost', 'example.com', '127.0.0.1.example.com', ''])
      expect(isLoopback(text), text).toBe(false);
  });

  it("a client from beyond loopback is refused each spelling, even with --egress-allow '*'; `loopback` opens them", () => {
    fc.assert(
      fc.property(
        fc.oneof(loopbackV4, thisHostV4).chain((n) => fc.oneof(maybeDot(ipv4Spelling(n)), ipv6Carrying(n))),
        (text) => {
          expect(loopbackRefused(text, '10.77.0.1', ['*']), text).toBe(true);
          expect(loopbackRefused(text, '127.0.0.1', ['*']), text).toBe(false);
          expect(loopbackRefused(text, '::ffff:7f00:1', []), text).toBe(false);
          expect(loopbackRefused(text, '10.77.0.1', ['loopback']), text).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
    for (const text of ['localhost.', 'LOCALHOST', 'a.localhost.']) expect(loopbackRefused(text, '10.77.0.1', ['*']), text).toBe(true);
  });
});
