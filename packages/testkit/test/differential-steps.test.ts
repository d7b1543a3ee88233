import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inexact, valueDiffs } from '../src/differential/compare.js';
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
    // A wider draw than the first test's: each operation the spec gains thins out this pair in a draw of fixed size.
    const wide = fc.sample(sequences(doc, 6), { seed: 1003928370, numRuns: 20_000 });
    const followed = wide.filter((seq) => {
      const first = seq.findIndex(sendsListenPort);
      return first >= 0 && seq.slice(first + 1).some((s) => s.kind === 'call' && s.operationId === 'getProxyStatus');
    });
    expect(followed.length).toBeGreaterThan(0);
  });
});

describe('a value divergence', () => {
  it('names each path that differs, with both sides, array items as [] and a key absent on one side as undefined', () => {
    const real = { data: { port: 24000, zone: 'z', config: false, list: ['a', 'b'] }, extra: 1 };
    const sandbox = { data: { port: 24000, zone: 'z', config: 'store', list: ['a', 'c', 'd'] } };
    expect(valueDiffs(real, sandbox, 'body')).toEqual([
      ['body.data.config', false, 'store'],
      ['body.data.list[]', 'b', 'c'],
      ['body.data.list[]', undefined, 'd'],
      ['body.extra', 1, undefined],
    ]);
    expect(valueDiffs(real, structuredClone(real), 'body')).toEqual([]);
    expect(valueDiffs(['a'], { 0: 'a' }, 'body')).toEqual([['body', ['a'], { 0: 'a' }]]);
  });
});

describe('a parity entry', () => {
  it('names an exact path: never a whole body, log or state part, nor `*` over a path', () => {
    for (const exact of [
      'status',
      'media',
      'route',
      'spec:getLogs',
      'body.data.version',
      'body.(text)',
      'header.sunset',
      'target.count',
      'target.requests[].headers.x-lpm-session',
      'state:settings.config',
      'state:ports:*.rules[].action',
      'state:logs?*.log.entries[].details.password',
      'state:stats.ports.24000.in_bw',
    ])
      expect(inexact(exact), exact).toBeUndefined();
    for (const whole of [
      '*',
      'body',
      'body.*',
      'body.data.*',
      'state:*',
      'state:logs?*',
      'state:logs?*.log',
      'state:stats',
      'header',
      'header.*',
      'target',
      'state:logs?*.*',
    ])
      expect(inexact(whole), whole).toBeDefined();
  });
});
