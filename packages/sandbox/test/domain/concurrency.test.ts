import { rng } from '@zone-api/testkit/fuzz';
import { describe, expect, it } from 'vitest';
import { C, useSandbox } from '../helpers.js';

// 1,000 creates and deletes in flight at once, racing each other on purpose (a delete may reach the
// server before its create). Whatever the interleaving, the final state must be exactly what the
// server acknowledged: an item exists if and only if its create was acknowledged and its delete was not.
const t = useSandbox();

/** Starts every task at once, in a seeded shuffled order, so creates and deletes really interleave. */
function interleaved<T>(tasks: Array<() => Promise<T>>, seed: number): Promise<T[]> {
  const r = rng(seed);
  const order = tasks.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const results = new Array<Promise<T>>(tasks.length);
  for (const i of order) results[i] = (tasks[i] as () => Promise<T>)();
  return Promise.all(results);
}

describe('1,000 concurrent creates and deletes', () => {
  it('account Zones: the final list is exactly the acknowledged creates minus the acknowledged deletes', async () => {
    await t.sandbox.reset();
    const listNames = async () =>
      new Set((await t.account.listActiveZones({ params: { query: { customer: C } } })).data?.map((z) => z.name));
    const seeded = await listNames();
    // The dump also holds Zones that get_active_zones leaves out (the seeded disabled one).
    const seededInState = new Set(t.sandbox.state().account.zones.map((z) => z.name));
    const names = Array.from({ length: 600 }, (_, i) => `conc_${i}`);
    const plan = { type: 'static', ips_type: 'shared', bandwidth: 'payperusage' } as const;

    const creates = names.map((name) => async () => {
      const r = await t.account.createZone({ body: { customer: C, zone: { name }, plan } });
      return { kind: 'create', name, acked: r.response.status === 201, status: r.response.status };
    });
    const deletes = names.slice(0, 400).map((name) => async () => {
      const r = await t.account.deleteZone({ body: { customer: C, zone: name } });
      return { kind: 'delete', name, acked: r.response.status === 200, status: r.response.status };
    });
    const results = await interleaved([...creates, ...deletes], 11);
    const created = results.filter((r) => r.kind === 'create');
    const deleted = results.filter((r) => r.kind === 'delete');

    // Every answer is an acknowledgement or the declared refusal (400 "not found": not created yet, as the
    // provider's Python SDK reads it), never a 5xx.
    expect(new Set(created.map((r) => r.status))).toEqual(new Set([201]));
    expect([...new Set(deleted.map((r) => r.status))].every((s) => s === 200 || s === 400)).toBe(true);

    const ackedDeletes = new Set(deleted.filter((r) => r.acked).map((r) => r.name));
    // The interleaving is real: some deletes won, some arrived before their create.
    expect(ackedDeletes.size).toBeGreaterThan(0);
    expect(ackedDeletes.size).toBeLessThan(400);
    const expected = new Set([...seeded, ...created.filter((r) => r.acked && !ackedDeletes.has(r.name)).map((r) => r.name)]);
    expect(await listNames()).toEqual(expected);
    // And the state dump agrees with the API.
    const survivors = created.filter((r) => r.acked && !ackedDeletes.has(r.name)).map((r) => r.name);
    expect(new Set(t.sandbox.state().account.zones.map((z) => z.name))).toEqual(new Set([...seededInState, ...survivors]));
  });

  it('manager ports: no port held by two creates at once, and the list is exactly the acknowledged creates minus deletes', async () => {
    await t.sandbox.reset();
    const listPorts = async () => new Set((await t.manager.listProxies()).data?.map((p) => p.port as number));
    const seeded = await listPorts();

    // 600 creates without a port: each must get a distinct next-free port. Each of the 400 deletes
    // waits until a random number of creates have been acknowledged, then goes out while the rest of
    // the creates are still in flight: some find their port, some come too early.
    const r = rng(12);
    let acknowledged = 0;
    const waiting: Array<{ n: number; go: () => void }> = [];
    const afterCreates = (n: number) => new Promise<void>((go) => (n <= acknowledged ? go() : waiting.push({ n, go })));
    const creates = Array.from({ length: 600 }, async () => {
      const res = await t.manager.createProxy({ body: { proxy: { zone: 'static_zone' } } });
      acknowledged++;
      for (const w of waiting.filter((x) => x.n <= acknowledged)) w.go();
      return { kind: 'create', port: res.data?.data.port, acked: res.response.status === 200, status: res.response.status };
    });
    const first = Math.max(24000, ...seeded) + 1;
    const candidates = Array.from({ length: 400 }, (_, i) => first + i);
    const deletes = candidates.map(async (port) => {
      await afterCreates(r.int(600));
      const res = await t.manager.deleteProxy({ params: { path: { port } } });
      return { kind: 'delete', port: port as number, acked: res.response.status === 204, status: res.response.status };
    });
    const results = await Promise.all([...creates, ...deletes]);
    const created = results.filter((r) => r.kind === 'create');
    const deleted = results.filter((r) => r.kind === 'delete');

    expect(new Set(created.map((r) => r.status))).toEqual(new Set([200]));
    const ports = created.map((c) => c.port as number);
    expect(ports.length).toBe(600);
    expect(ports.every((p) => p >= 24000 && !seeded.has(p))).toBe(true);
    expect([...new Set(deleted.map((r) => r.status))].every((s) => s === 204 || s === 500)).toBe(true);

    const ackedDeletes = new Set(deleted.filter((r) => r.acked).map((r) => r.port));
    expect(ackedDeletes.size).toBeGreaterThan(0);
    expect(ackedDeletes.size).toBeLessThan(400);
    expect([...ackedDeletes].every((p) => ports.includes(p as number))).toBe(true);
    // A create takes the highest port + 1, as the real manager does: once an acknowledged delete freed the
    // highest, a later create may take that number again. Never while it is held: a number's creates
    // exceed its acknowledged deletes by at most one (each port is deleted once here), and it is listed
    // at the end exactly when they exceed them.
    const times = (p: number) => ports.filter((x) => x === p).length - (ackedDeletes.has(p) ? 1 : 0);
    expect([...new Set(ports)].filter((p) => times(p) !== 0 && times(p) !== 1)).toEqual([]);
    const expected = new Set([...seeded, ...[...new Set(ports)].filter((p) => times(p) === 1)]);
    expect(await listPorts()).toEqual(expected);
    expect(new Set(t.sandbox.state().manager.ports.map((p) => p.port))).toEqual(expected);
  });
});
