import { freePort, tunnelThrough } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { usePair } from './pair.js';
import { normalised, portLog, portOf } from './port-logs.js';

// Traffic through a proxy port whose answer or log entry follows from something other than the target's
// answer, on the real manager 1.570.247 and the sandbox side by side (pair.ts, port-logs.ts).

const pair = usePair();

/** A CONNECT's answer as compared: its date left out, its headers by name. */
const answer = (r: Awaited<ReturnType<typeof tunnelThrough>>) => ({
  status: r.status,
  statusMessage: r.statusMessage,
  headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'date')),
});

describe('traffic cases through a port', () => {
  it('a CONNECT to a target that refuses it: the network’s 502 passed on, logged with its connection headers, no body, the head counted in', async () => {
    const port = 24820;
    await pair.createBoth(port);
    const closed = await freePort();
    const real = await tunnelThrough(`http://127.0.0.1:${portOf('real', port)}`, `127.0.0.1:${closed}`);
    const sandbox = await tunnelThrough(`http://127.0.0.1:${portOf('sandbox', port)}`, `127.0.0.1:${closed}`);
    expect(real).toMatchObject({ status: 502, headers: { 'x-brd-err-code': 'target_unreachable', connection: 'close' } });
    expect(answer(sandbox)).toEqual(answer(real));
    const log = await portLog(pair, port, 1);
    expect(log.real.log.entries[0]).toMatchObject({ response: { status: 502, bodySize: 0, content: { size: 0 } } });
    expect(normalised('sandbox', port, log.sandbox)).toEqual(normalised('real', port, log.real));
  });
});
