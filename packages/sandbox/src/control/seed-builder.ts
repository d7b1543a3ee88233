import { createHash } from 'node:crypto';
import { pricePerGb } from '../domain/money.js';
import { defaultSeed, type SEED } from '../domain/seed.js';
import type { AnswerForms, ProxyPortConfig, StateData, StoredPlan, TokenCredential, ZoneState } from '../domain/types.js';

// Fixtures without editing a large state object: a typed builder over a seed (the built-in one by
// default) whose Zone names are tracked in its type, so that a port, a whitelist or a rename naming a
// Zone the seed does not have fails to compile. The types of plans and ports are the spec's own
// (StoredPlan of the account API, ProxyPort of the manager API). What the builder gives is checked
// again at start, every cross-reference with its path (validateSeed).

/** The built-in seed's Zones. */
export type DefaultZone = keyof typeof SEED.zones;

/** A Zone as a fixture gives it: everything but the name optional, the plan the spec's `StoredPlan`. */
export interface ZoneFixture {
  /** The Zone's current plan (the spec's `StoredPlan`); `start` defaults to the build's time. Default: residential, pay per usage. */
  plan?: Omit<StoredPlan, 'start'> & { start?: string };
  /** Its passwords (`X-Service-Auth`, proxy passwords). Default: one, derived from the name (stable across runs). */
  passwords?: string[];
  perms?: string[];
  /** Client-IP whitelist: IPs, ranges, subnets or `any` (the default). */
  whitelist?: string[];
  domains?: ZoneState['domains'];
  disabled?: boolean;
  uptime_100?: boolean;
  /** Datacenter IPs: the IPs themselves (from the pool), or how many free ones of the pool to allocate. */
  ips?: string[] | number;
  /** gIPs (from the pool's `gips`). */
  gips?: string[];
  /**
   * The residential or mobile peers it exits through: how many of the seed's unassigned peers to give
   * it, or their IPs. Default for a new residential Zone: 2 (when the seed has them free, as
   * `seed.empty()` does), so that traffic through it is answered rather than refused with
   * `502 No peer of Zone …`; `0` for none.
   */
  peers?: number | string[];
  price_per_gb?: number;
}

/** A proxy port of the manager (the spec's `ProxyPort`, its `port` required), its Zone one the seed has. */
export type PortFixture<Z extends string> = Omit<ProxyPortConfig, 'zone'> & { zone?: Z };

/** Peers a new residential Zone gets when the fixture names none: enough to carry traffic and show rotation. */
const DEFAULT_PEERS = 2;

/** A stable password for a Zone the fixture names without one. */
const passwordOf = (customer: string, zone: string) => `z${createHash('sha256').update(`${customer}/${zone}`).digest('hex').slice(0, 11)}`;

export class SeedBuilder<Z extends string = DefaultZone> {
  private readonly data: StateData;

  /** Starts from a copy of `base`. */
  constructor(base: StateData) {
    this.data = structuredClone(base);
  }

  /** The customer id (the account's and the manager's settings'). */
  customer(id: string): this {
    this.data.account.customer = id;
    this.data.manager.settings.customer = id;
    return this;
  }

  /**
   * The account API's answers where the seed documentation and the provider's API reference disagree:
   * `live` (the default: the reference's forms, as clients of the live service read them) or `seed`.
   */
  answerForms(form: AnswerForms): this {
    this.data.account.answer_forms = form;
    return this;
  }

  /** The account's balance (US dollars). */
  balance(amount: number): this {
    this.data.account.balance = amount;
    return this;
  }

  /** Adds an API token (or changes the one with this value): admin by default. */
  token(token: string, options: { admin?: boolean; perms?: string[] } = {}): this {
    const t: TokenCredential = { token, admin: options.admin ?? true, ...(options.perms ? { perms: options.perms } : {}) };
    const tokens = this.data.account.tokens.filter((x) => x.token !== token);
    this.data.account.tokens = [...tokens, t];
    return this;
  }

