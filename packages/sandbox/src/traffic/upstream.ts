// A port's upstream: the external proxies it names (in turn), and its throttle.

/** At most `limit` at once; the others wait their turn (a port's `throttle`). */
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(readonly limit: number) {}
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export interface ExtDefaults {
  ext_proxy_username?: string;
  ext_proxy_password?: string;
  ext_proxy_port?: number;
}

/** An external proxy of `ext_proxies` (`{proxy: "[username:password@]host[:port]"}`), with the port's defaults. */
export function extProxy(entry: { proxy: string }, d: ExtDefaults): { host: string; port: number; authorization?: string } {
  const at = entry.proxy.lastIndexOf('@');
  const given = at >= 0 ? entry.proxy.slice(0, at) : undefined;
  const [host, port] = (at >= 0 ? entry.proxy.slice(at + 1) : entry.proxy).split(':');
  const cred = given ?? (d.ext_proxy_username !== undefined ? `${d.ext_proxy_username}:${d.ext_proxy_password ?? ''}` : undefined);
  return {
    host: host as string,
    port: Number(port) || d.ext_proxy_port || 24000,
    ...(cred ? { authorization: `Basic ${Buffer.from(cred).toString('base64')}` } : {}),
  };
}
