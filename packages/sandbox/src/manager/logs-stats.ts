import { RE2JS } from 're2js';
import { loggedUrl, rootDomain, successful } from '../domain/har.js';
import { searchAll } from '../domain/search.js';
import type { Store } from '../domain/state.js';
import type { HarEntry, KeptStats, RecentStat } from '../domain/types.js';
import { HAR_CREATOR } from '../shared/brand.js';
import { HttpError, onField } from '../shared/errors.js';
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

/**
 * The `search` filter of the HAR log. The real manager compiles it as a JavaScript RegExp: one that does
 * not compile fails its handler, `500` with the error's message (lib/util.js 790-795, web_api.js 63-68);
 * one its ReDoS detector finds unsafe is dropped (no filter). It matches the URL, or the username's
 * session part (`session-[^-]*<search>`). The sandbox compiles it the same way to refuse it alike, but
 * matches with RE2 (linear time, no pattern can hold the event loop); a pattern RE2 cannot run
 * (backreferences, lookaround) is dropped like an unsafe one.
 *
 * `uncounted`: the search applied, and one of its two branches alone matched every entry. The real
 * manager's log (lokijs) then leaves its result set unfiltered rather than listing every entry
 * (`findOr`, lum_lokijs/src/lokijs.js 3256-3287: "the initial set is the actual result"), so its
 * `.data()` is the whole log while its count, `filteredrows.length`, is 0 (`Collection.count`, 5515-5521;
 * lib/loki.js `requests_count`): the answer's `total` is 0 unless a later filter counts again.
 */
async function searchLog(har: readonly HarEntry[], search: string | undefined): Promise<{ entries: HarEntry[]; uncounted: boolean }> {
  const all = { entries: [...har], uncounted: false };
  if (search === undefined || search === '') return all;
  try {
    new RegExp(search);
  } catch (err) {
    throw new HttpError(500, `Server error: ${(err as Error).message}`, { text: true });
  }
  try {
    RE2JS.compile(search);
  } catch {
    return all;
  }
  // Both searches within the bounds of domain/search.ts (a 400 naming query.search past them).
  const byUrl = await onField('query.search', () => searchAll(har, search, (e) => e.request.url));
  const byUser = await onField('query.search', () => searchAll(har, `session-[^-]*${search}`, usernameOf));
  const hit = new Set([...byUrl, ...byUser]);
  const uncounted = har.length > 0 && (byUrl.length === har.length || byUser.length === har.length);
  return { entries: har.filter((e) => hit.has(e)), uncounted };
}

/**
 * Whether a logged port is within `$between: [from, to]` as lokijs compares a number with a query's text
 * (lokijs `gtHelper`/`ltHelper`): as numbers, a bound that is no number below every port for `to` and
 * above every port for `from`, so that such a `from` matches none. An entry without a port matches none.
 */
function inRange(port: number | undefined, from: unknown, to: unknown): boolean {
  if (port === undefined || port === null) return false;
  const [lo, hi] = [Number(from), Number(to)];
  return !Number.isNaN(lo) && port >= lo && (Number.isNaN(hi) || port <= hi);
}

function usernameOf(e: HarEntry): string {
  const username = e.details?.username;
  return typeof username === 'string' ? username : '';
}

/**
 * What the recent statistics count a logged request under (its port, status code, root domain and
 * protocol), or nothing for a request that moved no bytes (not counted).
 */
export function statKeys(e: HarEntry) {
  const d = e.details;
  if (!(d?.in_bw ?? 0) && !(d?.out_bw ?? 0)) return undefined;
  return {
    port: d?.port ?? 0,
    status_code: e.response.status,
    hostname: e.request.host ?? rootDomain(loggedUrl(e.request.method, e.request.url)?.hostname ?? ''),
    protocol: d?.protocol ?? 'http',
  };
}

type StatGroups = { port: Map<number | string, RecentStat> } & { [G in keyof KeptStats]: Map<number | string, RecentStat> };

/** The recent statistics of logged requests, grouped by port, status code, root domain and protocol, on top of `kept`. */
function countStats(har: readonly HarEntry[], kept?: KeptStats): StatGroups {
  const groups: StatGroups = { port: new Map(), status_code: new Map(), hostname: new Map(), protocol: new Map() };
  for (const [group, stats] of Object.entries(kept ?? {}) as [keyof KeptStats, RecentStat[]][])
    for (const stat of stats) groups[group].set(stat.key, { ...stat });
  for (const e of har) {
    const keys = statKeys(e);
    if (!keys) continue;
    const inBw = e.details?.in_bw ?? 0;
    const outBw = e.details?.out_bw ?? 0;
    for (const [group, key] of Object.entries(keys) as [keyof StatGroups, number | string][]) {
      const stats = groups[group];
      const stat = stats.get(key) ?? { key, in_bw: 0, out_bw: 0, reqs: 0, success: 0, bypass_bw: 0, bypass_cost: 0 };
      stat.in_bw += inBw;
      stat.out_bw += outBw;
      stat.reqs++;
      stat.success += successful(e.response.status) ? 1 : 0;
      stats.set(key, stat);
    }
  }
  return groups;
}

/**
 * A deleted port's requests leave the HAR log and its line of the recent statistics, as the real
 * manager's delete does (lib/mixins/mgr_proxy.js 291-300: loki's requests_clear and
 * stats_clear_by_ports). Its statistics are kept apart from its log, so the totals by status code,
 * host and protocol go on counting them: they move into `stats_kept`. `ports` as the real manager
 * names them to loki, which matches them strictly (`$in`): a port given as a text clears nothing.
 */
