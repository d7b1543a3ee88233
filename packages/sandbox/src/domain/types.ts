// The shape of the sandbox's state. A seed file, a `--data` file and the dump of
// `GET /__sandbox/state` all carry this shape, so a dump can be used as a seed.

export interface GeoExt {
  dbip?: string;
  ip2location?: string;
  google?: string;
}

/** A datacenter IP of the provider's pool; allocated to at most one Zone at a time. */
export interface PoolIp {
  ip: string;
  /** Country code by MaxMind (the default location database). */
  country: string;
  city: string;
  /** Shared IPs serve `ips_type: shared` plans; the others dedicated and selective ones. */
  shared?: boolean;
  /** Country codes by the other location databases; the same as `country` when absent. */
  ext?: GeoExt;
  /** Domains this IP is not usable for (excluded when a count asks for a `domain_whitelist`). */
  blocked_domains?: string[];
  /** When the IP last went back to the pool (for the `exclusive_sec` cooling period). */
  released_at?: string;
}

/** An exclusive residential IP (gIP): `<country>_<asn>_<region>_<city>_<index>`. */
export interface PoolGip {
  vip: string;
  country: string;
}

export interface StoredPlan {
  start: string;
  type?: 'static' | 'resident';
  ips_type?: 'shared' | 'dedicated' | 'selective';
  ip_alloc_preset?: string;
  bandwidth?: 'payperusage' | 'unlimited';
  mobile?: boolean;
  city?: boolean;
  asn?: boolean;
  vip?: boolean;
  vips_type?: 'shared' | 'vip' | 'domain' | 'domain_p';
  vips?: number;
  domain_whitelist?: string;
  not_country?: string | null;
  vip_country?: string;
  exclusive_sec?: number;
  exclusive_type?: string;
  exclusive_num?: number;
  ips?: number;
}

export interface ZoneState {
  name: string;
  passwords: string[];
  perms: string[];
  /** Plan history; the last one is the current plan. */
  plans: StoredPlan[];
  /** Client-IP whitelist: IPs, ranges, subnets, netmasks or `any`. */
  whitelist: string[];
  domains: { whitelist: string[]; blacklist?: string[] };
  disabled: boolean;
  uptime_100: boolean;
  /** Allocated datacenter IPs (from `pools.ips`). */
  ips: string[];
  /** Allocated gIPs (from `pools.gips`). */
  gips: string[];
  /** Client IPs that recently sent requests through the Zone. */
  recent_ips: string[];
  /** Bandwidth price, US dollars per GB, for the cost statistics. */
  price_per_gb: number;
}

export interface Credentials {
  admin?: boolean;
  /** Account permissions the credential carries (e.g. `peers`, `peers_all`); the account's when absent. */
  perms?: string[];
}
export interface TokenCredential extends Credentials {
  token: string;
}
export interface BasicCredential extends Credentials {
  username: string;
  password: string;
}

export interface AccountState {
  customer: string;
  status: string;
  balance: number;
  pending_costs: number;
  perms: string[];
  tokens: TokenCredential[];
  basic: BasicCredential[];
  zones: ZoneState[];
}

export interface ReqLog {
  zone: string;
  ts: string;
  status: { code: number; message: string };
  tun: { session: string };
  ua: string;
  dst: { host: string; url: string };
  bw: number;
  ip?: string;
}

export interface UsageDay {
  zone: string;
  /** `YYYY-MM-DD`; a seed may give `days_ago` instead (relative to the day the seed is loaded). */
  date?: string;
  days_ago?: number;
  bw_dn: number;
  bw_up: number;
}

export interface Charge {
  zone: string;
  at: string;
  amount: number;
  reason: string;
}

export interface Peer {
  ip: string;
  country: string;
  asn: string;
  zone?: string;
  vip?: string;
}

export interface City {
  c_id: string;
  region: string;
  r_id: string;
  country: string;
  name: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a port configuration is the spec's open ProxyPort object
export type ProxyPortConfig = Record<string, any> & { port: number };

export interface Ban {
  port: number;
  ip: string;
  domain: string | null;
  /** Epoch ms when the ban ends; 0 = until lifted. */
  to: number;
}

export interface ManagerSettings {
  customer: string;
  zone: string;
  password?: string;
  www_whitelist_ips: string[];
  whitelist_ips: string[];
  fixed_whitelist_ips: string[];
  pending_ips: string[];
  pending_www_ips: string[];
  read_only: boolean;
  config: string;
  test_url: string;
  logs: number;
  log: string;
  har_limit: number;
  request_stats: boolean;
  dropin: boolean;
  zagent: boolean;
  sync_config: boolean;
}

export interface Release {
  ver: string;
  type: string;
  changes: { type: string; text: string }[];
}

export interface ManagerState {
  version: string;
  releases: Release[];
  settings: ManagerSettings;
  /** The current token of `GET /api/gen_token`, for `POST /api/add_wip`. */
  token: string | null;
  /** Epoch ms of recent gen_token calls (at most 5 an hour). */
  token_issued: number[];
  ports: ProxyPortConfig[];
  bans: Ban[];
  /** Port -> number of session refreshes. */
  sessions: Record<string, number>;
  users: { email: string; password?: string }[];
  // biome-ignore lint/suspicious/noExplicitAny: HAR 1.2 entries, validated against the spec's HarEntry
  har: Record<string, any>[];
  general_log: string[];
}

export interface StateData {
  format?: 'zone-api-sandbox-state';
  version?: 1;
  account: AccountState;
  pools: { ips: PoolIp[]; gips: PoolGip[] };
  cities: Record<string, City[]>;
  peers: Peer[];
  network_status: { all: boolean; res: boolean; dc: boolean; mobile: boolean };
  req_logs: ReqLog[];
  usage: UsageDay[];
  charges: Charge[];
  manager: ManagerState;
}
