/** JSON Schema (2020-12) of a seed / state file: a bad seed fails start-up with the path of each problem. */

const str = { type: 'string' } as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;
const bool = { type: 'boolean' } as const;
const num = { type: 'number' } as const;
const strings = { type: 'array', items: str } as const;
const country = { type: 'string', pattern: '^[a-z]{2}$' } as const;
const name = { type: 'string', pattern: '^[A-Za-z0-9_]{1,64}$' } as const;
const obj = (properties: Record<string, unknown>, required: string[], extra = false) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: extra,
});

const credential = { admin: bool, perms: strings };

const zone = obj(
  {
    name,
    passwords: { type: 'array', items: { type: 'string', pattern: '^[^-]+$' } },
    perms: strings,
    plans: { type: 'array', minItems: 1, items: { type: 'object', required: ['start'], properties: { start: str } } },
    whitelist: strings,
    domains: obj({ whitelist: strings, blacklist: strings }, ['whitelist']),
    disabled: bool,
    uptime_100: bool,
    ips: strings,
    gips: strings,
    recent_ips: strings,
    price_per_gb: { type: 'number', minimum: 0 },
  },
  ['name', 'passwords', 'perms', 'plans', 'whitelist', 'domains', 'disabled', 'uptime_100', 'ips', 'gips', 'recent_ips', 'price_per_gb'],
);

export const seedSchema = obj(
  {
    format: { const: 'zone-api-sandbox-state' },
    version: { const: 1 },
    saved_at: str,
    account: obj(
      {
        customer: { type: 'string', pattern: '^[^-]{1,64}$' },
        status: nonEmpty,
        balance: num,
        pending_costs: num,
        perms: strings,
        tokens: { type: 'array', items: obj({ token: nonEmpty, ...credential }, ['token']) },
        basic: { type: 'array', items: obj({ username: nonEmpty, password: nonEmpty, ...credential }, ['username', 'password']) },
        zones: { type: 'array', items: zone },
      },
      ['customer', 'status', 'balance', 'pending_costs', 'perms', 'tokens', 'basic', 'zones'],
    ),
    pools: obj(
      {
        ips: {
          type: 'array',
          items: obj(
            {
              ip: { type: 'string', format: 'ipv4' },
              country,
              city: nonEmpty,
              shared: bool,
              ext: obj({ dbip: country, ip2location: country, google: country }, []),
              blocked_domains: strings,
              released_at: str,
            },
            ['ip', 'country', 'city'],
          ),
        },
        gips: {
          type: 'array',
          items: obj({ vip: { type: 'string', pattern: '^[a-z]{2}_[0-9]+_[^_]+_[^_]+_[0-9]+$' }, country }, ['vip', 'country']),
        },
      },
      ['ips', 'gips'],
    ),
    cities: {
      type: 'object',
      propertyNames: country,
      additionalProperties: { type: 'array', items: obj({ c_id: str, region: str, r_id: str, country: str, name: str }, ['name']) },
    },
    peers: { type: 'array', items: obj({ ip: nonEmpty, country, asn: str, zone: name, vip: str }, ['ip', 'country', 'asn']) },
    network_status: obj({ all: bool, res: bool, dc: bool, mobile: bool }, ['all', 'res', 'dc', 'mobile']),
    req_logs: {
      type: 'array',
      items: obj(
        {
          zone: name,
          ts: { type: 'string', format: 'date-time' },
          status: obj({ code: { type: 'integer' }, message: str }, ['code', 'message']),
          tun: obj({ session: str }, ['session']),
          ua: str,
          dst: obj({ host: str, url: str }, ['host', 'url']),
          bw: { type: 'integer', minimum: 0 },
          ip: str,
        },
        ['zone', 'ts', 'status', 'tun', 'ua', 'dst', 'bw'],
      ),
    },
    usage: {
      type: 'array',
      items: {
        ...obj(
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
    charges: { type: 'array', items: obj({ zone: name, at: str, amount: num, reason: str }, ['zone', 'at', 'amount', 'reason']) },
    manager: obj(
      {
        version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+' },
        releases: {
          type: 'array',
          minItems: 1,
          items: obj({ ver: nonEmpty, type: str, changes: { type: 'array', items: obj({ type: str, text: str }, ['text']) } }, [
            'ver',
            'type',
            'changes',
          ]),
        },
        settings: obj(
          {
            customer: nonEmpty,
            zone: name,
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
          items: { type: 'object', required: ['port'], properties: { port: { type: 'integer', minimum: 1000, maximum: 65535 } } },
        },
        bans: {
          type: 'array',
          items: obj(
            { port: { type: 'integer' }, ip: nonEmpty, domain: { type: ['string', 'null'] }, to: { type: 'number', minimum: 0 } },
            ['port', 'ip', 'domain', 'to'],
          ),
        },
        sessions: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
        users: { type: 'array', items: obj({ email: nonEmpty, password: str }, ['email']) },
        har: { type: 'array', items: { type: 'object' } },
        general_log: strings,
      },
      ['version', 'releases', 'settings', 'token', 'token_issued', 'ports', 'bans', 'sessions', 'users', 'har', 'general_log'],
    ),
  },
  ['account', 'pools', 'cities', 'peers', 'network_status', 'req_logs', 'usage', 'charges', 'manager'],
);
