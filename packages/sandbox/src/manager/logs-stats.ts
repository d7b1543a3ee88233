import { loggedUrl, rootDomain, successful } from '../domain/har.js';
import { searchAll } from '../domain/search.js';
import type { HarEntry } from '../domain/types.js';
import { badRequest } from '../errors.js';
import type { ManagerContext, ManagerHandlers } from './context.js';

// Logs and stats: the HAR log of requests, recent stats, the general log.

const harField: Record<string, (e: HarEntry) => string | number> = {
  uuid: (e) => e.uuid ?? '',
  startedDateTime: (e) => e.startedDateTime,
  timestamp: (e) => e.startedDateTime,
  url: (e) => e.request.url,
  method: (e) => e.request.method,
  // `unknown` (a tunnel to port 443) sorts as no status.
  status_code: (e) => (typeof e.response.status === 'number' ? e.response.status : 0),
  port: (e) => e.details?.port ?? 0,
  time: (e) => e.time,
  bw: (e) => e.details?.bw ?? 0,
};

export function logsStatsHandlers(c: ManagerContext) {
  const { store, m } = c;
  return {
    getRecentStats: () => {
      // As the real manager (1.570.247) counts them: each logged request that moved bytes, grouped by
      // port, status code (`unknown` for a tunnel), root domain and protocol; the lists the 20 largest.
      type Stat = {
        key: number | string;
        in_bw: number;
        out_bw: number;
        reqs: number;
        success: number;
        bypass_bw: number;
        bypass_cost: number;
      };
      const groups = { port: new Map<number | string, Stat>(), status_code: new Map(), hostname: new Map(), protocol: new Map() };
      for (const e of m().har) {
        const d = e.details;
        const inBw = d?.in_bw ?? 0;
        const outBw = d?.out_bw ?? 0;
        if (!inBw && !outBw) continue;
        const keys = {
          port: d?.port ?? 0,
          status_code: e.response.status,
          hostname: e.request.host ?? rootDomain(loggedUrl(e.request.method, e.request.url)?.hostname ?? ''),
          protocol: d?.protocol ?? 'http',
        };
        for (const [group, key] of Object.entries(keys) as [keyof typeof groups, number | string][]) {
          const stats = groups[group] as Map<number | string, Stat>;
          const stat = stats.get(key) ?? { key, in_bw: 0, out_bw: 0, reqs: 0, success: 0, bypass_bw: 0, bypass_cost: 0 };
          stat.in_bw += inBw;
          stat.out_bw += outBw;
          stat.reqs++;
          stat.success += successful(e.response.status) ? 1 : 0;
          stats.set(key, stat);
        }
      }
      const largest = (stats: Map<number | string, Stat>, count = 20) =>
        [...stats.values()].sort((a, b) => b.reqs - a.reqs).slice(0, count);
      const protocol = largest(groups.protocol);
      // SSL analyzing can be enabled while some port does not analyze SSL.
      const sslEnable = [...store.ports.values()].some((p) => p.ssl !== true);
      return {
        body: {
          ports: Object.fromEntries(largest(groups.port, Number.POSITIVE_INFINITY).map((s) => [String(s.key), s])),
          status_code: largest(groups.status_code),
          hostname: largest(groups.hostname),
          protocol,
          total: protocol.reduce((n, s) => n + s.reqs, 0),
          success: protocol.reduce((n, s) => n + s.success, 0),
          ...(protocol.some((s) => s.key === 'https' && s.reqs > 0) ? { ssl_warning: sslEnable } : {}),
          ssl_enable: sslEnable,
        },
      };
    },

    getGeneralLogs: (ctx) => {
      const limit = ctx.query.limit ?? 100;
      return { text: m().general_log.slice(-limit).join('\n') };
    },

    getLogs: async (ctx) => {
      const q = ctx.query;
      const sortKey = q.sort ?? 'uuid';
      const getter = Object.hasOwn(harField, sortKey) ? harField[sortKey] : undefined;
      if (!getter) throw badRequest('query.sort', `must be one of ${Object.keys(harField).join(', ')}`);
      const code = q.status_code;
      const codeRe = code ? new RegExp(`^${code.replace(/\*/g, '\\d')}$`) : undefined;
      // RE2 syntax in linear time, within bounds, the event loop free (domain/search.ts).
      const searched = await searchAll(m().har, q.search, (e) => e.request.url);
      const matched = searched.filter(
        (e) =>
          (q.port_from === undefined || (e.details?.port ?? 0) >= q.port_from) &&
          (q.port_to === undefined || (e.details?.port ?? 0) <= q.port_to) &&
          (!codeRe || codeRe.test(String(e.response.status))),
      );
      const dir = q.sort_desc === true ? -1 : 1;
      matched.sort((a, b) => {
        const x = getter(a);
        const y = getter(b);
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
      const skip = q.skip ?? 0;
      const entries = q.limit !== undefined ? matched.slice(skip, skip + q.limit) : matched.slice(skip);
      return {
        body: {
          log: { version: '1.2', creator: { name: 'Proxy Manager', version: m().version }, pages: [], entries },
          total: matched.length,
          skip,
          sum_in: matched.reduce((n, e) => n + (e.details?.in_bw ?? 0), 0),
          sum_out: matched.reduce((n, e) => n + (e.details?.out_bw ?? 0), 0),
        },
      };
    },
  } satisfies ManagerHandlers;
}
