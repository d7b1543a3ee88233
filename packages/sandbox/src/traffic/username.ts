import type { ProxyPortConfig } from '../domain/types.js';

// The provider's proxy username: `<brand>-customer-<CUSTOMER>-zone-<ZONE>[-<key>-<value>…]`, as a
// proxy port sends it upstream and the proxy network reads it. The brand word varies (the provider's documentation
// writes `service`, the real manager sends `brd`); the network answers in headers named after it.

export interface ProxyUser {
  brand: string;
  customer: string;
  zone: string;
  /** The targeting and session options, e.g. `{country: 'us', session: 'abc'}`. */
  options: Record<string, string>;
}

/**
 * Options the network knows. Others are accepted and ignored, as the provider's network accepts them
 * (the real manager sends `debug-full`, for one); `strict` refuses them.
 */
export const USER_OPTIONS = ['country', 'state', 'city', 'zip', 'asn', 'os', 'session', 'ip', 'gip', 'dns', 'mobile', 'vip', 'route_err'];

/** The parsed username, or a reason it is not one (for the 407 the network answers). */
export function parseUsername(username: string, strict = false): ProxyUser | { error: string } {
  const parts = username.split('-');
  if (parts.length < 5 || parts[1] !== 'customer' || parts[3] !== 'zone')
    return { error: 'the username is not <brand>-customer-<CUSTOMER>-zone-<ZONE>[-<key>-<value>...]' };
  const [brand, , customer, , zone, ...rest] = parts as [string, string, string, string, string, ...string[]];
  if (!/^[a-z0-9]+$/i.test(brand)) return { error: 'the brand word of the username is not alphanumeric' };
  // What the username holds past its Zone is never echoed: a password appended to it (`…-zone-z-<password>`)
  // would come back in the 407.
  if (rest.length % 2) return { error: 'the last option of the username has no value (a password goes in the password, not the username)' };
  const options: Record<string, string> = {};
  for (let i = 0; i < rest.length; i += 2) {
    const key = (rest[i] as string).toLowerCase();
    const value = rest[i + 1] as string;
    if (!/^[a-z][a-z0-9_]*$/.test(key)) return { error: `username option ${i / 2 + 1} is not a name (letters, digits and _)` };
    if (strict && !USER_OPTIONS.includes(key))
      return { error: `the username option ${key} is not one of ${USER_OPTIONS.join(', ')} (--strict)` };
    if (!value) return { error: `the username option ${key} is empty` };
    if (key === 'session' && !/^[A-Za-z0-9_]+$/.test(value)) return { error: 'a session id is alphanumeric (no - or *)' };
    options[key] = value;
  }
  return { brand, customer, zone, options };
}

/** The options a port's configuration puts into its upstream username, in the real manager's order. */
const PORT_OPTIONS = ['country', 'state', 'city', 'zip', 'asn', 'os', 'ip', 'vip', 'dns', 'mobile'] as const;

/**
 * The customer a port names upstream: its own `customer` when it has one (lib/mixins/mgr_proxy.js 646,
 * `p.customer || defaults.customer`), written as the real manager writes a username's values (lower
 * case, spaces as `_`; lib/username.js 96-111), else the manager's. A customer the network does not
 * know is then refused there (407), as the provider's network refuses it.
 */
export function portCustomer(cfg: ProxyPortConfig, customer: string): string {
  const own = (cfg as { customer?: unknown }).customer;
  return own ? String(own).toLowerCase().replace(/ /g, '_') : customer;
}

/**
 * The username a proxy port sends upstream for one request. An empty Zone (the settings' `zone` set to
 * `""`) is left out, as the real manager leaves out every empty value (lib/username.js 98-100): the
 * network then refuses the username.
 */
export function portUsername(cfg: ProxyPortConfig, customer: string, zone: string, session: string | undefined, brand: string): string {
  let out = `${brand}-customer-${customer}${zone ? `-zone-${zone}` : ''}`;
  const c = cfg as Record<string, unknown>;
  for (const key of PORT_OPTIONS) {
    const v = c[key];
    if (v === undefined || v === null || v === '' || v === false || v === '*') continue;
    out += `-${key}-${v === true ? 'true' : String(v).toLowerCase()}`;
  }
  if (session) out += `-session-${session}`;
  return out;
}
