import { costOf } from './money.js';
import { dayString, type Store } from './state.js';
import type { ZoneState } from './types.js';

// Usage flows into the account API: every request through the proxy network is billed to its Zone
// as a request log record (`req_logs`), bandwidth of the day (`zone/bw`, `customer/bw`), cost
// (`zone/cost`, from the Zone's price per GB) and `pending_costs` in the balance.

/** Request log records kept; the oldest go first. */
export const REQ_LOG_LIMIT = 10_000;
const RECENT_IPS = 20;

export interface Usage {
  zone: ZoneState;
  clientIp: string;
  session: string;
  ua: string;
  host: string;
  url: string;
  status: number;
  message: string;
  /** Bytes from the client to the target (request line, headers, body). */
  up: number;
  /** Bytes from the target to the client. */
  down: number;
}

export function bill(store: Store, u: Usage, now: number): void {
  const date = dayString(now);
  let day = store.usage.find((r) => r.zone === u.zone.name && r.date === date);
  if (!day) {
    day = { zone: u.zone.name, date, bw_dn: 0, bw_up: 0 };
    store.usage.push(day);
  }
  store.touch('usage');
  store.touch('req_logs');
  day.bw_dn += u.down;
  day.bw_up += u.up;
  store.reqLogs.push({
    zone: u.zone.name,
    ts: new Date(now).toISOString(),
    status: { code: u.status, message: u.message },
    tun: { session: u.session },
    ua: u.ua,
    dst: { host: u.host, url: u.url },
    bw: u.up + u.down,
    ip: u.clientIp,
  });
  if (store.reqLogs.length > REQ_LOG_LIMIT) store.reqLogs.splice(0, store.reqLogs.length - REQ_LOG_LIMIT);
  store.account.pending_costs += costOf(u.up + u.down, u.zone.price_per_gb);
  const recent = u.zone.recent_ips.filter((ip) => ip !== u.clientIp);
  recent.unshift(u.clientIp);
  u.zone.recent_ips = recent.slice(0, RECENT_IPS);
}
