import { costOf, money } from '../domain/money.js';
import { dayString } from '../domain/state.js';
import type { ReqLog, ZoneState } from '../domain/types.js';
import { badRequest } from '../shared/errors.js';
import type { AccountContext, AccountCtx, AccountHandlers } from './context.js';
import { flagOn } from './forms.js';

// Statistics: bandwidth per day, costs, request logs and their stats.

/**
 * Date.parse rolls impossible calendar dates over (`2020-02-30` becomes March 1st): a period the
 * caller did not ask for. Such a date is refused instead; the real API's answer is not observed.
 */
function parseDate(raw: string): number {
  const t = Date.parse(raw);
  const ymd = /^(\d{4})-(\d{2})-(\d{2})/.exec(raw);
  if (ymd && !Number.isNaN(t)) {
    const [y, m, d] = [Number(ymd[1]), Number(ymd[2]), Number(ymd[3])];
    const day = new Date(Date.UTC(y, m - 1, d));
    if (day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return Number.NaN;
  }
  return t;
}

export function statisticsHandlers(c: AccountContext) {
  const { store, notFound, zoneOf, zonesOf } = c;
  type C = AccountCtx;

  function dayRange(ctx: C, defaultDays: number): { from: string; to: string; days: string[] } {
    const parse = (name: 'from' | 'to'): string | undefined => {
      const raw = ctx.query[name] as string | undefined;
      if (raw === undefined) return undefined;
      const t = parseDate(raw);
      if (Number.isNaN(t)) throw badRequest(`query.${name}`, 'must be a calendar date (YYYY-MM-DD or ISO 8601)');
      return new Date(t).toISOString().slice(0, 10);
    };
    const now = store.clock.now();
    const to = parse('to') ?? dayString(now);
    const from = parse('from') ?? dayString(Date.parse(to), defaultDays - 1);
    if (from > to) throw badRequest('query.from', 'must not be after to');
    const days: string[] = [];
    for (let t = Date.parse(from); t <= Date.parse(to); t += 86_400_000) {
      days.push(new Date(t).toISOString().slice(0, 10));
      if (days.length > 3660) throw badRequest('query.from', 'the period may be at most ten years');
    }
    return { from, to, days };
  }

  /** Bandwidth of a Zone from `from` (inclusive) to `to` (exclusive), both `YYYY-MM-DD`. */
  function periodBandwidth(z: ZoneState, from: string, to: string) {
    let dn = 0;
    let up = 0;
    for (const u of store.usage) {
      if (u.zone !== z.name || (u.date as string) < from || (u.date as string) >= to) continue;
      dn += u.bw_dn;
      up += u.bw_up;
    }
    return { bw_sum: dn + up, bw_dn: dn, bw_up: up };
  }

  /** The period keys of the totals: `custom` for a `from`-`to` period, else the reference's back_* keys. */
  function periods(ctx: C): Record<string, [string, string]> {
    if (ctx.query.from !== undefined || ctx.query.to !== undefined) {
      const { from, to } = dayRange(ctx, 30);
      return { custom: [from, dayString(Date.parse(to), -1)] };
    }
    const now = new Date(store.clock.now());
    const y = now.getUTCFullYear();
    const m = now.getUTCMonth();
    const month = (k: number) => new Date(Date.UTC(y, m - k, 1)).toISOString().slice(0, 10);
    const day = (k: number) => dayString(now.getTime(), k);
    return {
      back_m1: [month(1), month(0)],
      back_m0: [month(0), day(-1)],
      back_d2: [day(2), day(1)],
      back_d1: [day(1), day(0)],
      back_d0: [day(0), day(-1)],
    };
  }

  function bandwidth(ctx: C, zones: ZoneState[]) {
    const { from, to, days } = dayRange(ctx, 30);
    const index = new Map(days.map((d, i) => [d, i]));
    const data: Record<string, { bw_sum: number[]; bw_dn: number[]; bw_up: number[] }> = Object.create(null);
    for (const z of zones) data[z.name] = { bw_sum: days.map(() => 0), bw_dn: days.map(() => 0), bw_up: days.map(() => 0) };
    for (const u of store.usage) {
      const series = data[u.zone];
      const i = index.get(u.date as string);
      if (!series || i === undefined) continue;
      series.bw_dn[i] = (series.bw_dn[i] as number) + u.bw_dn;
      series.bw_up[i] = (series.bw_up[i] as number) + u.bw_up;
      series.bw_sum[i] = (series.bw_sum[i] as number) + u.bw_dn + u.bw_up;
    }
    // Totals per Zone and period key, always (the reference's example; clients read sums.<zone>.custom).
    const keys = Object.entries(periods(ctx));
    const sums = Object.fromEntries(
      zones.map((z) => [z.name, Object.fromEntries(keys.map(([k, [a, b]]) => [k, periodBandwidth(z, a, b)]))]),
    );
    const customer = store.account.customer;
    return { body: { [customer]: { customer_id: customer, from: `${from}T00:00:00`, to: `${to}T00:00:00`, data, sums } } };
  }

  /** Bandwidth and cost of a Zone from `from` (inclusive) to `to` (exclusive), both `YYYY-MM-DD`. */
  function periodCost(z: ZoneState, from: string, to: string) {
    let bw = 0;
    for (const u of store.usage) if (u.zone === z.name && (u.date as string) >= from && (u.date as string) < to) bw += u.bw_dn + u.bw_up;
    let cost = costOf(bw, z.price_per_gb);
    for (const c of store.charges) if (c.zone === z.name && c.at.slice(0, 10) >= from && c.at.slice(0, 10) < to) cost += c.amount;
    return { bw, cost: money(cost) };
  }

  function matchLogs(ctx: C): ReqLog[] {
    const q = ctx.query;
    let zone: string | undefined = q.zone;
    if (ctx.auth.scheme === 'zone') zone = zoneOf(ctx).name;
    else if (zone !== undefined && !store.zones.has(zone)) throw notFound(zone);
    const time = (name: string): number | undefined => {
      if (q[name] === undefined) return undefined;
      const t = parseDate(q[name]);
      if (Number.isNaN(t)) throw badRequest(`query.${name}`, 'must be a calendar date-time (ISO 8601)');
      return t;
    };
    const from = time('ts.from');
    const to = time('ts.to');
    const code: string | undefined = q['status.code'];
    // A code (`404`) or a pattern with `*` or `x` for any digit (`5**`, `4xx`).
    if (code !== undefined && !/^[0-9xX*]{1,3}$/.test(code))
      throw badRequest('query.status.code', 'must be a status code or a pattern of digits and * (or x) for any digit, such as 5**');
    const codeMatches = (status: number) => {
      const s = String(status);
      return code === undefined || (s.length === code.length && [...code].every((c, i) => /[xX*]/.test(c) || c === s[i]));
    };
    const has = (hay: string, needle: string | undefined) => needle === undefined || hay.toLowerCase().includes(needle.toLowerCase());
    return store.reqLogs.filter((r) => {
      if (zone !== undefined && r.zone !== zone) return false;
      if (!codeMatches(r.status.code)) return false;
      if (!has(r.status.message, q['status.message'])) return false;
      if (q['tun.session'] !== undefined && r.tun.session !== q['tun.session']) return false;
      const t = Date.parse(r.ts);
      if (from !== undefined && t < from) return false;
      if (to !== undefined && t >= to) return false;
      if (!has(r.ua, q.ua)) return false;
      if (q['dst.host'] !== undefined && r.dst.host.toLowerCase() !== String(q['dst.host']).toLowerCase()) return false;
      return has(r.dst.url, q['dst.url']);
    });
  }

  // Zone -> target domain -> bytes (bw) or requests (req) of the request logs in the period (spec: getDomainUsage).
  function domainUsage(ctx: C) {
    const { from, to } = dayRange(ctx, 30);
    const end = dayString(Date.parse(to), -1);
    const zones = new Set(zonesOf(ctx).map((z) => z.name));
    const body: Record<string, Record<string, number>> = {};
    for (const r of store.reqLogs) {
      const day = r.ts.slice(0, 10);
      if (!zones.has(r.zone) || day < from || day >= end) continue;
      const perDomain = body[r.zone] ?? {};
      body[r.zone] = perDomain;
      perDomain[r.dst.host] = (perDomain[r.dst.host] ?? 0) + (ctx.params.metric === 'req' ? 1 : Number(r.bw));
    }
    return { body };
  }

  return {
    getDomainUsage: domainUsage,
    getZoneBandwidth: (ctx) => bandwidth(ctx, [zoneOf(ctx)]),
    getCustomerBandwidth: (ctx) => bandwidth(ctx, ctx.auth.scheme === 'zone' ? [zoneOf(ctx)] : [...store.zones.values()]),

    getZoneCost: (ctx) => {
      const zone = zoneOf(ctx);
      const body: Record<string, { bw: number; cost: number }> = {};
      if (ctx.query.from !== undefined || ctx.query.to !== undefined) {
        const { from, to } = dayRange(ctx, 30);
        body.custom = periodCost(zone, from, to);
      } else {
        const now = new Date(store.clock.now());
        const y = now.getUTCFullYear();
        const m = now.getUTCMonth();
        const month = (k: number) => new Date(Date.UTC(y, m - k, 1)).toISOString().slice(0, 10);
        const today = dayString(now.getTime());
        const tomorrow = dayString(now.getTime(), -1);
        body.back_d0 = periodCost(zone, today, tomorrow);
        body.back_d1 = periodCost(zone, dayString(now.getTime(), 1), today);
        body.back_m0 = periodCost(zone, month(0), tomorrow);
        body.back_m1 = periodCost(zone, month(1), month(0));
      }
      return { body: { [store.account.customer]: body } };
    },

    listRequestLogs: (ctx) => {
      const size = ctx.query.page_size ?? 100;
      const page = ctx.query.page ?? 0;
      const logs = matchLogs(ctx).sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : 0));
      return { body: logs.slice(page * size, page * size + size) };
    },

    getRequestLogStats: (ctx) => {
      const logs = matchLogs(ctx);
      const body: Record<string, unknown> = { total: logs.length, success_statuses: logs.filter((r) => r.status.code < 400).length };
      if (flagOn(ctx.query.status_breakdown)) {
        const counts = new Map<number, number>();
        for (const r of logs) counts.set(r.status.code, (counts.get(r.status.code) ?? 0) + 1);
        body.status_breakdown = [...counts].sort(([a], [b]) => a - b).map(([status, count]) => ({ status, count }));
      }
      return { body };
    },
  } satisfies AccountHandlers;
}
