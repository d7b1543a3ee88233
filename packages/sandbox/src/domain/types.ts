import type { components as AccountComponents } from '@zone-api/spec/account';
import type { components as ManagerComponents } from '@zone-api/spec/manager';

// The shape of the sandbox's state. A seed file, a `--data` file and the dump of
// `GET /__sandbox/state` all carry this shape, so a dump can be used as a seed.
//
// What the specs describe is declared there, once: those types come from the types generated into
// @zone-api/spec (type-only imports), narrowed where the state always holds a field the API leaves optional.
// What only the sandbox keeps (the pools, usage, credentials, bans) is declared here, and the seed's
// JSON Schema (seed-schema.ts) is checked against these types when it compiles.

type AccountSchemas = AccountComponents['schemas'];
type ManagerSchemas = ManagerComponents['schemas'];
/** `T` with the keys `K` always present: the state holds what an answer may leave out. */
type Holding<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> };

/** Country codes of an IP by the other location databases (the spec's `DatacenterIpExt`). */
export type GeoExt = AccountSchemas['DatacenterIpExt'];

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

/** A Zone's plan as `GET /api/zone` shows it (the spec's `StoredPlan`), with its start always set. */
export type StoredPlan = Holding<AccountSchemas['StoredPlan'], 'start'>;

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
  /** Allocated IPs with connectivity problems (`GET /api/zone/ips/unavailable`; absent: none). */
  unavailable_ips?: string[];
  /** Allocated IPs the provider will replace, by day (`GET /api/zone/proxies_pending_replacement`; absent: none). */
  pending_replacement?: { due_date: string; ips: string[] }[];
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

/**
 * Which form the account API answers where the seed documentation and the provider's API reference
 * disagree (route_ips, a Zone's `ips`): `live`, the reference's, which the clients of the live service
 * read (the default), or `seed`, the seed documentation's.
 */
export type AnswerForms = 'live' | 'seed';

export interface AccountState {
  /** Absent: `live`. */
  answer_forms?: AnswerForms;
  customer: string;
  status: string;
  balance: number;
  pending_costs: number;
  perms: string[];
  tokens: TokenCredential[];
  basic: BasicCredential[];
  zones: ZoneState[];
}

/** One request log record (the spec's `RequestLog`), with the fields the sandbox always writes. */
export type ReqLog = Holding<AccountSchemas['RequestLog'], 'zone' | 'ts' | 'ua' | 'bw'> & {
  status: { code: number; message: string };
  tun: { session: string };
  dst: { host: string; url: string };
  /** The client IP the sandbox saw (an open field of the record: the documentation does not name it). */
  ip?: string;
};

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

/** One city of `GET /api/cities` (the spec's `City`); a seed must name it, the other fields are optional. */
export type City = Holding<AccountSchemas['City'], 'name'>;

/** A proxy port's configuration (the spec's `ProxyPort`), its port always set. */
export type ProxyPortConfig = Holding<ManagerSchemas['ProxyPort'], 'port'>;

export interface Ban {
  port: number;
  ip: string;
  domain: string | null;
  /** Epoch ms when the ban ends; 0 = until lifted. */
  to: number;
}

/**
 * The spec's `Settings` in their documented forms: the sandbox refuses the values the real manager
 * stores and answers as given (`SettingAsGiven`; parity.yaml, updateSettings), so it never holds one.
 * `mail_domain` is built into the manager and `cloud_url_address` made from its customer, not settings it
 * holds (brand.ts); nor are the fields the real manager answers from its own state and options (the view of
 * manager/settings.ts).
 */
type DocumentedSettings = Omit<
  ManagerSchemas['Settings'],
  | 'zone'
  | 'logs'
  | 'har_limit'
  | 'request_stats'
  | 'mail_domain'
  | 'cloud_url_address'
  | 'debug'
  | 'lpm_auth'
  | 'av_server'
  | 'reseller'
  | 'cache_report'
  | 'cache_limit'
  | 'server_conf'
  | 'proxy_port'
  | 'logs_settings'
  | 'use_custom_cert'
  | 'socket_inactivity_timeout'
  | 'new_ui'
> & {
  zone?: ManagerSchemas['ZoneName'];
  logs?: number;
  har_limit?: number;
  request_stats?: boolean;
};

/** The manager's settings (the spec's `Settings`), every field but the password present. */
export type ManagerSettings = Holding<
  DocumentedSettings,
  | 'customer'
  | 'zone'
  | 'www_whitelist_ips'
  | 'whitelist_ips'
  | 'fixed_whitelist_ips'
  | 'pending_ips'
  | 'pending_www_ips'
  | 'read_only'
  | 'config'
  | 'test_url'
  | 'logs'
  | 'log'
  | 'har_limit'
  | 'request_stats'
  | 'dropin'
  | 'zagent'
  | 'sync_config'
>;

/** A release of the manager (the spec's `VersionRelease`), with its type and changes. */
export type Release = Holding<ManagerSchemas['VersionRelease'], 'type' | 'changes'>;

/** One HAR 1.2 entry of `GET /api/logs` (the spec's `HarEntry`). */
export type HarEntry = ManagerSchemas['HarEntry'];

/** The counts of one group of recent requests (the spec's `RecentStat`). */
export type RecentStat = ManagerSchemas['RecentStat'];

/**
 * Recent statistics kept apart from the HAR log: the real manager counts its statistics in collections
 * of their own (lib/loki.js 149-200), so a port's deletion, which drops its log entries and its own line
 * (lib/mixins/mgr_proxy.js 291-300), leaves its requests in the totals by status code, host and protocol.
 */
export interface KeptStats {
  status_code: RecentStat[];
  hostname: RecentStat[];
  protocol: RecentStat[];
}

export interface ManagerState {
  version: string;
  /** Newest first; never empty (the seed schema's `minItems: 1`). */
  releases: [Release, ...Release[]];
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
  har: HarEntry[];
  /** The statistics of requests whose log entries went with their deleted port (absent: none). */
  stats_kept?: KeptStats;
  /**
   * Running ports that stay stored though an update in place gave them a `proxy_type` other than
   * `persist` (manager/multiply.ts isStored; absent: none).
   */
  kept_stored?: number[];
  /**
   * Stored entries whose port no longer runs: the real manager's delete of a port whose `proxy_type` is
   * not `persist` stops it and leaves its entry stored (manager/ports.ts; absent: none).
   */
  stored_stopped?: ProxyPortConfig[];
  general_log: string[];
}

export interface StateData {
  format?: 'zone-api-sandbox-state';
  version?: 1;
  /** When a data file was written (absent in a seed). */
  saved_at?: string;
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

/**
 * What the IP and gIP pools read and change (`ips.ts`): the pools, who holds each IP, and where a
 * refresh is charged. The Store is one; the pools' functions need no more of it.
 */
export interface PoolState {
  pool: Map<string, PoolIp>;
  /** Datacenter IP -> Zone name. */
  allocated: Map<string, string>;
  gipPool: Map<string, PoolGip>;
  /** gIP -> Zone name. */
  gipAllocated: Map<string, string>;
  account: { pending_costs: number };
  charges: Charge[];
  clock: { now(): number };
  /** Marks the pools as changed, for the data file. */
  touch(section: 'pools'): void;
}
