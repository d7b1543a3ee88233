import { viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { C, RES, RES_PW, useTrafficSandbox } from '../helpers.js';

// No secret leaves in an answer: the network's 407 for a malformed username once echoed a password
// appended to it (`…-zone-res_zone-<password>`). (The clients' redirects are tested in client-core.)
const t = useTrafficSandbox();
const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`;

describe('the 407 of a malformed username echoes nothing past the Zone', () => {
  it.each([
    ['a password appended as the last part', `lum-customer-${C}-zone-${RES}-${RES_PW}`],
    ['a password appended as an option name', `lum-customer-${C}-zone-${RES}-${RES_PW}!-x`],
  ])('%s', async (_, user) => {
    const r = await viaProxy(t.sandbox.networkUrl as string, 'http://127.0.0.1:9/', { auth: basic(user, 'wrong') });
    expect(r.status).toBe(407);
    expect(r.text).toMatch(/Proxy authentication failed/);
    expect(r.text).not.toContain(RES_PW);
    expect(JSON.stringify(r.headers)).not.toContain(RES_PW);
  });
});
