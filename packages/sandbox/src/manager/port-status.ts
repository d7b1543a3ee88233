import type { ProxyPortConfig } from '../domain/types.js';
import { managerUserAgent } from '../shared/brand.js';
import type { ManagerContext, ManagerHandlers } from './context.js';
import { proxyCheck, runningCheckConfig, storeScope } from './proxy-check.js';

// A port's status (`GET /api/proxy_status/{port}`) and the memory of each port's last check, which
// `proxies_running` shows from then on (ports.ts).

/** What a port's last check answered: its status and, for a `persist` port, the check's details. */
export type CheckedStatus = { status?: string; status_details?: unknown[] };

/**
 * The status of each port's last check, shared by the port handlers (ports.ts): `proxies_running` shows
 * it, a create or a delete forgets it, a move forgets the old number's.
 */
export function portChecks(c: ManagerContext) {
  const { store, options, m, portByKey, status } = c;
  const checked = new Map<number, CheckedStatus>();
  /**
   * The details of each `persist` port's check, made at its first status check and kept while the port
   * runs (`if (!proxy.status_details)`, web_api.js 568-574): a later update, or `force`, leaves them as they were.
   */
  const details = new Map<number, unknown[]>();
  const detailsOf = (cfg: ProxyPortConfig): unknown[] => {
    let kept = details.get(cfg.port);
    if (!kept) {
      kept = proxyCheck(storeScope(store, options.reservedPorts()), runningCheckConfig(cfg, m().settings.zone), cfg.port, cfg.multiply);
      details.set(cfg.port, kept);
    }
    return kept;
  };
  // A request through a port that succeeds makes its status `ok`, kept until a check finds otherwise
  // (lib/manager.js 322-326: the port's usage report); proxies_running shows it.
  options.ports?.onSuccess?.((port) => {
    const last = checked.get(port);
    if (last?.status !== 'ok') checked.set(port, { ...last, status: 'ok' });
  });

  const handlers = {
    getProxyStatus: async (ctx) => {
      // Looked up as a key (web_api.js 553-556): `abc` or `024000` names none.
      const cfg = portByKey(ctx.params.port);
      if (!cfg) return { body: { status: 'Unknown proxy' } };
      let s = status(cfg);
      // The answer, with the details of the real manager's port check for `persist` ports only, and
      // remembered: proxies_running shows it, and it is answered again until `force`. A disabled Zone is
      // answered before the port's details are read (web_api.js 557-561).
      const reply = (out: CheckedStatus, remember: boolean) => {
        if (remember) checked.set(cfg.port, out);
        return { body: out };
      };
      // When ports carry traffic, a `persist` port's details are the real manager's check of its running
      // configuration (proxy-check.ts); without traffic, the sandbox's own reading of its Zone (status).
      const persist = cfg.proxy_type === 'persist';
      const answer = (x: typeof s) =>
        reply(
          persist && x.status !== 'Disabled zone'
            ? { status_details: options.ports ? detailsOf(cfg) : (x.status_details ?? []), status: x.status }
            : { status: x.status },
          true,
        );
      // A Zone the account does not have (an unknown one, or none: the settings' `zone` set to `""`) is
      // checked all the same when ports carry traffic: the network refuses the port's username.
      const unknownZone = !store.zones.has(cfg.zone ?? m().settings.zone);
      if (unknownZone && options.ports) s = { status: 'ok' };
      // A port with an `smtp` list is an SMTP relay: not checked, nor its status kept (web_api.js 563-564:
      // the port's `status` is left as it was, so proxies_running shows none).
      // A list as the spec types it, or the text a lenient create kept as sent: either has a length.
      const smtp: ArrayLike<unknown> | undefined = cfg.smtp;
      if (s.status === 'ok' && smtp?.length) return reply({ status: 'ok', status_details: [{ msg: 'SMTP proxy' }] }, false);
      if (s.status !== 'ok' || !options.ports) return answer(s);
      // When ports carry traffic, the port is checked as the real manager checks it: its last status is
      // answered until `force` asks again, any value of it but `false` and `0` (web_api.js 565-585).
      const force = ctx.query.force;
      const again = force !== undefined && String(force) !== 'false' && String(force) !== '0';
      const last = checked.get(cfg.port);
      if (last?.status && !again) return answer(last as typeof s);
      const result = await options.ports.check(cfg, m().settings.test_url, managerUserAgent(m().version));
      return answer({ ...s, status: result });
    },
  } satisfies ManagerHandlers;

  return {
    /** The port's last check, if any since it was made. */
    last: (port: number): CheckedStatus | undefined => checked.get(port),
    /** Forgets a port's last check and its details (deleted, moved away, restarted, or a new port of a number checked before). */
    forget: (port: number): void => {
      checked.delete(port);
      details.delete(port);
    },
    handlers,
  };
}
