// The built-in seed's identities and its deterministic number generator, shared by its parts.

/** The identities of the default seed, as the contract suites and the README use them. */
export const SEED = {
  customer: 'hl_1a2b3c4d',
  token: 'sandbox-token-0001',
  /** A second token without admin rights or peer permissions (for 403s). */
  limitedToken: 'sandbox-token-0002',
  basic: { username: 'sandbox@example.com', password: 'sandbox-basic-0001' },
  zones: {
    static_zone: 'z8x7c6v5b4n3',
    res_zone: 'r3s1d3nt9x7w',
    dc_zone_2: 'd4c2z6n8q1p0',
    mob_zone: 'm0b1l3z9k7j5',
    old_zone: 'o1d2z3n4e5x6',
  },
} as const;

/** A small deterministic generator, so the seed is the same on every start. */
export function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
