import { pricePerGb } from './money.js';
import { lcg, SEED } from './seed-ids.js';
import { managerSeed } from './seed-manager.js';
import type { City, PoolGip, PoolIp, ReqLog, StateData, UsageDay, ZoneState } from './types.js';

export { SEED } from './seed-ids.js';

// Addresses come from the ranges reserved for documentation and benchmarking (RFC 5737, RFC 2544):
// the sandbox never connects to any of them.
const CITY_BLOCKS: Array<[prefix: string, start: number, country: string, city: string, google?: string]> = [
  ['192.0.2', 1, 'us', 'newyork'],
  ['192.0.2', 41, 'us', 'losangeles'],
  ['192.0.2', 81, 'us', 'chicago'],
  ['192.0.2', 121, 'gb', 'london', 'ie'],
  ['192.0.2', 161, 'de', 'frankfurt', 'nl'],
  ['192.0.2', 201, 'fr', 'paris'],
  ['198.51.100', 1, 'jp', 'tokyo'],
  ['198.51.100', 41, 'br', 'saopaulo'],
  ['198.51.100', 81, 'nl', 'amsterdam', 'de'],
  ['198.51.100', 121, 'ca', 'toronto', 'us'],
];

function ipPool(): PoolIp[] {
  const out: PoolIp[] = [];
  for (const [prefix, start, country, city, google] of CITY_BLOCKS) {
    for (let i = 0; i < 40; i++) {
      const ip = `${prefix}.${start + i}`;
      // Every tenth IP is placed elsewhere by Google's data, so the geo_db filter of a count matters.
      const g = google && i % 10 === 9 ? google : country;
      const entry: PoolIp = { ip, country, city, shared: i >= 20, ext: { dbip: country, ip2location: country, google: g } };
      if (i % 8 === 3) entry.blocked_domains = ['blocked.example.com'];
      out.push(entry);
    }
  }
  return out;
}

const GIP_GROUPS: Array<[country: string, asn: string, region: string, city: string]> = [
  ['us', '7922', 'ny', 'newyork'],
  ['us', '7018', 'ca', 'losangeles'],
  ['gb', '2856', 'en', 'london'],
  ['de', '3320', 'he', 'frankfurt'],
];

function gipPool(): PoolGip[] {
  return GIP_GROUPS.flatMap(([country, asn, region, city]) =>
    Array.from({ length: 12 }, (_, i) => ({ vip: `${country}_${asn}_${region}_${city}_${i + 1}`, country })),
  );
}

const CITIES: Record<string, Array<[name: string, region: string, r_id: string]>> = {
  us: [
    ['New York', 'New York', 'NY'],
    ['Los Angeles', 'California', 'CA'],
    ['Chicago', 'Illinois', 'IL'],
    ['Cherokee', 'Texas', 'TX'],
  ],
  gb: [
    ['London', 'England', 'ENG'],
    ['Manchester', 'England', 'ENG'],
  ],
  de: [
    ['Frankfurt am Main', 'Hesse', 'HE'],
    ['Berlin', 'Berlin', 'BE'],
  ],
  fr: [['Paris', 'Ile-de-France', 'IDF']],
  jp: [['Tokyo', 'Tokyo', '13']],
  br: [['Sao Paulo', 'Sao Paulo', 'SP']],
  nl: [['Amsterdam', 'North Holland', 'NH']],
  ca: [['Toronto', 'Ontario', 'ON']],
};
const COUNTRY_NAMES: Record<string, string> = {
  us: 'United States',
  gb: 'United Kingdom',
  de: 'Germany',
  fr: 'France',
  jp: 'Japan',
  br: 'Brazil',
  nl: 'Netherlands',
  ca: 'Canada',
};

function cities(): Record<string, City[]> {
  return Object.fromEntries(
    Object.entries(CITIES).map(([cc, list]) => [
      cc,
      list.map(([name, region, r_id]) => ({ c_id: cc.toUpperCase(), region, r_id, country: COUNTRY_NAMES[cc] as string, name })),
    ]),
  );
}

const ZONE_NAMES = Object.keys(SEED.zones) as Array<keyof typeof SEED.zones>;

function reqLogs(): ReqLog[] {
  const rnd = lcg(7);
  const statuses: Array<[number, string]> = [
    [200, 'OK'],
    [200, 'OK'],
    [200, 'OK'],
    [200, 'OK'],
    [301, 'Moved Permanently'],
    [403, 'Forbidden'],
    [404, 'Not Found'],
    [502, 'Bad Gateway'],
  ];
  const hosts = ['example.com', 'example.org', 'api.example.net'];
  const uas = ['Mozilla/5.0 (X11; Linux x86_64)', 'curl/8.5.0', 'python-requests/2.31'];
  const zones = ['static_zone', 'res_zone', 'dc_zone_2', 'mob_zone'];
  const start = Date.parse('2024-05-01T00:00:00.000Z');
  return Array.from({ length: 60 }, (_, i) => {
    const [code, message] = statuses[Math.floor(rnd() * statuses.length)] as [number, string];
    const host = hosts[i % hosts.length] as string;
    return {
      zone: zones[i % zones.length] as string,
      ts: new Date(start + i * 3_600_000 + Math.floor(rnd() * 3_000_000)).toISOString(),
      status: { code, message },
      tun: { session: `sess_${(i % 6) + 1}` },
      ua: uas[i % uas.length] as string,
      dst: { host, url: `https://${host}/${['', 'products', 'search?q=proxy', 'login'][i % 4]}` },
      bw: 1000 + Math.floor(rnd() * 90_000),
      ip: `203.0.113.${10 + (i % 20)}`,
    };
  });
}

