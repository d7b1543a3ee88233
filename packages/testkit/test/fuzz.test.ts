import { describe, expect, it } from 'vitest';
import { fuzzRequests, rng } from '../src/fuzz.js';
import { listOperations, loadBundle } from '../src/index.js';

describe('spec-derived fuzz requests', () => {
  const doc = loadBundle('account');

  it('are deterministic for a seed and differ across seeds', () => {
    expect(fuzzRequests(doc, 50, 7)).toEqual(fuzzRequests(doc, 50, 7));
    expect(fuzzRequests(doc, 50, 7)).not.toEqual(fuzzRequests(doc, 50, 8));
    expect(rng(1).next()).toBe(rng(1).next());
  });

  it('cover every operation and every kind of mutation', () => {
    const reqs = fuzzRequests(doc, 600, 1, { auth: { Authorization: 'Bearer t' } });
    const ops = new Set(reqs.map((r) => r.label.split(':')[0]));
    expect([...ops].sort()).toEqual(
      listOperations(doc)
        .map((o) => o.operationId)
        .sort(),
    );
    const kinds = new Set(reqs.map((r) => r.label.split(': ')[1]?.split(' ')[0]));
    for (const k of [
      'valid',
      'bad-json',
      'missing-body',
      'wrong-type',
      'missing-required',
      'unknown-field',
      'bad-auth',
      'no-auth',
      'hostile-string',
      'prototype-key',
      'huge-list',
    ]) {
      expect(kinds).toContain(k);
    }
  });

  it('makes valid requests that carry the example bodies and fill path parameters', () => {
    const reqs = fuzzRequests(doc, 2000, 3, { auth: { Authorization: 'Bearer t' } });
    const create = reqs.find((r) => r.label === 'createZone: valid');
    expect(create && JSON.parse(create.body ?? '')).toMatchObject({ zone: { name: expect.any(String) }, plan: expect.any(Object) });
    const net = reqs.find((r) => r.label.startsWith('getNetworkStatus: valid'));
    expect(net?.url).toMatch(/^\/api\/network_status\/(all|res|dc|mobile)$/);
    const badJson = reqs.filter((r) => r.label.endsWith('bad-json'));
    expect(badJson.length).toBeGreaterThan(0);
    expect(badJson.every((r) => r.body !== undefined && !isJson(r.body))).toBe(true);
    expect(reqs.filter((r) => r.method === 'GET' && r.body !== undefined)).toEqual([]);
  });
});

function isJson(s: string) {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}
