import type {
  AccountState,
  Ban,
  BasicCredential,
  Charge,
  City,
  GeoExt,
  KeptStats,
  ManagerSettings,
  ManagerState,
  Peer,
  PoolGip,
  PoolIp,
  ProxyPortConfig,
  Release,
  ReqLog,
  StateData,
  StoredPlan,
  TokenCredential,
  UsageDay,
  ZoneState,
} from './types.js';

/** JSON Schema (2020-12) of a seed / state file: a bad seed fails start-up with the path of each problem. */

const str = { type: 'string' } as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;
const bool = { type: 'boolean' } as const;
const num = { type: 'number' } as const;
const strings = { type: 'array', items: str } as const;
const country = { type: 'string', pattern: '^[a-z]{2}$' } as const;
const name = { type: 'string', pattern: '^[A-Za-z0-9_]{1,64}$' } as const;
type Schema = Record<string, unknown>;
/** `T` without its index signature (an open object's `[key: string]: unknown`): the fields it names. */
type Named<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
/** The named keys of `T` that are not optional. */
type RequiredKeys<T> = { [K in keyof Named<T>]-?: object extends Pick<Named<T>, K> ? never : K }[keyof Named<T>];
/** `L` when it names every required key of `T`; otherwise a type that says which are missing. */
type AllRequired<T, L extends readonly PropertyKey[]> = [Exclude<RequiredKeys<T>, L[number]>] extends [never]
  ? L
  : { missing: Exclude<RequiredKeys<T>, L[number]> };

/**
 * The schema of an object of the state type `T`, tied to it: a schema for every field of `T` (no
 * more, no fewer) and, as `required`, exactly the fields `T` does not make optional. A field added
 * to a type and not here (or the other way round) fails the build.
 */
const obj =
  <T>() =>
  <const L extends readonly RequiredKeys<T>[]>(
    properties: { [K in keyof Named<T>]-?: Schema },
    required: L & AllRequired<T, L>,
    extra = false,
  ) => ({
    type: 'object',
    properties,
    required,
    additionalProperties: extra,
  });

/** Like `obj`, for a type the spec describes in full (a port, a plan): only the fields the seed insists on. */
const open =
  <T>() =>
  <const L extends readonly RequiredKeys<T>[]>(properties: { [K in keyof Named<T>]?: Schema }, required: L & AllRequired<T, L>) => ({
    type: 'object',
    properties,
    required,
  });

const credential = { admin: bool, perms: strings };
/** Kept recent statistics (`RecentStat`): a key and its counts. */
const statList = {
  type: 'array',
  items: { type: 'object', required: ['key', 'reqs', 'success', 'in_bw', 'out_bw'], properties: { key: { type: ['integer', 'string'] } } },
} as const;

const zone = obj<ZoneState>()(
  {
    name,
    passwords: { type: 'array', items: { type: 'string', pattern: '^[^-]+$' } },
    perms: strings,
    plans: { type: 'array', minItems: 1, items: open<StoredPlan>()({ start: str }, ['start']) },
    whitelist: strings,
    domains: obj<ZoneState['domains']>()({ whitelist: strings, blacklist: strings }, ['whitelist']),
    disabled: bool,
    uptime_100: bool,
    ips: strings,
    gips: strings,
    recent_ips: strings,
    price_per_gb: { type: 'number', minimum: 0 },
    unavailable_ips: strings,
    pending_replacement: {
      type: 'array',
      items: obj<NonNullable<ZoneState['pending_replacement']>[number]>()(
        { due_date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }, ips: strings },
        ['due_date', 'ips'],
      ),
    },
  },
  ['name', 'passwords', 'perms', 'plans', 'whitelist', 'domains', 'disabled', 'uptime_100', 'ips', 'gips', 'recent_ips', 'price_per_gb'],
);

