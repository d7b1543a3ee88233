import { Readable } from 'node:stream';
import { NETWORK_REALM, PROVIDER_TEST_HOST } from '../shared/brand.js';
import type { Forwarded, ForwardOptions } from './forward.js';

// The provider's test host as the proxy network answers it, offline. Egress does not apply to such a
// request (the network dials nothing); a tunnel to the test host, or HTTPS, is dialled, so it is egress
// as any other target and refused unless allowed (traffic.test.ts).

/** An exit peer of a Zone, with what targeting and the test host's answer read of it. */
export interface Exit {
  ip: string;
  country: string;
  city?: string;
  state?: string;
  asn?: string;
}

/** A request the network answers itself (testHostAnswer): plain HTTP to the provider's test host; a tunnel to it is egress as any. */
export const answeredHere = (url: URL): boolean => url.protocol === 'http:' && url.hostname.toLowerCase() === PROVIDER_TEST_HOST;

/**
 * A plain request to the provider's test host (the real manager's default `test_url`, which its
 * status check asks for through each port), answered by the network itself, offline: 200 with JSON
 * of what the sandbox knows of the exit peer (its IP, country, ASN, state and city, as far as the
 * seed names them). The provider's own answer describes the peer's location with more fields, which
 * the sandbox does not invent.
 */
export function testHostAnswer(exit: Exit, req: Omit<ForwardOptions, 'ca'>): Forwarded {
  if (req.body instanceof Readable) req.body.resume();
  const asnum = Number(String(exit.asn ?? '').replace(/^AS/i, ''));
  const geo = { ...(exit.city ? { city: exit.city } : {}), ...(exit.state ? { region: exit.state } : {}) };
  const body = Buffer.from(
    JSON.stringify({
      ip: exit.ip,
      country: exit.country.toUpperCase(),
      ...(exit.asn ? { asn: { asnum: Number.isFinite(asnum) ? asnum : exit.asn } } : {}),
      geo,
    }),
  );
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), server: NETWORK_REALM };
  return { status: 200, statusText: 'OK', headers, rawHeaders: Object.entries(headers).flat(), body: Readable.from([body]) };
}
