import { createServer } from 'node:net';

/** A stand-in external proxy (standInProxy): its address, the CONNECTs to the target it took, and how to close it. */
export interface StandInProxy {
  /** `127.0.0.1:<port>`, as a port's `ext_proxies` names it. */
  address: string;
  /** The CONNECTs to the target it took (a case sets it back to 0 before what it counts). */
  sent: number;
  close(): void;
}

/**
 * A stand-in external proxy on loopback for a port's `ext_proxies`: it counts each CONNECT to `authority`
 * and hangs up on it, or, with `opensEvery` n, answers every n-th one 200 and echoes what comes through
 * (a retry's second CONNECT answered, n = 2). Anything else it hangs up on, uncounted.
 */
export async function standInProxy(authority: string, opensEvery = 0): Promise<StandInProxy> {
  const server = createServer((c) =>
    c.once('data', (d: Buffer) => {
      if (!d.toString().startsWith(`CONNECT ${authority} `)) return void c.destroy();
      proxy.sent++;
      if (!opensEvery || proxy.sent % opensEvery !== 0) return void c.destroy();
      c.write('HTTP/1.1 200 Connection established\r\n\r\n');
      c.on('data', (more: Buffer) => c.end(more));
    }),
  );
  const proxy: StandInProxy = { address: '', sent: 0, close: () => server.close() };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const at = server.address();
  proxy.address = `127.0.0.1:${typeof at === 'object' && at ? at.port : 0}`;
  return proxy;
}
