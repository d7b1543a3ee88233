import { expect } from 'vitest';
import { type Pair, SHIFT } from './pair.js';

// A port's log on both sides of a pair (pair.ts), read once the real manager holds what is awaited, and
// normalised only for what differs between two runs of the real manager itself: ids, times, the port's
// number, the exit peer's address, the date and the upstream password (parity.yaml:
// `details.password`). For the suites that compare log entries whole (log-values, traffic-cases).

export type Side = 'real' | 'sandbox';
export const SIDES: Side[] = ['real', 'sandbox'];
export const portOf = (side: Side, port: number): number => (side === 'real' ? port : port + SHIFT);

export interface Log {
  log: { entries: Record<string, unknown>[] };
  sum_in: number;
  sum_out: number;
}

/** Each side's log of a port, once the real one holds `count` entries. */
export async function portLog(pair: Pair, port: number, count: number): Promise<Record<Side, Log>> {
  const read = async (side: Side) => {
    const p = portOf(side, port);
    const base = side === 'real' ? pair.manager.url : pair.sandbox.managerUrl;
    const r = await fetch(`${base}/api/logs?port_from=${p}&port_to=${p}&limit=0`);
    return (await r.json()) as Log;
  };
  await expect
    .poll(async () => (await read('real')).log.entries.length, { message: `the real manager logs ${count} on ${port}` })
    .toBe(count);
  await pair.sandbox.settled();
  return { real: await read('real'), sandbox: await read('sandbox') };
}

/** A log read without what differs between two runs of the real manager itself. */
export function normalised(side: Side, port: number, log: Log): unknown {
  const at = String(portOf(side, port));
  const text = JSON.stringify(log)
    .replace(new RegExp(`(?<!\\d)${at}(?!\\d)`, 'g'), 'PORT')
    .replace(/:PORT(?=[,}])/g, ':"PORT"')
    .replace(/"(proxy_peer|x-brd-ip)":"[\d.]+"/g, '"$1":"PEER"')
    .replace(/"name":"(x-brd-ip|date)","value":"[^"]*"/g, '"name":"$1","value":"…"')
    .replace(/"(uuid|startedDateTime)":"[^"]*"/g, '"$1":"…"')
    .replace(/"(timestamp|time|ttfb|receive|end|blocked|wait)":\d+/g, '"$1":0');
  const parsed = JSON.parse(text) as Log;
  for (const e of parsed.log.entries) delete (e.details as Record<string, unknown>).password;
  // Entries logged within the same millisecond come in either order.
  parsed.log.entries.sort((a, b) => JSON.stringify(a.request).localeCompare(JSON.stringify(b.request)));
  return parsed;
}
