import { Clock } from './clock.js';
import { Pools } from './ips.js';
import { Logs } from './logs.js';
import type {
  AccountState,
  Ban,
  BasicCredential,
  Charge,
  City,
  ManagerState,
  Peer,
  PoolGip,
  PoolIp,
  ProxyPortConfig,
  ReqLog,
  StateData,
  TokenCredential,
  UsageDay,
  ZoneState,
} from './types.js';

/** Day `YYYY-MM-DD` (UTC) `daysAgo` days before `now`. */
export function dayString(now: number, daysAgo = 0): string {
  return new Date(now - daysAgo * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The live state: plain data plus the indices every request uses (Zones by name, credentials,
 * the IP pools and who holds each IP), kept in step by the methods that change them.
 */
export class Store {
  account!: Omit<AccountState, 'zones' | 'tokens' | 'basic'>;
  zones = new Map<string, ZoneState>();
  tokens = new Map<string, TokenCredential>();
  /** `username:password` -> credential. */
  basic = new Map<string, BasicCredential>();
  pool = new Map<string, PoolIp>();
  /** Datacenter IP -> Zone name. */
  allocated = new Map<string, string>();
  gipPool = new Map<string, PoolGip>();
  /** gIP -> Zone name. */
  gipAllocated = new Map<string, string>();
  cities: Record<string, City[]> = {};
  peers!: Peer[];
  networkStatus!: StateData['network_status'];
  reqLogs!: ReqLog[];
  usage!: UsageDay[];
  charges!: Charge[];
  manager!: Omit<ManagerState, 'ports' | 'bans'>;
  ports = new Map<number, ProxyPortConfig>();
  /** Port -> bans keyed by IP and domain (see banKey): adding or lifting one is O(1), whatever the list. */
  bans = new Map<number, Map<string, Ban>>();
  /** The sandbox's time (tests move it); not part of the state. */
  readonly clock = new Clock();
  /** Every change of the IP and gIP pools goes through here. */
  readonly pools = new Pools(this);
  /** Every change of the manager's general and HAR logs goes through here. */
  readonly logs = new Logs(this);
  /** Large sections changed since the data file last wrote them (sectionsJson); every one after a load. */
  private unsaved = new Set<TouchedSection>(TOUCHED_SECTIONS);
  /**
   * Each port field's JSON text as sectionsJson last made it, made again only when the field holds
   * another value (for a list or object, another identity): configurations are replaced or changed at
   * their top level (port-config.ts, multiply.ts), never deep in place; persistence.test.ts checks the
   * disk against memory after every kind of change.
   */
  private fieldTexts = new Map<string, { value: unknown; text: string }>();

  /** `adopt`: the store takes `data` itself instead of a copy (the caller made it for this store alone). */
  constructor(data: StateData, adopt = false) {
    this.load(data, undefined, adopt);
  }

  /** Replaces everything with `data` (a validated seed or saved state); the data is copied unless `adopt`. */
  load(input: StateData, now = this.clock.now(), adopt = false): void {
    const data = adopt ? input : structuredClone(input);
    const { zones, tokens, basic, ...account } = data.account;
    this.account = account;
    this.zones = new Map(zones.map((z) => [z.name, z]));
    this.tokens = new Map(tokens.map((t) => [t.token, t]));
    this.basic = new Map(basic.map((b) => [`${b.username}:${b.password}`, b]));
    this.pool = new Map(data.pools.ips.map((p) => [p.ip, p]));
    this.gipPool = new Map(data.pools.gips.map((g) => [g.vip, g]));
    this.allocated = new Map();
    this.gipAllocated = new Map();
    for (const z of zones) {
      for (const ip of z.ips) this.allocated.set(ip, z.name);
      for (const vip of z.gips) this.gipAllocated.set(vip, z.name);
    }
    this.cities = data.cities;
    this.peers = data.peers;
    this.networkStatus = data.network_status;
    this.reqLogs = data.req_logs;
    // Relative days of a seed become dates once, when it is loaded.
    this.usage = data.usage.map(({ days_ago, ...u }) => ({ ...u, date: u.date ?? dayString(now, days_ago ?? 0) }));
    this.charges = data.charges;
    const { ports, bans, ...manager } = data.manager;
    this.manager = manager;
    this.ports = new Map(ports.map((p) => [p.port, p]));
    this.bans = new Map();
    for (const b of bans) this.addBan(b);
    for (const s of TOUCHED_SECTIONS) this.unsaved.add(s);
  }

  /**
   * Marks a section of TOUCHED_SECTIONS as changed, for the data file's next journal record.
   * Whatever changes the IP pools, the HAR log, the usage, the request logs or the peers calls it
   * (the other sections are written with every change and need no mark); persistence.test.ts checks
   * the disk against memory after every kind of change.
   */
  touch(section: TouchedSection): void {
    this.unsaved.add(section);
  }

  /**
   * The state as [section, JSON text] for the data file's journal: every section outside
   * TOUCHED_SECTIONS, and those touched since the last call, or all with `all`. `har` is the
   * manager's HAR log, apart from the rest of `manager`; each port field is a section (domain/replay.ts
   * puts them together).
   */
  sectionsJson(all: boolean): [string, string][] {
    const { har, ...manager } = this.manager;
    const sections: Record<string, () => unknown> = {
      format: () => 'zone-api-sandbox-state',
      version: () => 1,
      account: () => this.accountView(),
      pools: () => this.poolsView(),
      cities: () => this.cities,
      peers: () => this.peers,
      network_status: () => this.networkStatus,
      req_logs: () => this.reqLogs,
      usage: () => this.usage,
      charges: () => this.charges,
      manager: () => ({ ...manager, bans: this.bansView() }),
      port_order: () => [...this.ports.keys()],
      har: () => har,
    };
    const out: [string, string][] = [];
    for (const [name, value] of Object.entries(sections)) {
      if (all || !TOUCHED.has(name) || this.unsaved.has(name as TouchedSection)) out.push([name, JSON.stringify(value())]);
    }
    // Each field of each port is a section of its own (`port:N:field`), its text kept while its value is
    // the same one, and `port:N` lists the port's fields: a change of one field (a whitelist every port
    // follows) writes that field alone, whatever the size of the rest of the configuration.
    const texts = new Map<string, { value: unknown; text: string }>();
    for (const [port, cfg] of this.ports) {
      const fields: string[] = [];
      for (const [field, value] of Object.entries(cfg)) {
        if (value === undefined) continue; // as JSON.stringify leaves it out
        const name = `port:${port}:${field}`;
        const known = this.fieldTexts.get(name);
        const entry = known && Object.is(known.value, value) ? known : { value, text: JSON.stringify(value) };
        texts.set(name, entry);
        fields.push(field);
        out.push([name, entry.text]);
      }
      out.push([`port:${port}`, JSON.stringify(fields)]);
    }
    this.fieldTexts = texts;
    this.unsaved.clear();
    return out;
  }

  /**
   * Deletes a Zone with what belongs to it: its IPs and gIPs go back to the pools; its usage, request
   * logs, charges and peers go. Proxy ports and the manager's default Zone that name it stay, as in
   * the real manager, whose port status then reports the Zone as not found. The state that remains
   * always loads (validateSeed).
   */
  deleteZone(zone: ZoneState): void {
    this.pools.releaseAll(zone);
    this.zones.delete(zone.name);
    this.touch('usage');
    this.touch('req_logs');
    const other = (r: { zone?: string }) => r.zone !== zone.name;
    this.usage = this.usage.filter(other);
    this.reqLogs = this.reqLogs.filter(other);
    this.charges = this.charges.filter(other);
    this.touch('peers');
    this.peers = this.peers.filter(other);
  }

  /** Adds a new Zone with the IPs and gIPs of its plan (free ones: Pools.free, Pools.freeGips). */
  addZone(zone: ZoneState, ips: readonly PoolIp[], gips: readonly PoolGip[]): void {
    this.zones.set(zone.name, zone);
    this.pools.allocate(zone, ips);
    this.pools.allocateGips(zone, gips);
  }

  /** Changes a Zone's own settings (its IPs and gIPs change through `pools`): each field given replaces the one there. */
  updateZone(zone: ZoneState, fields: Partial<Omit<ZoneState, 'name' | 'ips' | 'gips'>>): void {
    Object.assign(zone, fields);
  }

  /** The account's status (`active`, `suspended`, …). */
  setAccountStatus(status: Store['account']['status']): void {
    this.account.status = status;
  }

  /**
   * Changes the manager's own records (its settings and logs have methods of their own): each field
   * given replaces the one there, one given as `undefined` is removed.
   */
  setManager(fields: Partial<Omit<Store['manager'], 'settings' | 'har' | 'general_log'>>): void {
    const m = this.manager as Record<string, unknown>;
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) delete m[k];
      else m[k] = v;
    }
  }

  /** Changes the manager's settings: each field given replaces the one there. */
  setSettings(fields: Partial<Store['manager']['settings']>): void {
    Object.assign(this.manager.settings, fields);
  }

  /** A port's own Zone: `undefined` leaves it none (it then runs with the settings' Zone). */
  setPortZone(port: number, zone: string | undefined): void {
    const cfg = this.ports.get(port);
    if (!cfg) return;
    if (zone === undefined) delete cfg.zone;
    else cfg.zone = zone;
  }

  /** Stores a port's configuration, or replaces the one on its number (its bans and session counter stay). */
  putPort(cfg: ProxyPortConfig): void {
    this.ports.set(cfg.port, cfg);
  }

  /** Removes a port with its running state: its bans and its session counter. */
  dropPort(port: number): void {
    this.ports.delete(port);
    this.bans.delete(port);
    delete this.manager.sessions[String(port)];
  }

  /** Moves the port `from` to `cfg.port` with `cfg` as its configuration: its bans and session counter go with it. */
  movePort(from: number, cfg: ProxyPortConfig): void {
    const sessions = this.manager.sessions[String(from)];
    const bans = this.activeBans(from);
    this.dropPort(from);
    for (const b of bans) this.addBan({ ...b, port: cfg.port });
    if (sessions !== undefined) this.manager.sessions[String(cfg.port)] = sessions;
    this.putPort(cfg);
  }

  /** The port's next session number (a refresh of its sessions), counted in the state. */
  nextSession(port: number): number {
    const n = (this.manager.sessions[String(port)] ?? 0) + 1;
    this.manager.sessions[String(port)] = n;
    return n;
  }

  /** A restart of the manager: the ports keep their configuration; their running state (bans, sessions) and the token rate start over. */
  restartPorts(): void {
    this.bans.clear();
    this.manager.sessions = {};
    this.manager.token_issued = [];
  }

  /** Adds a ban, or replaces the one for the same IP and domain on that port. */
  addBan(ban: Ban): void {
    let map = this.bans.get(ban.port);
    if (!map) {
      map = new Map();
      this.bans.set(ban.port, map);
    }
    map.set(banKey(ban.ip, ban.domain), ban);
  }

  /** Lifts the ban of `ip` for `domain` on a port; whether there was one. */
  liftBan(port: number, ip: string, domain: string | null): boolean {
    const map = this.bans.get(port);
    const lifted = map?.delete(banKey(ip, domain)) ?? false;
    if (map && map.size === 0) this.bans.delete(port);
    return lifted;
  }

  /** The bans of a port that have not expired (expired ones are dropped). */
  activeBans(port: number, now = this.clock.now()): Ban[] {
    const map = this.bans.get(port);
    if (!map) return [];
    const live: Ban[] = [];
    for (const [key, b] of map) {
      if (b.to === 0 || b.to > now) live.push(b);
      else map.delete(key);
    }
    if (map.size === 0) this.bans.delete(port);
    return live;
  }

  /** A copy of the whole state, as a seed. */
  toData(): StateData {
    return structuredClone(this.view());
  }

  /** The state as JSON text (what the data file holds: compact, it is written on every change), without copying it first. */
  toJson(extra: Record<string, unknown> = {}): string {
    return JSON.stringify({ ...this.view(), ...extra });
  }

  /** The state as plain data over the live objects: read it, never change it. */
  private view(): StateData {
    return {
      format: 'zone-api-sandbox-state',
      version: 1,
      account: this.accountView(),
      pools: this.poolsView(),
      cities: this.cities,
      peers: this.peers,
      network_status: this.networkStatus,
      req_logs: this.reqLogs,
      usage: this.usage,
      charges: this.charges,
      manager: { ...this.manager, ports: [...this.ports.values()], bans: this.bansView() },
    } satisfies StateData;
  }

  private accountView(): StateData['account'] {
    return { ...this.account, tokens: [...this.tokens.values()], basic: [...this.basic.values()], zones: [...this.zones.values()] };
  }

  private poolsView(): StateData['pools'] {
    return { ips: [...this.pool.values()], gips: [...this.gipPool.values()] };
  }

  private bansView(): Ban[] {
    const bans: Ban[] = [];
    for (const port of [...this.bans.keys()]) bans.push(...this.activeBans(port));
    return bans;
  }
}

/**
 * Sections of the state that the data file writes only when touched: large ones (pools, usage,
 * request logs, the HAR log) and ones that rarely change (cities never after a load, peers only
 * when a Zone is deleted). The rest is small and written with every change.
 */
export const TOUCHED_SECTIONS = ['pools', 'usage', 'req_logs', 'har', 'cities', 'peers'] as const;
export type TouchedSection = (typeof TOUCHED_SECTIONS)[number];
const TOUCHED: ReadonlySet<string> = new Set(TOUCHED_SECTIONS);

/** A ban's identity on its port: the IP and the domain it applies to (`null`: every domain). */
export const banKey = (ip: string, domain: string | null) => `${ip}\n${domain ?? ''}`;
