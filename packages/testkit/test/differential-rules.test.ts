import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sequences } from '../src/differential/index.js';
import { loadBundle } from '../src/index.js';

// The differential generator's port rules (values.ts, steps.ts): what it draws, checked on the sequences
// of fixed seeds (CI's among them) without a manager.

const doc = loadBundle('manager');
type Json = Record<string, unknown> & { proxy?: Json; rules?: unknown; port?: unknown };
const draw = (seed: number, numRuns: number) => fc.sample(sequences(doc, 6), { seed, numRuns });

describe('the differential generator draws port rules', () => {
  const drawn = [18, 1, 2].flatMap((seed) => draw(seed, 200));
  const classes = new Set(drawn.flatMap((s) => s.flatMap((step) => step.classes)));

  it('every trigger and action, and the broken rules, as input classes of a create or an update', () => {
    const want = [
      'trigger-status',
      'trigger-body',
      'trigger-url',
      'trigger-status+url',
      'trigger-max_req_time',
      'trigger-min_req_time',
      'invalid-regex',
      ...['ban_ip', 'ban_ip_domain', 'ban_ip_global', 'retry', 'retry_same', 'retry_port', 'refresh_ip', 'null_response'].map(
        (a) => `action-${a}`,
      ),
      'action-timeout_response',
      'action-unknown',
      'action-not-an-object',
      'rule-not-an-object',
      'inactive',
    ];
    const ruled = [...classes].filter((c) => c.startsWith('body.proxy:rules:')).map((c) => c.slice('body.proxy:rules:'.length));
    expect(want.filter((c) => !ruled.includes(c))).toEqual([]);
  });

  it('a ruled port gets traffic, and a retry_port of it names a port created before it or itself', () => {
    const scenarios = drawn.filter((s) => s.some((step) => step.classes.includes('scenario:ruled-traffic')));
    expect(scenarios.length).toBeGreaterThan(drawn.length / 4);
    for (const s of scenarios) {
      const i = s.findIndex((step) => step.classes.includes('scenario:ruled-traffic'));
      const create = s[i];
      if (create?.kind !== 'call') throw new Error('the scenario starts with a call');
      const proxy = (create.body?.value as Json | undefined)?.proxy as Json;
      const next = s[i + 1];
      expect(next?.kind === 'traffic' && next.port).toBe(proxy.port);
      const created = s
        .slice(0, i + 1)
        .map((step) => (step.kind === 'call' ? ((step.body?.value as Json)?.proxy as Json)?.port : undefined));
      for (const r of proxy.rules as Json[]) {
        const to = (r?.action as Json | undefined)?.retry_port;
        if (to !== undefined) expect(created.map(String)).toContain(String(to));
      }
    }
  });

  it('the first 24 draws of CI’s seed (18) play rules with traffic through their port', () => {
    const ci = draw(18, 24);
    const played = ci.filter((s) => {
      const i = s.findIndex((step) => step.classes.some((c) => c.startsWith('body.proxy:rules:trigger-')));
      return i >= 0 && s.slice(i + 1).some((step) => step.kind === 'traffic');
    });
    expect(played.length).toBeGreaterThanOrEqual(6);
  });
});
