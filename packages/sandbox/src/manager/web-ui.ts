import { networkInterfaces } from 'node:os';
import { deref } from '@zone-api/spec/model';
import type { ProxyPortConfig } from '../domain/types.js';
import type { ManagerContext, ManagerHandlers } from './context.js';
import { statKeys } from './logs-stats.js';
import { managerOptions } from './manager-options.js';
import { rebuildDuplicates } from './multiply.js';
import { updatedConfig } from './port-config.js';

// The routes the real manager's own web interface calls that the provider's documentation does not
// list (spec tag "Web interface", each operation with its source in the real manager 1.570.247):
// enough for that interface to start on the sandbox and work its pages.

// biome-ignore lint/suspicious/noExplicitAny: schemas of the bundle are walked generically
type Json = any;

const countryNames = new Intl.DisplayNames(['en'], { type: 'region' });

export function webUiHandlers(c: ManagerContext) {
  const { store, options, m, log, portByKey, portFacts } = c;
  const { defaults } = managerOptions(c);

  /** The port fields as the spec describes them (`ProxyPort`): type, description, the values of a list, the default. */
  function portFields(): Record<string, Json> {
    const doc = options.doc;
    if (!doc) return {};
    const schema = deref(doc, doc.components?.schemas?.ProxyPort).node ?? {};
    const out: Record<string, Json> = {};
    for (const [name, raw] of Object.entries<Json>(schema.properties ?? {})) {
      const p = deref(doc, raw).node ?? {};
      const type = [].concat(p.type ?? []).find((t: string) => t !== 'null') ?? (p.oneOf || p.anyOf ? 'string' : 'object');
      const desc: Json = { type, ...(p.description ? { desc: String(p.description).trim() } : {}) };
      if (Array.isArray(p.enum)) desc.values = p.enum.filter((x: Json) => x !== null).join('|');
      out[name] = { desc, ...(p.default !== undefined ? { def: p.default } : {}) };
    }
    if (out.zone) out.zone.def = m().settings.zone;
    // The choices the port editor offers for these two (lib/mixins/web_api.js 247-253): its `iface`
    // list (the machine's interfaces, after "dynamic" and "All") and its `dns` list; without them its
    // General tab fails to render.
    if (out.dns) out.dns.values = ['', 'local', 'remote'];
    if (out.iface)
      out.iface.values = [
        { key: 'dynamic (default)', value: '' },
        { key: 'All', value: '0.0.0.0' },
        ...Object.keys(networkInterfaces()).map((name) => ({ key: name, value: name })),
      ];
    return out;
  }

  /** The countries of the seed's cities, as `GET /api/all_locations` lists countries. */
  function locations() {
    const codes = Object.keys(store.cities)
      .map((cc) => cc.toLowerCase())
      .sort();
    const name = (cc: string) => countryNames.of(cc.toUpperCase()) ?? cc;
    return {
      shared_countries: codes,
      countries_by_code: Object.fromEntries(codes.map((cc) => [cc, name(cc)])),
      asns: {},
      carriers: {},
      cities: [],
      countries: codes.map((cc) => ({ country_id: cc, country_name: name(cc), mob: false })),
      regions: {},
    };
  }

  /** Clears the request log and so the statistics counted from it (the real manager clears both). */
  function resetLogs() {
    store.logs.keepRequests(() => false);
    store.setManager({ stats_kept: undefined });
    log('request log and statistics cleared');
    return { text: 'ok' };
  }

  return {
    // Always logged in: the sandbox holds its account's credentials from the start.
    getMode: () => ({ body: { logged_in: true } }),
    // The sandbox's network is the provider's, and it is always there.
    getConnection: () => ({ body: { domain: true } }),
    getDefaults: () => ({ body: defaults() }),
    getConsts: () => ({ body: { proxy: portFields(), consts: {} } }),
    // The sandbox's ports have met no TLS error a client raised against their CA.
    getTlsWarning: () => ({ body: false }),
    getLogsSuggestions: () => {
      // The keys of the recent statistics (lib/mixins/web_api.js 673-682); none when requests are not counted.
      const out = { ports: new Set<number>(), status_codes: new Set<number | string>(), protocols: new Set<string>() };
      if (m().settings.request_stats !== false)
        for (const e of m().har) {
          const k = statKeys(e);
          if (!k) continue;
          out.ports.add(k.port);
          out.status_codes.add(k.status_code);
          out.protocols.add(k.protocol);
        }
      return { body: { ports: [...out.ports], status_codes: [...out.status_codes], protocols: [...out.protocols] } };
    },
    getAllLocations: () => ({ body: locations() }),
    // The carriers the provider's cloud would list: the sandbox's seed names none (its locations have no carriers either).
    getAllCarriers: () => ({ body: [] }),
    // The provider's translations of the web interface: the sandbox has none, and the interface shows its English texts.
    getLanguageResources: () => ({ body: {} }),
    getSessions: (ctx) => {
      // Looked up as a key (web_api.js 508-514): `abc` or `024000` names none.
      if (!portByKey(ctx.params.port)) return { status: 400, text: 'server does not exist' };
      return { body: {} };
    },
    changeProxyIps: async (ctx) => {
      const { port, ips = [], vips = [] } = ctx.body;
      const cfg = store.ports.get(port);
      if (!cfg) return { status: 400, text: `No proxy at port ${port}` };
      // `proxy_update(proxy, {ips, vips})` (web_api.js 276-284, mgr_proxy.js 340-375): lists that differ
      // from the port's (sorted) restart it with them, the rest of its configuration kept; the same lists
      // update it in place, as an update does (mgr_proxy.js 402-423): the stored configuration gains what
      // `update_proxy_fields` adds (the plan's kind, super proxy ports, antivirus server) and keeps its Zone,
      // none when it had none, which the running port then has too.
      const sorted = (xs: unknown) => JSON.stringify([...((xs as unknown[]) ?? [])].sort());
      const had = cfg as { ips?: unknown; vips?: unknown };
      const same = sorted(had.ips) === sorted(ips) && sorted(had.vips) === sorted(vips);
      const next = same
        ? await updatedConfig(cfg, { ips, vips }, portFacts({ zone: cfg.zone }), options.portFieldTypes ?? {})
        : ({ ...cfg, ips, vips } as ProxyPortConfig);
      store.putPort(next);
      if (same) await rebuildDuplicates(store, cfg.port, next, options.ports);
      log(`port ${port} uses ${ips.length} IPs and ${vips.length} gIPs`);
      return { text: 'ok' };
    },
    resetLogs,
    getLogsReset: resetLogs,
    createErrorReport: (ctx) => {
      // Any JSON value in any field is passed on unchecked by the real manager (web_api.js 1426-1431);
      // String() would throw on an object whose `toString` is no function.
      const report = (ctx.body ?? {}) as Record<string, unknown>;
      const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
      log(`web interface error ${text(report.type)}: ${text(report.message)}`);
      return { text: 'OK' };
    },
  } satisfies ManagerHandlers;
}