export const seedSchema = obj<StateData>()(
  {
    format: { const: 'zone-api-sandbox-state' },
    version: { const: 1 },
    saved_at: str,
    account: obj<AccountState>()(
      {
        answer_forms: { type: 'string', enum: ['live', 'seed'] },
        customer: { type: 'string', pattern: '^[^-]{1,64}$' },
        status: nonEmpty,
        balance: num,
        pending_costs: num,
        perms: strings,
        tokens: { type: 'array', items: obj<TokenCredential>()({ token: nonEmpty, ...credential }, ['token']) },
        basic: {
          type: 'array',
          items: obj<BasicCredential>()({ username: nonEmpty, password: nonEmpty, ...credential }, ['username', 'password']),
        },
        zones: { type: 'array', items: zone },
      },
      ['customer', 'status', 'balance', 'pending_costs', 'perms', 'tokens', 'basic', 'zones'],
    ),
    pools: obj<StateData['pools']>()(
      {
        ips: {
          type: 'array',
          items: obj<PoolIp>()(
            {
              ip: { type: 'string', format: 'ipv4' },
              country,
              city: nonEmpty,
              shared: bool,
              ext: obj<GeoExt>()({ dbip: country, ip2location: country, google: country }, []),
              blocked_domains: strings,
              released_at: str,
            },
            ['ip', 'country', 'city'],
          ),
        },
        gips: {
          type: 'array',
          items: obj<PoolGip>()({ vip: { type: 'string', pattern: '^[a-z]{2}_[0-9]+_[^_]+_[^_]+_[0-9]+$' }, country }, ['vip', 'country']),
        },
      },
      ['ips', 'gips'],
    ),
    cities: {
      type: 'object',
      propertyNames: country,
      additionalProperties: { type: 'array', items: obj<City>()({ c_id: str, region: str, r_id: str, country: str, name: str }, ['name']) },
    },
    peers: { type: 'array', items: obj<Peer>()({ ip: nonEmpty, country, asn: str, zone: name, vip: str }, ['ip', 'country', 'asn']) },
    network_status: obj<StateData['network_status']>()({ all: bool, res: bool, dc: bool, mobile: bool }, ['all', 'res', 'dc', 'mobile']),
    req_logs: {
      type: 'array',
      items: obj<ReqLog>()(
        {
          zone: name,
          ts: { type: 'string', format: 'date-time' },
          status: obj<ReqLog['status']>()({ code: { type: 'integer' }, message: str }, ['code', 'message']),
          tun: obj<ReqLog['tun']>()({ session: str }, ['session']),
          ua: str,
          dst: obj<ReqLog['dst']>()({ host: str, url: str }, ['host', 'url']),
          bw: { type: 'integer', minimum: 0 },
          ip: str,
        },
        ['zone', 'ts', 'status', 'tun', 'ua', 'dst', 'bw'],
      ),
    },
    usage: {
      type: 'array',
      items: {
        ...obj<UsageDay>()(
          {
            zone: name,
            date: { type: 'string', format: 'date' },
            days_ago: { type: 'integer', minimum: 0 },
            bw_dn: { type: 'number', minimum: 0 },
            bw_up: { type: 'number', minimum: 0 },
          },
          ['zone', 'bw_dn', 'bw_up'],
        ),
        oneOf: [{ required: ['date'] }, { required: ['days_ago'] }],
      },
    },
    charges: { type: 'array', items: obj<Charge>()({ zone: name, at: str, amount: num, reason: str }, ['zone', 'at', 'amount', 'reason']) },
    manager: obj<ManagerState>()(
      {
        version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+' },
        releases: {
          type: 'array',
          minItems: 1,
          items: obj<Release>()(
            {
              ver: nonEmpty,
              type: str,
              changes: { type: 'array', items: obj<Release['changes'][number]>()({ type: str, text: str }, ['text']) },
            },
            ['ver', 'type', 'changes'],
          ),
        },
        settings: obj<ManagerSettings>()(
          {
            customer: nonEmpty,
            // Any text, as the real manager stores it (an update's `""` or unknown Zone, saved and loaded again);
            // a seed's names a Zone of the account (seed-check.ts).
            zone: str,
            password: str,
            www_whitelist_ips: strings,
            whitelist_ips: strings,
            fixed_whitelist_ips: strings,
            pending_ips: strings,
            pending_www_ips: strings,
            read_only: bool,
            config: str,
            test_url: str,
            logs: { type: 'integer', minimum: 0 },
            log: str,
            har_limit: { type: 'integer', minimum: -1 },
            request_stats: bool,
            dropin: bool,
            zagent: bool,
            sync_config: bool,
          },
          [
            'customer',
            'zone',
            'www_whitelist_ips',
            'whitelist_ips',
            'fixed_whitelist_ips',
            'pending_ips',
            'pending_www_ips',
            'read_only',
            'config',
            'test_url',
            'logs',
            'log',
            'har_limit',
            'request_stats',
            'dropin',
            'zagent',
            'sync_config',
          ],
        ),
        token: { type: ['string', 'null'] },
        token_issued: { type: 'array', items: num },
        ports: {
          type: 'array',
          items: open<ProxyPortConfig>()({ port: { type: 'integer', minimum: 1000, maximum: 65535 } }, ['port']),
        },
        bans: {
          type: 'array',
          items: obj<Ban>()(
            { port: { type: 'integer' }, ip: nonEmpty, domain: { type: ['string', 'null'] }, to: { type: 'number', minimum: 0 } },
            ['port', 'ip', 'domain', 'to'],
          ),
        },
        sessions: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
        users: { type: 'array', items: obj<ManagerState['users'][number]>()({ email: nonEmpty, password: str }, ['email']) },
        har: { type: 'array', items: { type: 'object' } },
        kept_stored: { type: 'array', items: { type: 'integer', minimum: 1000, maximum: 65535 } },
        stored_stopped: {
          type: 'array',
          items: open<ProxyPortConfig>()({ port: { type: 'integer', minimum: 1000, maximum: 65535 } }, ['port']),
        },
        stats_kept: obj<KeptStats>()({ status_code: statList, hostname: statList, protocol: statList }, [
          'status_code',
          'hostname',
          'protocol',
        ]),
        general_log: strings,
      },
      ['version', 'releases', 'settings', 'token', 'token_issued', 'ports', 'bans', 'sessions', 'users', 'har', 'general_log'],
    ),
  },
  ['account', 'pools', 'cities', 'peers', 'network_status', 'req_logs', 'usage', 'charges', 'manager'],
);
