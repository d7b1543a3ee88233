import { describe, expect, it } from 'vitest';
import { Store } from '../../src/domain/state.js';
import type { ProxyPortConfig } from '../../src/domain/types.js';
import { defaultSeed } from '../../src/index.js';
import { rebuildDuplicates } from '../../src/manager/multiply.js';

// The manager's ports and bans change only through the Store's methods (the handlers ask the domain):
// a port goes with its running state (bans, session counter), a move takes it along, a restart clears it.

/** A store of the built-in seed: ports 24000 and 24001, a ban of 192.0.2.10 for example.com on 24000. */
const fresh = () => new Store(defaultSeed());
const ban = (port: number, ip: string, to = 0) => ({ port, ip, domain: null, to });
const bansOf = (s: Store) => s.toData().manager.bans.map((b) => `${b.port} ${b.ip}`);

describe('Store: ports and their running state', () => {
  it('putPort stores a new port and replaces one on its number, keeping its bans and sessions', () => {
    const s = fresh();
    s.putPort({ port: 24005, zone: 'static_zone' } as ProxyPortConfig);
    expect([...s.ports.keys()]).toEqual([24000, 24001, 24005]);
    s.manager.sessions['24000'] = 3;
    s.putPort({ port: 24000, zone: 'res_zone' } as ProxyPortConfig);
    expect(s.ports.get(24000)?.zone).toBe('res_zone');
    expect(s.ports.size).toBe(3);
    expect(bansOf(s)).toEqual(['24000 192.0.2.10']);
    expect(s.manager.sessions).toEqual({ '24000': 3 });
  });

  it('setPortZone gives a port a Zone of its own or leaves it none, in place; an unknown port is no change', () => {
    const s = fresh();
    const cfg = s.ports.get(24000);
    s.setPortZone(24000, 'res_zone');
    expect(s.ports.get(24000)).toBe(cfg);
    expect(cfg?.zone).toBe('res_zone');
    s.setPortZone(24000, undefined);
    expect(cfg && 'zone' in cfg).toBe(false);
    s.setPortZone(24999, 'res_zone');
    expect(s.ports.has(24999)).toBe(false);
  });

  it("setManager replaces the fields given and removes those given as undefined; setSettings changes the settings' fields in place", () => {
    const s = fresh();
    const settings = s.manager.settings;
    s.setManager({ version: '9.9.9', kept_stored: [24001] });
    expect([s.manager.version, s.manager.kept_stored]).toEqual(['9.9.9', [24001]]);
    s.setManager({ kept_stored: undefined });
    expect('kept_stored' in s.manager).toBe(false);
    expect(s.manager.version).toBe('9.9.9');
    s.setSettings({ logs: 5 });
    expect(s.manager.settings).toBe(settings);
    expect(settings.logs).toBe(5);
    expect(s.toData().manager.settings.logs).toBe(5);
  });

  it('dropPort removes the port, its bans and its session counter, and nothing of another port', () => {
    const s = fresh();
    s.addBan(ban(24001, '10.0.0.1'));
    s.manager.sessions = { '24000': 2, '24001': 5 };
    s.dropPort(24000);
    expect([...s.ports.keys()]).toEqual([24001]);
    expect(bansOf(s)).toEqual(['24001 10.0.0.1']);
    expect(s.activeBans(24000)).toEqual([]);
    expect(s.manager.sessions).toEqual({ '24001': 5 });
    expect(s.toData().manager.ports.map((p) => p.port)).toEqual([24001]);
  });

  it('movePort takes the configuration, the live bans and the session counter to the new number', () => {
    const s = fresh();
    s.addBan(ban(24000, '10.0.0.2', s.clock.now() - 1)); // expired: it does not move
    s.addBan(ban(24000, '10.0.0.3', s.clock.now() + 60_000));
    s.manager.sessions = { '24000': 7 };
    const cfg = { ...s.ports.get(24000), port: 24010 } as ProxyPortConfig;
    s.movePort(24000, cfg);
    expect([...s.ports.keys()].sort()).toEqual([24001, 24010]);
    expect(s.ports.get(24010)).toBe(cfg);
    expect(s.activeBans(24010).map((b) => [b.port, b.ip, b.domain])).toEqual([
      [24010, '192.0.2.10', 'example.com'],
      [24010, '10.0.0.3', null],
    ]);
    expect(s.activeBans(24000)).toEqual([]);
    expect(s.manager.sessions).toEqual({ '24010': 7 });
  });

  it('movePort of a port without sessions leaves no counter behind', () => {
    const s = fresh();
    s.movePort(24001, { ...s.ports.get(24001), port: 24011 } as ProxyPortConfig);
    expect(s.manager.sessions).toEqual({});
    expect([...s.ports.keys()].sort()).toEqual([24000, 24011]);
  });

  it('nextSession counts per port from 1, in the state', () => {
    const s = fresh();
    expect([s.nextSession(24000), s.nextSession(24000), s.nextSession(24001)]).toEqual([1, 2, 1]);
    expect(s.toData().manager.sessions).toEqual({ '24000': 2, '24001': 1 });
  });

  it('restartPorts keeps every configuration and clears bans, sessions and the token rate', () => {
    const s = fresh();
    s.addBan(ban(24001, '10.0.0.4'));
    s.nextSession(24000);
    s.manager.token_issued = [1, 2];
    const before = s.toData().manager.ports;
    s.restartPorts();
    expect(s.toData().manager.ports).toEqual(before);
    expect(bansOf(s)).toEqual([]);
    expect(s.manager.sessions).toEqual({});
    expect(s.manager.token_issued).toEqual([]);
  });
});

describe('rebuildDuplicates through the Store', () => {
  const master = (multiply: number, zone = 'static_zone') => ({ port: 24100, zone, multiply }) as ProxyPortConfig;
  const listeners = () => {
    const events: string[] = [];
    return {
      events,
      open: async (cfg: ProxyPortConfig) => void events.push(`open ${cfg.port}`),
      close: async (port: number) => void events.push(`close ${port}`),
    };
  };

  it('a master going from 3 ports to 2: the dropped duplicate goes with its bans and sessions, the kept one takes the new configuration', async () => {
    const s = fresh();
    await rebuildDuplicates(s, 24100, master(3));
    expect([...s.ports.keys()].filter((p) => p >= 24100)).toEqual([24100, 24101, 24102]);
    s.addBan(ban(24101, '10.0.0.5'));
    s.addBan(ban(24102, '10.0.0.6'));
    s.nextSession(24102);
    const l = listeners();
    await rebuildDuplicates(s, 24100, master(2, 'res_zone'), l);
    expect([...s.ports.keys()].filter((p) => p >= 24100)).toEqual([24100, 24101]);
    expect(s.ports.get(24101)?.zone).toBe('res_zone');
    expect(bansOf(s)).toEqual(['24000 192.0.2.10', '24101 10.0.0.5']);
    expect(s.manager.sessions).toEqual({});
    expect(l.events).toEqual(['close 24102', 'open 24101']);
  });

  it('a new duplicate does not take the number of another port', async () => {
    const s = fresh();
    s.putPort({ port: 24101, zone: 'res_zone' } as ProxyPortConfig);
    const l = listeners();
    await rebuildDuplicates(s, 24100, master(3), l);
    expect(s.ports.get(24101)?.zone).toBe('res_zone');
    expect(s.ports.get(24102)?.proxy_type).toBe('duplicate');
    expect(l.events).toEqual(['open 24102']);
  });
});
