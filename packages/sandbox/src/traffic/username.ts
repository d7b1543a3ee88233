import { PORT_DEFAULTS } from '../domain/port-defaults.js';
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
export const USER_OPTIONS = [
  'country',
  'state',
  'city',
  'zip',
  'asn',
  'os',
  'session',
  'ip',
  'gip',
  'dns',
  'mobile',
  'vip',
  'route_err',
  'debug',
];

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

/**
 * The options a port's configuration puts into its upstream username, in the real manager's order
 * (lib/username.js 30-32 `fields`, the order `_calc` writes them in: lib/username.js 96-111).
 */
const PORT_OPTIONS = ['country', 'state', 'city', 'zip', 'session', 'asn', 'dns', 'ip', 'mobile', 'vip', 'debug', 'os'] as const;

/**
 * The customer a port names upstream: its own `customer` when it has one (lib/mixins/mgr_proxy.js 646,
 * `p.customer || defaults.customer`), written as the real manager writes a username's values (lower
 * case, spaces as `_`; lib/username.js 96-111), else the manager's. A customer the network does not
 * know is then refused there (407), as the provider's network refuses it.
 */
export function portCustomer(cfg: ProxyPortConfig, customer: string): string {
  const own: unknown = cfg.customer;
  return own ? String(own).toLowerCase().replace(/ /g, '_') : customer;
}

/** A city as the real manager writes it into a username: diacritics dropped, lower case, letters and digits only (lib/username.js 37-38). */
const cityValue = (v: string) =>
  v
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

/**
 * The username a proxy port sends upstream for one request, as the real manager builds it
 * (lib/context.js 188-231, lib/username.js 115-161): the port's options, those a request's control headers
 * name over them (`x-lpm-country`, …: control-headers.ts), then its rules: an `ip` leaves the session out,
 * `state` and `zip` need the Zone's permission of that name (lib/mixins/mgr_proxy.js 52-53), `os` turns
 * `mobile` off (`mobile-false` when both are set), `dns: local` is left out. An empty Zone (the settings'
 * `zone` set to `""`) is left out, as the real manager leaves out every empty value (lib/username.js
 * 98-100): the network then refuses the username.
 */
export function portUsername(
  cfg: ProxyPortConfig,
  customer: string,
  zone: string,
  session: string | undefined,
  brand: string,
  o: { perms?: readonly string[]; request?: Partial<Record<string, string>> } = {},
): string {
  let out = `${brand}-customer-${customer}${zone ? `-zone-${zone}` : ''}`;
  // The port's `debug` as it runs (its default `none` too: lib/context.js 225), sent as every other option.
  const c: Record<string, unknown> = {
    ...(cfg as Record<string, unknown>),
    debug: cfg.debug ?? PORT_DEFAULTS.debug,
    ...(o.request ?? {}),
    session,
  };
  if (c.ip) delete c.session;
  if (!c.mobile) delete c.mobile;
  if (c.mobile && c.os) c.mobile = false;
  else if (c.os) delete c.mobile;
  const perms = o.perms;
  // Without the Zone's permissions at hand (a caller that has none), state and zip are kept.
  if (perms && !perms.includes('state')) delete c.state;
  if (perms && !perms.includes('zip')) delete c.zip;
  if (c.dns === 'local') delete c.dns;
  for (const key of PORT_OPTIONS) {
    const v = c[key];
    if (v === undefined || v === null || v === '' || v === '*') continue;
    const text = key === 'city' ? cityValue(String(v)) : String(v).toLowerCase().replace(/ /g, '_');
    out += `-${key}-${text}`;
  }
  return out;
}
