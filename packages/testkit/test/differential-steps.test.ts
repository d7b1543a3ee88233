import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shapeDiffs } from '../src/differential/compare.js';
import { type Step, sequences } from '../src/differential/index.js';
import { LISTEN_PORTS } from '../src/differential/values.js';
import { loadBundle } from '../src/index.js';

// The differential generator's choices about a port's `listen_port` (src/differential/values.ts): the
// values it draws, and that the calls after one still include the port's status check.

const doc = loadBundle('manager');
const drawn = fc.sample(sequences(doc, 6), { seed: 1003928370, numRuns: 3000 });
const listenPortOf = (s: Step): unknown => (s.kind === 'call' ? s.body?.value?.proxy?.listen_port : undefined);
const sendsListenPort = (s: Step) => s.kind === 'call' && !!s.body?.value?.proxy && Object.hasOwn(s.body.value.proxy, 'listen_port');

describe('listen_port in generated sequences', () => {
  it('is drawn: a number no sequence creates nor finds in use, falsy values, text, out of range and of other types, each class named', () => {
    const steps = drawn.flat().filter(sendsListenPort);
    const values = steps.map(listenPortOf);
    expect(values.filter((x) => LISTEN_PORTS.includes(x as never)).length).toBeGreaterThan(0);
    for (const x of values)
      expect(
        [...LISTEN_PORTS, 0, '', String(LISTEN_PORTS[0]), 70000, -1, 24050.5, true].includes(x as never) || typeof x === 'object',
      ).toBe(true);
    const classes = new Set(steps.flatMap((s) => s.classes).filter((c) => c.includes('listen_port')));
    expect([...classes].map((c) => c.replace(/^.*listen_port:/, '')).sort()).toEqual(
      ['falsy', 'out-of-range', 'string-for-number', 'wrong-type'].sort(),
    );
  });

  it('is followed by status checks: the real manager answers them (`error`, its port refuses) and keeps running', () => {
    const followed = drawn.filter((seq) => {
      const first = seq.findIndex(sendsListenPort);
      return first >= 0 && seq.slice(first + 1).some((s) => s.kind === 'call' && s.operationId === 'getProxyStatus');
    });
    expect(followed.length).toBeGreaterThan(0);
  });
});

describe('a body divergence', () => {
  it('names each path that differs, with both sides, a key absent on one side as undefined', () => {
    const real = { data: { port: 'number', zone: 'string', config: 'boolean', list: ['string'] }, extra: 'string' };
    const sandbox = { data: { port: 'number', zone: 'string', config: 'string', list: ['number'] } };
    expect(shapeDiffs(real, sandbox)).toEqual([
      ['.data.config', 'boolean', 'string'],
      ['.data.list.0', 'string', 'number'],
      ['.extra', 'string', undefined],
    ]);
    expect(shapeDiffs(real, real)).toEqual([]);
    expect(shapeDiffs(['string'], { 0: 'string' })).toEqual([['.', ['string'], { 0: 'string' }]]);
  });
});
