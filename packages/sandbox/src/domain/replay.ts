// A saved state put together from its sections: the snapshot's, then each journal record's in turn
// (domain/persist.ts writes them; Store.sectionsJson makes them).

type Data = Record<string, unknown> & { manager?: Record<string, unknown> };
type Config = Record<string, unknown>;
const PORT_SECTION = /^port:(\d+)(?::(.*))?$/s;

/**
 * Sections put into a state, in order: `har` is the manager's HAR log, `manager` the rest of it,
 * `port:N:field` one field of a port's configuration, `port:N` the fields it has (or, as an older
 * journal wrote it, the whole configuration), `port_order` the ports there are, in order (a `manager`
 * with `ports`, as an older journal wrote it, holds them all); the rest are top-level keys.
 */
export class Replay {
  private ports: Map<number, Config>;
  private fields = new Map<number, string[]>();
  private order: number[] | undefined;
  constructor(readonly data: Data = {}) {
    this.ports = Replay.byPort(data.manager?.ports);
  }
  private static byPort(list: unknown): Map<number, Config> {
    return new Map(Array.isArray(list) ? list.map((p: Config) => [p.port as number, p]) : []);
  }
  apply(name: string, value: unknown): void {
    const data = this.data;
    const port = PORT_SECTION.exec(name);
    if (name === 'har') data.manager = { ...data.manager, har: value };
    else if (name === 'manager') {
      const { ports, ...manager } = value as Record<string, unknown>;
      if (ports) [this.ports, this.fields, this.order] = [Replay.byPort(ports), new Map(), undefined];
      data.manager = { ...manager, har: data.manager?.har };
    } else if (port?.[2] !== undefined) {
      const n = Number(port[1]);
      const cfg = this.ports.get(n) ?? {};
      cfg[port[2]] = value;
      this.ports.set(n, cfg);
    } else if (port && Array.isArray(value)) this.fields.set(Number(port[1]), value);
    else if (port) {
      this.ports.set(Number(port[1]), value as Config);
      this.fields.delete(Number(port[1]));
    } else if (name === 'port_order') this.order = value as number[];
    else data[name] = value;
  }
  /** The state, its ports listed as `port_order` says, each with the fields its `port:N` lists. */
  result(): Data {
    if (!this.data.manager) return this.data;
    const order = this.order ?? [...this.ports.keys()];
    const config = (n: number) => {
      const [cfg, fields] = [this.ports.get(n), this.fields.get(n)];
      return cfg && fields ? Object.fromEntries(fields.map((f) => [f, cfg[f]])) : cfg;
    };
    this.data.manager = { ...this.data.manager, ports: order.map(config).filter((p) => p !== undefined) };
    return this.data;
  }
}

/** The state a list of sections (as Store.sectionsJson gives them) makes. */
export function fromSections(sections: Iterable<[string, string]>): unknown {
  const replay = new Replay();
  for (const [name, text] of sections) replay.apply(name, JSON.parse(text));
  return replay.result();
}
