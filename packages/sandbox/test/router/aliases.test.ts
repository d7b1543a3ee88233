import { deref, listOperations } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { bearer, docs, raw, useSandbox } from '../helpers.js';

// The provider's current host serves the account API without the documentation's `/api` prefix, and the real
// manager's user paths carry its brand (`lpm_`): the sandbox serves both as aliases of the seed's paths.
const t = useSandbox();

/** A path of the bundle with its path parameters filled in from their schemas (first enum value). */
function concrete(path: string, op: Record<string, unknown>): string {
  const params = ((op.parameters as unknown[]) ?? []).map((p) => deref(docs.account, p).node);
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = params.find((x) => x.in === 'path' && x.name === name);
    const schema = deref(docs.account, p?.schema ?? {}).node;
    return encodeURIComponent(String(schema.enum?.[0] ?? schema.examples?.[0] ?? 'x'));
  });
}

describe('account: every operation of the bundle also on its path without /api', () => {
  const ops = listOperations(docs.account);

  it('the bundle has account operations, all under /api', () => {
    expect(ops.length).toBeGreaterThan(20);
    for (const o of ops) expect(o.path.startsWith('/api/'), o.path).toBe(true);
  });

  it.each(ops.map((o) => [`${o.method.toUpperCase()} ${o.path.slice(4)}`, o] as const))(
    '%s answers as its /api path does',
    async (_, o) => {
      const path = concrete(o.path, o.op);
      // The same request on both paths, each from the seed: the same credential, and an empty JSON
      // body where the operation takes one (the seed path's validation, or its handler, answers it).
      const opts = { headers: bearer, ...(o.op.requestBody ? { body: {} } : {}) };
      await t.sandbox.reset();
      const seed = await raw(t.sandbox.accountUrl, o.method.toUpperCase(), path, opts);
      await t.sandbox.reset();
      const alias = await raw(t.sandbox.accountUrl, o.method.toUpperCase(), path.slice('/api'.length), opts);
      expect(seed.text).not.toMatch(/No operation at/);
      expect(alias.status, alias.text).toBe(seed.status);
      expect(alias.headers.get('content-type')).toBe(seed.headers.get('content-type'));
      expect(alias.headers.get('deprecation')).toBe(seed.headers.get('deprecation'));
      expect(alias.text).toBe(seed.text);
    },
  );

  it('an alias is validated like its /api path: a bad field is a 400 naming it', async () => {
    const r = await raw(t.sandbox.accountUrl, 'POST', '/zone/ips', { headers: bearer, body: { zone: 'static_zone', count: 'two' } });
    expect(r.status).toBe(400);
    expect(r.json().details.map((d: { field: string }) => d.field)).toContain('body.count');
  });

  it('an alias needs the same credential', async () => {
    const r = await raw(t.sandbox.accountUrl, 'GET', '/zone/get_active_zones');
    expect(r.status).toBe(401);
    expect(r.json()).toEqual({ error: 'Auth method is not supported' });
  });

  it('a change made on an alias shows on the /api path', async () => {
    await t.sandbox.reset();
    const body = { zone: { name: 'alias_zone' }, plan: { type: 'static', ips_type: 'shared', bandwidth: 'payperusage' } };
    const created = await raw(t.sandbox.accountUrl, 'POST', '/zone', { headers: bearer, body });
    expect(created.status, created.text).toBe(201);
    const { data } = await t.account.getZone({ params: { query: { zone: 'alias_zone' } } });
    expect(data?.plans?.[0]?.bandwidth).toBe('payperusage');
    await t.sandbox.reset();
  });

  it('paths that are neither an operation nor an alias stay 404', async () => {
    for (const path of ['/zone/nothing_here', '/api/api/zone', '/apizone']) {
      const r = await raw(t.sandbox.accountUrl, 'GET', path, { headers: bearer });
      expect(r.status, path).toBe(404);
    }
  });
});

describe('manager: the user paths also with the real brand (lpm_)', () => {
  const ops = listOperations(docs.manager);
  const branded = ops.filter((o) => /\/pm_/.test(o.path));

  it('the documentation names its user paths with pm_, and only those get an alias', () => {
    expect(branded.map((o) => `${o.method} ${o.path}`).sort()).toEqual(['get /api/pm_users', 'post /api/pm_user']);
  });

  it('GET /api/lpm_users answers as GET /api/pm_users', async () => {
    const seed = await raw(t.sandbox.managerUrl, 'GET', '/api/pm_users');
    const alias = await raw(t.sandbox.managerUrl, 'GET', '/api/lpm_users');
    expect(seed.status).toBe(200);
    expect(alias.status).toBe(200);
    expect(alias.headers.get('content-type')).toBe(seed.headers.get('content-type'));
    expect(alias.headers.get('deprecation')).toBe('true');
    expect(alias.json()).toEqual(seed.json());
  });

  it('POST /api/lpm_user adds a user that GET /api/pm_users lists, and validates like /api/pm_user', async () => {
    await t.sandbox.reset();
    const added = await raw(t.sandbox.managerUrl, 'POST', '/api/lpm_user', { body: { email: 'new.user@example.com' } });
    expect(added.status, added.text).toBe(200);
    const users = await raw(t.sandbox.managerUrl, 'GET', '/api/pm_users');
    expect(users.json().map((u: { email: string }) => u.email)).toContain('new.user@example.com');
    const bad = await raw(t.sandbox.managerUrl, 'POST', '/api/lpm_user', { body: { email: 'nobody' } });
    const seedBad = await raw(t.sandbox.managerUrl, 'POST', '/api/pm_user', { body: { email: 'nobody' } });
    expect(bad.status).toBe(400);
    expect(bad.text).toBe(seedBad.text);
    expect(bad.text).toContain('body.email');
    await t.sandbox.reset();
  });

  it('the manager has no un-prefixed aliases, and the account API no branded ones', async () => {
    expect((await raw(t.sandbox.managerUrl, 'GET', '/proxies')).status).toBe(404);
    expect((await raw(t.sandbox.managerUrl, 'GET', '/pm_users')).status).toBe(404);
    expect((await raw(t.sandbox.accountUrl, 'GET', '/api/lpm_users', { headers: bearer })).status).toBe(404);
  });
});
