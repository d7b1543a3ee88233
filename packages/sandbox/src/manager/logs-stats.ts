import { RE2JS } from 're2js';
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
  status_code: (e) => e.response.status,
  port: (e) => e.details?.port ?? 0,
  time: (e) => e.time,
  bw: (e) => e.details?.bw ?? 0,
};

export function logsStatsHandlers(c: ManagerContext): ManagerHandlers {
  const { store, m } = c;
  return {
    getRecentStats: () => {
      const ports: Record<string, { reqs: number; success: number; bw: number }> = {};
      const by = (key: (e: HarEntry) => string) => {
        const counts = new Map<string, { key: string; reqs: number; success: number; bw: number }>();
        for (const e of m().har) {
          const k = key(e);
          const row = counts.get(k) ?? { key: k, reqs: 0, success: 0, bw: 0 };
          row.reqs++;
          if (e.response.status < 400) row.success++;
          row.bw += e.details?.bw ?? 0;
          counts.set(k, row);
        }
        return [...counts.values()].sort((a, b) => b.reqs - a.reqs);
      };
      for (const row of by((e) => String(e.details?.port ?? 0))) ports[row.key] = { reqs: row.reqs, success: row.success, bw: row.bw };
      const har = m().har;
      return {
        body: {
          ports,
          status_code: by((e) => String(e.response.status)),
          hostname: by((e) => new URL(e.request.url).hostname),
          protocol: by((e) => e.details?.protocol ?? new URL(e.request.url).protocol.replace(':', '')),
          total: har.length,
          success: har.filter((e) => e.response.status < 400).length,
          ssl_enable: [...store.ports.values()].some((p) => p.ssl === true),
        },
      };
    },

    getGeneralLogs: (ctx) => {
      const limit = (ctx.query.limit as number | undefined) ?? 100;
      return { text: m().general_log.slice(-limit).join('\n') };
    },

    getLogs: (ctx) => {
      const q = ctx.query;
      // RE2 syntax, matched in linear time: no pattern can hold the event loop (backreferences and
      // lookaround, which need backtracking, are refused).
      let search: RE2JS | undefined;
      if (q.search !== undefined) {
        try {
          search = RE2JS.compile(q.search);
        } catch (err) {
          throw badRequest(
            'query.search',
            `is not a regular expression this sandbox can match in linear time (RE2 syntax): ${(err as Error).message.slice(0, 200)}`,
          );
        }
      }
      const sortKey = (q.sort as string | undefined) ?? 'uuid';
      const getter = Object.hasOwn(harField, sortKey) ? harField[sortKey] : undefined;
      if (!getter) throw badRequest('query.sort', `must be one of ${Object.keys(harField).join(', ')}`);
      const code = q.status_code as string | undefined;
      const codeRe = code ? new RegExp(`^${code.replace(/\*/g, '\\d')}$`) : undefined;
      const matched = m().har.filter(
        (e) =>
          (!search || search.matcher(e.request.url).find()) &&
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
      const skip = (q.skip as number | undefined) ?? 0;
      const entries = q.limit !== undefined ? matched.slice(skip, skip + (q.limit as number)) : matched.slice(skip);
      return {
        body: {
          log: { version: '1.2', creator: { name: 'zone-api-sandbox', version: m().version }, pages: [], entries },
          total: matched.length,
          skip,
          sum_in: matched.reduce((n, e) => n + (e.details?.in_bw ?? 0), 0),
          sum_out: matched.reduce((n, e) => n + (e.details?.out_bw ?? 0), 0),
        },
      };
    },
  };
}