  /** Adds a Zone, or changes the one of that name (only the fields given). */
  zone<N extends string>(name: N, fixture: ZoneFixture = {}): SeedBuilder<Z | N> {
    const zones = this.data.account.zones;
    const old = zones.find((z) => z.name === name);
    const { plan, ips, peers, ...rest } = fixture;
    const zone: ZoneState = old ?? {
      name,
      passwords: [passwordOf(this.data.account.customer, name)],
      perms: [],
      plans: [],
      whitelist: ['any'],
      domains: { whitelist: [] },
      disabled: false,
      uptime_100: false,
      ips: [],
      gips: [],
      recent_ips: [],
      price_per_gb: 0,
    };
    Object.assign(zone, structuredClone(rest));
    if (plan) zone.plans.push({ ...structuredClone(plan), start: plan.start ?? new Date().toISOString() } as StoredPlan);
    else if (!old)
      zone.plans.push({ start: new Date().toISOString(), type: 'resident', ips_type: 'shared', bandwidth: 'payperusage' } as StoredPlan);
    // The price follows the Zone's plan unless the fixture names one.
    if (rest.price_per_gb === undefined) zone.price_per_gb = pricePerGb(zone.plans.at(-1));
    if (ips !== undefined) zone.ips = typeof ips === 'number' ? this.freeIps(name, ips, zone) : [...ips];
    if (peers !== undefined) this.givePeers(name, peers);
    else if (!old && zone.plans.at(-1)?.type === 'resident') this.givePeers(name, Math.min(DEFAULT_PEERS, this.unassignedPeers().length));
    if (!old) zones.push(zone);
    // The manager's default Zone: the first Zone of an account that had none.
    const settings = this.data.manager.settings;
    if (!zones.some((z) => z.name === settings.zone)) Object.assign(settings, { zone: name, password: zone.passwords[0] });
    return this as SeedBuilder<Z | N>;
  }

  private unassignedPeers() {
    return this.data.peers.filter((p) => p.zone === undefined);
  }

  /** Assigns peers to a Zone: `count` of the unassigned ones, or those of the IPs given. */
  private givePeers(name: string, peers: number | string[]): void {
    if (typeof peers === 'number') {
      const free = this.unassignedPeers();
      if (free.length < peers)
        throw new RangeError(`seed().zone(${JSON.stringify(name)}): peers: the seed has ${free.length} unassigned peers, not ${peers}`);
      for (const p of free.slice(0, peers)) p.zone = name;
      return;
    }
    for (const ip of peers) {
      const peer = this.data.peers.find((p) => p.ip === ip);
      if (!peer) throw new RangeError(`seed().zone(${JSON.stringify(name)}): peers: ${ip} is not a peer of the seed`);
      peer.zone = name;
    }
  }

  /** `count` IPs of the pool no other Zone holds (shared ones for a shared plan). */
  private freeIps(name: string, count: number, zone: ZoneState): string[] {
    const held = new Set(this.data.account.zones.filter((z) => z.name !== name).flatMap((z) => z.ips));
    const shared = zone.plans.at(-1)?.ips_type === 'shared';
    const free = this.data.pools.ips.filter((p) => !held.has(p.ip) && (p.shared === true) === shared).map((p) => p.ip);
    if (free.length < count)
      throw new RangeError(
        `seed().zone(${JSON.stringify(name)}): ips: the pool has ${free.length} free ${shared ? 'shared' : 'dedicated'} IPs, not ${count}`,
      );
    return free.slice(0, count);
  }

  /** Removes a Zone with what belongs to it (usage, request logs, charges; its peers stay, unassigned); ports naming it must go too (`withoutPort`). */
  withoutZone<N extends Z>(name: N): SeedBuilder<Exclude<Z, N>> {
    const d = this.data;
    d.account.zones = d.account.zones.filter((z) => z.name !== name);
    const other = (r: { zone: string }) => r.zone !== name;
    d.usage = d.usage.filter(other);
    d.req_logs = d.req_logs.filter(other);
    d.charges = d.charges.filter(other);
    d.peers = d.peers
      .map((p) => (p.zone === name ? { ...p, zone: undefined } : p))
      .map(({ zone, ...p }) => (zone === undefined ? p : { ...p, zone }));
    return this as unknown as SeedBuilder<Exclude<Z, N>>;
  }