function usage(): UsageDay[] {
  const rnd = lcg(11);
  const out: UsageDay[] = [];
  for (const zone of ['static_zone', 'res_zone', 'dc_zone_2', 'mob_zone']) {
    for (let d = 59; d >= 0; d--) {
      const dn = Math.floor(200_000 + rnd() * 5_000_000);
      out.push({ zone, days_ago: d, bw_dn: dn, bw_up: Math.floor(dn / 20) });
    }
  }
  return out;
}

function zone(name: keyof typeof SEED.zones, rest: Omit<ZoneState, 'name' | 'passwords' | 'price_per_gb'>): ZoneState {
  return { name, passwords: [SEED.zones[name]], ...rest, price_per_gb: pricePerGb(rest.plans.at(-1)) };
}

function zones(): ZoneState[] {
  const start = '2024-05-01T10:20:30.123Z';
  return [
    zone('static_zone', {
      perms: ['city', 'asn', 'google', 'peers'],
      plans: [{ start, type: 'static', ips_type: 'shared', ip_alloc_preset: 'shared_block', bandwidth: 'payperusage', ips: 4 }],
      whitelist: ['203.0.113.7', '203.0.113.0/28'],
      domains: { whitelist: ['example.com'] },
      disabled: false,
      uptime_100: false,
      ips: ['192.0.2.21', '192.0.2.22', '192.0.2.23', '192.0.2.24'],
      gips: [],
      recent_ips: ['203.0.113.7', '203.0.113.8'],
    }),
    zone('res_zone', {
      perms: ['city', 'asn', 'vip', 'peers', 'peers_all'],
      plans: [
        {
          start,
          type: 'resident',
          ips_type: 'shared',
          bandwidth: 'payperusage',
          vip: true,
          vips_type: 'vip',
          vips: 3,
          vip_country: 'us',
          exclusive_sec: 86400,
          exclusive_type: 'days',
          exclusive_num: 1,
        },
      ],
      whitelist: ['any'],
      domains: { whitelist: [], blacklist: ['blocked.example.com'] },
      disabled: false,
      uptime_100: true,
      ips: [],
      gips: ['us_7922_ny_newyork_1', 'us_7922_ny_newyork_2', 'us_7922_ny_newyork_3'],
      recent_ips: ['203.0.113.20'],
    }),
    zone('dc_zone_2', {
      perms: ['city'],
      plans: [{ start, type: 'static', ips_type: 'dedicated', bandwidth: 'unlimited', city: true, ips: 2 }],
      whitelist: ['any'],
      domains: { whitelist: [] },
      disabled: false,
      uptime_100: false,
      ips: ['192.0.2.121', '192.0.2.122'],
      gips: [],
      recent_ips: [],
    }),
    zone('mob_zone', {
      perms: ['mobile', 'city', 'peers'],
      plans: [{ start, type: 'resident', ips_type: 'shared', bandwidth: 'payperusage', mobile: true }],
      whitelist: ['any'],
      domains: { whitelist: [] },
      disabled: false,
      uptime_100: false,
      ips: [],
      gips: [],
      recent_ips: ['203.0.113.30', '203.0.113.31'],
    }),
    zone('old_zone', {
      perms: [],
      plans: [{ start: '2023-01-15T08:00:00.000Z', type: 'static', ips_type: 'shared', bandwidth: 'payperusage', ips: 0 }],
      whitelist: ['any'],
      domains: { whitelist: [] },
      disabled: true,
      uptime_100: false,
      ips: [],
      gips: [],
      recent_ips: [],
    }),
  ];
}

function peers(): StateData['peers'] {
  const out: StateData['peers'] = [];
  const groups: Array<[string, string, string]> = [
    ['us', '7922', 'res_zone'],
    ['us', '7018', 'res_zone'],
    ['gb', '2856', 'mob_zone'],
    ['de', '3320', 'res_zone'],
  ];
  groups.forEach(([country, asn, zone], g) => {
    for (let i = 0; i < 6; i++) {
      const vip = country === 'us' && asn === '7922' && i < 3 ? `us_7922_ny_newyork_${i + 1}` : undefined;
      out.push({ ip: `198.18.${g}.${i + 10}`, country, asn, zone, ...(vip ? { vip } : {}) });
    }
  });
  return out;
}

/**
 * The built-in seed: one account (`hl_1a2b3c4d`) with its tokens and basic credentials, five Zones
 * (static shared, static dedicated, residential with gIPs, mobile, and a disabled one), IP pools per
 * country and city, gIPs, cities, peers, request logs, 60 days of bandwidth, and a manager with two
 * ports, a user and HAR logs. Deterministic except that bandwidth days are relative to today.
 * `zone-api-sandbox --print-seed` prints it, as a starting point for a `--seed` file.
 */
export function defaultSeed(): StateData {
  return {
    account: {
      customer: SEED.customer,
      status: 'active',
      balance: 250,
      pending_costs: 12.75,
      perms: ['peers', 'peers_all', 'balance'],
      tokens: [
        { token: SEED.token, admin: true },
        { token: SEED.limitedToken, admin: false, perms: [] },
      ],
      basic: [{ ...SEED.basic, admin: true }],
      zones: zones(),
    },
    pools: { ips: ipPool(), gips: gipPool() },
    cities: cities(),
    peers: peers(),
    network_status: { all: true, res: true, dc: true, mobile: false },
    req_logs: reqLogs(),
    usage: usage(),
    charges: [],
    manager: managerSeed(),
  };
}

export { ZONE_NAMES };
