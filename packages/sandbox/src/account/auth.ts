import type { ZoneCredential } from '@zone-api/spec/model';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../domain/state.js';
import type { OperationDef } from '../router/spec.js';
import { HttpError } from '../shared/errors.js';

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
/** HTTP basic is deprecated since 01-Jan-2021 (RFC 9745 form: `@` + epoch seconds). */
const BASIC_DEPRECATION = '@1609459200';

/**
 * How the sandbox reads the Zone credential header: the spec's facts (its security scheme's name and
 * value patterns, read by the model), the observed forms unless `strict`, which takes the documented
 * name and layout only.
 */
export interface CredentialRules {
  credential: ZoneCredential;
  strict?: boolean;
}

const refuse = (field: string, reason: string) => new HttpError(401, UNAUTHORIZED, { details: [{ field, reason }] });
/** A header's name as a field path writes it: `x-lum-auth` → `X-Lum-Auth`. */
const headerName = (h: string) => h.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

export function authenticateAccount(
  rules: CredentialRules,
  store: Store,
  req: FastifyRequest,
  reply: FastifyReply,
  op: OperationDef,
): AccountAuth {
  const auth = identify(rules, store, req, reply);
  for (const perm of op.permissions) {
    if (!auth.perms.includes(perm)) {
      throw new HttpError(403, `${LACKS_PERMISSIONS}: this operation requires the ${perm} permission`);
    }
  }
  return auth;
}

function identify({ credential, strict }: CredentialRules, store: Store, req: FastifyRequest, reply: FastifyReply): AccountAuth {
  const documentedName = credential.name.toLowerCase();
  const carries = (h: string) => (strict ? h === documentedName : credential.names.test(h));
  const zoneHeaders = Object.keys(req.headers).filter(carries);
  if (zoneHeaders.length > 1) throw refuse(`header.${zoneHeaders.map(headerName).join(', header.')}`, 'send one Zone credential header');
  const name = zoneHeaders[0];
  if (name !== undefined) {
    const field = `header.${headerName(name)}`;
    const brand = credential.names.exec(name)?.groups?.brand;
    const layout = brand
      ? `${brand.toLowerCase()}-customer-<CUSTOMER>-zone-<ZONE>-key-<PASSWORD>[-country-<cc>]`
      : credential.documented.source;
    const value = req.headers[name];
    const parts =
      typeof value === 'string' && (!strict || credential.documented.test(value)) ? credential.values.exec(value)?.groups : undefined;
    if (!parts) throw refuse(field, `must be ${layout}`);
    const { customer, zone: zoneName, key, country } = parts as Record<string, string | undefined>;
    if (parts.brand !== undefined && brand !== undefined && parts.brand !== brand.toLowerCase()) {
      throw refuse(field, `the value must start with ${brand.toLowerCase()}-, the brand word of the header's name`);
    }
    const zone = customer === store.account.customer && zoneName !== undefined ? store.zones.get(zoneName) : undefined;
    if (!zone || key === undefined || !zone.passwords.includes(key)) throw refuse(field, 'unknown customer, Zone or password');
    return {
      scheme: 'zone',
      customer: customer as string,
      admin: false,
      perms: zone.perms,
      zone: zoneName,
      ...(country ? { country } : {}),
    };
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