  /** Renames a Zone everywhere the seed names it: usage, request logs, charges, peers, ports, the manager's default Zone. */
  renameZone<F extends Z, T extends string>(from: F, to: T): SeedBuilder<Exclude<Z, F> | T> {
    const d = this.data;
    const zone = d.account.zones.find((z) => z.name === from);
    if (!zone) throw new RangeError(`seed().renameZone: the seed has no Zone ${from}`);
    if (d.account.zones.some((z) => z.name === to)) throw new RangeError(`seed().renameZone: the seed already has a Zone ${to}`);
    zone.name = to;
    for (const list of [d.usage, d.req_logs, d.charges, d.peers, d.manager.ports] as { zone?: string }[][])
      for (const r of list) if (r.zone === from) r.zone = to;
    if (d.manager.settings.zone === from) d.manager.settings.zone = to;
    return this as unknown as SeedBuilder<Exclude<Z, F> | T>;
  }

  /** Adds a proxy port of the manager (or replaces the one with that number); its Zone must be one the seed has. */
  port(port: PortFixture<Z>): this {
    const ports = this.data.manager.ports.filter((p) => p.port !== port.port);
    this.data.manager.ports = [...ports, structuredClone(port) as ProxyPortConfig];
    return this;
  }

  /** Removes proxy ports (all of them when none is named), with their bans and session counters. */
  withoutPort(...ports: number[]): this {
    const m = this.data.manager;
    const gone = (p: number) => ports.length === 0 || ports.includes(p);
    m.ports = m.ports.filter((p) => !gone(p.port));
    m.bans = m.bans.filter((b) => !gone(b.port));
    m.sessions = Object.fromEntries(Object.entries(m.sessions).filter(([p]) => !gone(Number(p))));
    return this;
  }

  /** Adds client IPs (IPs, ranges, subnets, `any`) to a Zone's whitelist, or with `manager` to the manager's. */
  whitelist(target: Z | 'manager', ...ips: string[]): this {
    if (target === 'manager') {
      const s = this.data.manager.settings;
      s.whitelist_ips = [...new Set([...s.whitelist_ips, ...ips])];
      return this;
    }
    const zone = this.data.account.zones.find((z) => z.name === target);
    if (!zone) throw new RangeError(`seed().whitelist: the seed has no Zone ${target}`);
    zone.whitelist = [...new Set([...zone.whitelist.filter((w) => w !== 'any' || ips.includes('any')), ...ips])];
    return this;
  }

  /** Any other change, on the state itself (typed as the seed file's shape). */
  with(change: (data: StateData) => void): this {
    change(this.data);
    return this;
  }

  /** The seed: a copy, for `startSandbox({ seed })` (which also takes the builder itself), `createAccount` or a seed file. */
  build(): StateData {
    return structuredClone(this.data);
  }
}

/**
 * A seed builder: from the built-in seed (`seed()`), from a seed of your own (`seed(data)`), or from an
 * empty account (`seed.empty()`: the pools and cities, one admin token, no Zone, port or history).
 */
export function seed(): SeedBuilder<DefaultZone>;
export function seed(base: StateData): SeedBuilder<string>;
export function seed(base?: StateData): SeedBuilder<string> {
  return new SeedBuilder(base ?? defaultSeed());
}

seed.empty = (): SeedBuilder<never> => {
  const d = defaultSeed();
  d.account.zones = [];
  d.account.tokens = d.account.tokens.filter((t) => t.admin);
  d.usage = [];
  d.req_logs = [];
  d.charges = [];
  d.peers = d.peers.map(({ zone: _zone, ...p }) => p);
  d.manager.ports = [];
  d.manager.bans = [];
  d.manager.sessions = {};
  d.manager.har = [];
  d.manager.general_log = [];
  // Named again by the first Zone added (the manager's default Zone must be one of the account's).
  d.manager.settings.zone = 'none';
  return new SeedBuilder<never>(d);
};

/** Whether `x` is a seed builder (or any object that builds a seed). */
export const isSeedBuilder = (x: unknown): x is { build(): StateData } =>
  typeof x === 'object' && x !== null && typeof (x as { build?: unknown }).build === 'function';
