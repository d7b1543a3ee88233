import { describe, expect, it } from 'vitest';
import { fromSections, Replay } from '../../src/domain/replay.js';

// A saved state put together from its sections (the snapshot's, then each journal record's), as
// persist.ts reads a data file back: each kind of section and what a later one does to an earlier one.

/** The keys of the first port of a state, in order. */
const firstPortKeys = (state: { manager?: Record<string, unknown> }) => Object.keys(((state.manager?.ports ?? []) as object[])[0] ?? {});

const replay = (sections: Array<[string, unknown]>, start?: Record<string, unknown>) => {
  const r = new Replay(start);
  for (const [name, value] of sections) r.apply(name, value);
  return r.result();
};

describe('Replay', () => {
  it('a top-level section is a key of the state; without a manager the state is left as it is', () => {
    expect(
      replay([
        ['account', { customer: 'c' }],
        ['usage', [1]],
        ['usage', [2]],
      ]),
    ).toEqual({ account: { customer: 'c' }, usage: [2] });
    // Names that only look like port sections are top-level keys too.
    expect(
      replay([
        ['xport:1', 1],
        ['port:1x', 2],
        ['port:', 3],
        ['port_orders', 4],
      ]),
    ).toEqual({
      'xport:1': 1,
      'port:1x': 2,
      'port:': 3,
      port_orders: 4,
    });
  });

  it('har is the manager’s HAR log, manager the rest of it: each keeps the other', () => {
    const state = replay([
      ['har', ['h1']],
      ['manager', { settings: { a: 1 } }],
      ['har', ['h2']],
    ]);
    expect(state).toEqual({ manager: { settings: { a: 1 }, har: ['h2'], ports: [] } });
    // A later manager section replaces the earlier one whole, the HAR log kept.
    expect(
      replay([
        ['manager', { settings: { a: 1 }, x: 1 }],
        ['har', ['h']],
        ['manager', { settings: { b: 2 } }],
      ]),
    ).toEqual({
      manager: { settings: { b: 2 }, har: ['h'], ports: [] },
    });
  });

  it('port:N:field sets one field of a port, port:N lists the fields it has, in that order', () => {
    const state = replay([
      ['manager', { settings: {} }],
      ['port:24000:port', 24000],
      ['port:24000:zone', 'z'],
      ['port:24000:ssl', true],
      ['port:24001:port', 24001],
      ['port:24000', ['zone', 'port']],
    ]);
    expect(state.manager?.ports).toEqual([{ zone: 'z', port: 24000 }, { port: 24001 }]);
    expect(firstPortKeys(state)).toEqual(['zone', 'port']);
    // A field a port lists but no section set is there, undefined.
    const listed = replay([
      ['manager', {}],
      ['port:1:port', 1],
      ['port:1', ['port', 'zone']],
    ]);
    expect(listed.manager?.ports).toEqual([{ port: 1, zone: undefined }]);
    expect(firstPortKeys(listed)).toEqual(['port', 'zone']);
  });

  it('port:N with a whole configuration (an older journal) replaces the port and forgets its field list', () => {
    const state = replay([
      ['manager', {}],
      ['port:5:port', 5],
      ['port:5:zone', 'a'],
      ['port:5', ['port']],
      ['port:5', { port: 5, zone: 'b', ssl: true }],
    ]);
    expect(state.manager?.ports).toEqual([{ port: 5, zone: 'b', ssl: true }]);
  });

  it('a field name may hold any character, a newline and colons too', () => {
    const state = replay([
      ['manager', {}],
      ['port:7:port', 7],
      ['port:7:a:b\nc', 1],
    ]);
    expect(state.manager?.ports).toEqual([{ port: 7, 'a:b\nc': 1 }]);
  });

  it('port_order says which ports there are and in which order; a port it names that has no configuration is left out', () => {
    const state = replay([
      ['manager', {}],
      ['port:1:port', 1],
      ['port:2:port', 2],
      ['port:3:port', 3],
      ['port_order', [3, 9, 1]],
    ]);
    expect(state.manager?.ports).toEqual([{ port: 3 }, { port: 1 }]);
    // Without it, the ports in the order their first section came.
    expect(
      replay([
        ['manager', {}],
        ['port:2:port', 2],
        ['port:1:port', 1],
        ['port:2:zone', 'z'],
      ]).manager?.ports,
    ).toEqual([{ port: 2, zone: 'z' }, { port: 1 }]);
  });

  it('a manager section with ports (an older journal) holds them all: earlier port sections, field lists and order are dropped', () => {
    const state = replay([
      ['manager', {}],
      ['port:1:port', 1],
      ['port:1', ['port']],
      ['port:2:port', 2],
      ['port_order', [2, 1]],
      ['manager', { ports: [{ port: 8, zone: 'x' }, { port: 9 }], settings: {} }],
    ]);
    expect(state).toEqual({ manager: { settings: {}, har: undefined, ports: [{ port: 8, zone: 'x' }, { port: 9 }] } });
    // A manager section without ports keeps the ports there are.
    const kept = replay([
      ['manager', {}],
      ['port:1:port', 1],
      ['port:1', ['port']],
      ['port_order', [1]],
      ['manager', { settings: {} }],
    ]);
    expect(kept.manager?.ports).toEqual([{ port: 1 }]);
  });

  it('starts from a state: its manager’s ports are the ports, by number', () => {
    const start = { account: { customer: 'c' }, manager: { settings: {}, ports: [{ port: 1, zone: 'a' }, { port: 2 }] } };
    const state = replay([['port:1:zone', 'b']], start);
    expect(state).toEqual({ account: { customer: 'c' }, manager: { settings: {}, ports: [{ port: 1, zone: 'b' }, { port: 2 }] } });
    // Ports that are no list are none.
    expect(replay([['port:3:port', 3]], { manager: { ports: 'nope' } }).manager?.ports).toEqual([{ port: 3 }]);
    expect(new Replay().result()).toEqual({});
  });
});

describe('fromSections', () => {
  it('parses each section’s JSON text and puts them together in order', () => {
    expect(
      fromSections([
        ['account', '{"customer":"c"}'],
        ['manager', '{"settings":{}}'],
        ['port:1:port', '1'],
        ['account', '{"customer":"d"}'],
      ]),
    ).toEqual({ account: { customer: 'd' }, manager: { settings: {}, har: undefined, ports: [{ port: 1 }] } });
    expect(() => fromSections([['account', '{']])).toThrow(SyntaxError);
  });
});