export function dropPortLogs(store: Store, ports: readonly unknown[]): void {
  const m = store.manager;
  const gone = new Set(ports.filter((p): p is number => typeof p === 'number'));
  const dropped = m.har.filter((e) => gone.has(e.details?.port as number));
  if (!dropped.length) return;
  const counted = countStats(dropped, m.stats_kept);
  store.setManager({
    stats_kept: {
      status_code: [...counted.status_code.values()],
      hostname: [...counted.hostname.values()],
      protocol: [...counted.protocol.values()],
    },
  });
  store.logs.keepRequests((e) => !gone.has(e.details?.port as number));
}

export function logsStatsHandlers(c: ManagerContext) {
  const { store, m } = c;
  return {
    getRecentStats: () => {
      // As the real manager (1.570.247) counts them: each logged request that moved bytes, grouped by
      // port, status code (`unknown` for a tunnel), root domain and protocol; the lists the 20 largest.
      // The requests of deleted ports count on in the totals (stats_kept), not in a port's line.
      // `request_stats: false` clears the statistics and counts nothing while it holds (lib/mixins/mgr_config.js
      // 157-160, lib/manager.js 328-329): empty, as the real manager 1.570.247 answers then (observed,
      // new-user-values.test.ts). Turned on again, the real one counts from then on; the sandbox counts its log.
      const counting = m().settings.request_stats !== false;
      const groups = countStats(counting ? m().har : [], counting ? m().stats_kept : undefined);
      const largest = (stats: Map<number | string, RecentStat>, count = 20) =>
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
      // As the real manager (lib/mixins/web_api.js 1438-1443): `limit||100` on the text as sent, then
      // `slice(-1*limit)`: `0` (a text, so kept) and a text that is no number are the whole log, `-N` all but
      // the first N lines. Under --strict the limit comes as a number: 0 is the whole log too.
      const raw = ctx.query.limit;
      const limit = raw === undefined || raw === '' ? 100 : Number(raw);
      return {
        text: m()
          .general_log.slice(-1 * limit)
          .join('\n'),
      };
    },

    getLogs: async (ctx) => {
      const q = ctx.query;
      // The filters as the real manager reads them, the query's text as sent (lib/manager.js 715-757).
      const { entries: searched, uncounted } = await searchLog(m().har, q.search === undefined ? undefined : String(q.search));
      const sortKey = String(q.sort || 'uuid');
      // A field entries do not have sorts nothing: the log's own order (loki's simplesort on undefined).
      const getter = Object.hasOwn(harField, sortKey) ? harField[sortKey] : undefined;
      const code = q.status_code === undefined ? '' : String(q.status_code);
      // `2**` is a class of codes; anything else is compared as a number (`+status_code`: `abc` matches none).
      const codeOk = !code
        ? () => true
        : /^\d\*\*$/.test(code)
          ? (s: unknown) => String(s).startsWith(code[0] as string)
          : (s: unknown) => s === Number(code);
      // `port`, `content_type` and `protocol`, each when given non-empty, compared exactly (`port` as `+port`),
      // lib/manager.js 741-749; `port` takes the place of a range (the same key of the real one's query).
      const given = (v: unknown) => v !== undefined && v !== '';
      const read = { port: Number, content_type: String, protocol: String } as const;
      const exact = (Object.keys(read) as Array<keyof typeof read>).flatMap((field) =>
        given(q[field]) ? [[field, read[field](q[field])] as const] : [],
      );
      const exactOk = (e: HarEntry) => exact.every(([field, v]) => (e.details as Record<string, unknown> | undefined)?.[field] === v);
      // A port range only with both bounds given, not empty (`$between` on the texts); one bound alone is ignored.
      const [from, to] = [q.port_from, q.port_to];
      const range = given(from) && given(to) && !given(q.port) ? [from, to] : undefined;
      const matched = searched.filter(
        (e) => (!range || inRange(e.details?.port, range[0], range[1])) && codeOk(e.response.status) && exactOk(e),
      );
      // Any `sort_desc` but an empty one is descending (`!!req.query.sort_desc`, on the raw text).
      const desc = q.sort_desc !== undefined && q.sort_desc !== '';
      const dir = desc ? -1 : 1;
      if (getter)
        matched.sort((a, b) => {
          const x = getter(a);
          const y = getter(b);
          return (x < y ? -1 : x > y ? 1 : 0) * dir;
        });
      else if (desc) matched.reverse();
      // `+skip||0` and `+limit||0` (a text that is no number is 0), then loki's `slice(skip)` and, for a
      // limit but 0, `slice(0, limit)` (lib/loki.js 123-131): a negative skip counts from the end, a negative
      // limit leaves out as many from the end. The answer's `skip` is that number.
      const skip = Number(q.skip) || 0;
      const limit = Number(q.limit) || 0;
      const entries = limit ? matched.slice(skip).slice(0, limit) : matched.slice(skip);
      return {
        body: {
          log: { version: '1.2', creator: { name: HAR_CREATOR, version: m().version }, pages: [], entries },
          // The real manager's query applies a port range before the search, and the other filters after it
          // (lib/manager.js 720-749); any of them counts the result again, so only a search alone is uncounted.
          total: uncounted && !range && !code && !exact.length ? 0 : matched.length,
          skip,
          sum_in: matched.reduce((n, e) => n + (e.details?.in_bw ?? 0), 0),
          sum_out: matched.reduce((n, e) => n + (e.details?.out_bw ?? 0), 0),
        },
      };
    },
  } satisfies ManagerHandlers;
}
