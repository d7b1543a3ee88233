import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../domain/state.js';
import { HttpError } from '../errors.js';
import type { OperationDef } from '../router/spec.js';

/** Who is calling, after authentication. */
export interface AccountAuth {
  scheme: 'token' | 'basic' | 'zone';
  customer: string;
  /** Account admins may change the account status. */
  admin: boolean;
  perms: readonly string[];
  /** With the Zone credential header: the Zone it names, and the optional `-country-` suffix. */
  zone?: string;
  country?: string;
}

export const UNAUTHORIZED = 'Auth method is not supported';
/** What a token without a permission the operation needs is told (observed in the provider's clients: see the spec's Forbidden). */
export const LACKS_PERMISSIONS = 'Your API key lacks the required permissions';
// The documentation's layout, with the parts free of dashes (the separator): see the spec's x-value-pattern.
// The brand word stands where the documentation writes `service` (observed: `X-Lum-Auth: lum-customer-…`).
const ZONE_CREDENTIAL = /^([A-Za-z0-9]+)-customer-([^-]+)-zone-([^-]+)-key-([^-]+)(?:-country-([A-Za-z]{2}))?$/;
/** The Zone credential header: `X-Service-Auth` as documented, `X-<brand>-Auth` for any brand word (observed). */
const ZONE_HEADER = /^x-([a-z0-9]+)-auth$/;
/** HTTP basic is deprecated since 01-Jan-2021 (RFC 9745 form: `@` + epoch seconds). */
const BASIC_DEPRECATION = '@1609459200';

const refuse = (field: string, reason: string) => new HttpError(401, UNAUTHORIZED, { details: [{ field, reason }] });

export function authenticateAccount(store: Store, req: FastifyRequest, reply: FastifyReply, op: OperationDef): AccountAuth {
  const auth = identify(store, req, reply);
  for (const perm of op.permissions) {
    if (!auth.perms.includes(perm)) {
      throw new HttpError(403, `${LACKS_PERMISSIONS}: this operation requires the ${perm} permission`);
    }
  }
  return auth;
}

function identify(store: Store, req: FastifyRequest, reply: FastifyReply): AccountAuth {
  const zoneHeaders = Object.keys(req.headers).filter((h) => ZONE_HEADER.test(h));
  if (zoneHeaders.length > 1) throw refuse(`header.${zoneHeaders.join(', header.')}`, 'send one Zone credential header');
  const headerName = zoneHeaders[0];
  if (headerName !== undefined) {
    const brand = (ZONE_HEADER.exec(headerName) as RegExpExecArray)[1] as string;
    const field = `header.X-${brand.charAt(0).toUpperCase()}${brand.slice(1)}-Auth`;
    const zoneHeader = req.headers[headerName];
    const m = typeof zoneHeader === 'string' ? ZONE_CREDENTIAL.exec(zoneHeader) : null;
    if (!m) throw refuse(field, `must be ${brand}-customer-<CUSTOMER>-zone-<ZONE>-key-<PASSWORD>[-country-<CC>]`);
    const [, valueBrand, customer, zoneName, password, country] = m as unknown as [
      string,
      string,
      string,
      string,
      string,
      string | undefined,
    ];
    if (valueBrand.toLowerCase() !== brand) throw refuse(field, `the value must start with ${brand}-, the brand word of the header's name`);
    const zone = customer === store.account.customer ? store.zones.get(zoneName) : undefined;
    if (!zone?.passwords.includes(password)) throw refuse(field, 'unknown customer, Zone or password');
    return { scheme: 'zone', customer, admin: false, perms: zone.perms, zone: zoneName, country: country?.toLowerCase() };
  }
  const header = req.headers.authorization;
  if (typeof header !== 'string') throw new HttpError(401, UNAUTHORIZED);
  const space = header.indexOf(' ');
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (scheme === 'bearer') {
    const token = store.tokens.get(value);
    if (!token) throw refuse('header.Authorization', 'unknown token');
    return { scheme: 'token', customer: store.account.customer, admin: token.admin === true, perms: token.perms ?? store.account.perms };
  }
  if (scheme === 'basic') {
    const cred = store.basic.get(Buffer.from(value, 'base64').toString('utf8'));
    if (!cred) throw refuse('header.Authorization', 'unknown username or password');
    reply.header('Deprecation', BASIC_DEPRECATION);
    return { scheme: 'basic', customer: store.account.customer, admin: cred.admin === true, perms: cred.perms ?? store.account.perms };
  }
  throw refuse('header.Authorization', 'must be Bearer <API_TOKEN> (or the deprecated Basic)');
}

/**
 * With the Zone credential the header names the customer and the Zone, and the request omits them
 * (the provider's documentation). Some operations still declare them as required query parameters, so they are filled
 * in from the credential before validation.
 */
export function fillFromCredential(req: FastifyRequest, op: OperationDef, auth: AccountAuth | undefined): void {
  if (auth?.scheme !== 'zone' || op.method !== 'GET') return;
  const query = req.query as Record<string, unknown>;
  for (const p of op.params) {
    if (p.in !== 'query' || query[p.name] !== undefined) continue;
    if (p.name === 'customer') query.customer = auth.customer;
    else if (p.name === 'zone') query.zone = auth.zone;
  }
}
