import { zoneCredential } from '@zone-api/spec/model';
import { describe, expect, it } from 'vitest';
import { C, docs, LIMITED_TOKEN, RES, RES_PW, raw, STATIC, STATIC_PW, TOKEN, useSandbox } from '../helpers.js';

// What the provider's own clients send and read (specs/account: x-observed-source names each client's
// file and line), accepted and answered by default; `strict` refuses the forms only those clients show.
const t = useSandbox();
const strict = useSandbox({ strict: true });

const create = (body: unknown, sandbox = t) =>
  raw(sandbox.sandbox.accountUrl, 'POST', '/zone', { body, headers: { authorization: `Bearer ${TOKEN}` } });
const listing = async (sandbox = t) =>
  (await raw(sandbox.sandbox.accountUrl, 'GET', '/zone/get_active_zones', { headers: { authorization: `Bearer ${TOKEN}` } })).json() as {
    name: string;
    type: string;
    status: string;
  }[];

describe('Zone products the clients create: accepted, stored, listed with the type used at creation', () => {
  it('unblocker (MCP, with ub_premium), SERP (SDKs), browser_api (MCP, CLI)', async () => {
    const bodies = [
      { zone: { name: 'mcp_unlocker', type: 'unblocker' }, plan: { type: 'unblocker', ub_premium: true } },
      { zone: { name: 'py_serp', type: 'serp' }, plan: { type: 'unblocker', serp: true } },
      { zone: { name: 'mcp_browser', type: 'browser_api' }, plan: { type: 'browser_api' } },
    ];
    for (const body of bodies) {
      const r = await create(body);
      expect(r.status, r.text).toBe(201);
      expect(r.json().plan.type).toBe(body.plan.type);
    }
    const zones = await listing();
    const byName = Object.fromEntries(zones.map((z) => [z.name, z]));
    expect(byName.mcp_unlocker).toEqual({ name: 'mcp_unlocker', type: 'unblocker', status: 'active' });
    expect(byName.py_serp).toEqual({ name: 'py_serp', type: 'serp', status: 'active' });
    expect(byName.mcp_browser).toEqual({ name: 'mcp_browser', type: 'browser_api', status: 'active' });
    // The seed's documented Zones keep their types.
    expect(byName[STATIC]?.type).toBe('dc');
    const stored = t.sandbox.state().account.zones.find((z) => z.name === 'mcp_unlocker');
    expect(stored?.plans[0]).toMatchObject({ type: 'unblocker', ub_premium: true });
  });

  it('strict refuses plan.type unblocker, plan.serp and zone.type, naming each; nothing is created', async () => {
    const cases: [unknown, string][] = [
      [{ zone: { name: 's1' }, plan: { type: 'unblocker' } }, 'body.plan.type'],
      [{ zone: { name: 's2' }, plan: { type: 'browser_api' } }, 'body.plan.type'],
      [{ zone: { name: 's3' }, plan: { type: 'static', serp: true } }, 'body.plan.serp'],
      [{ zone: { name: 's4', type: 'static' }, plan: { type: 'static' } }, 'body.zone.type'],
    ];
    for (const [body, field] of cases) {
      const r = await create(body, strict);
      expect(r.status, r.text).toBe(400);
      expect(r.json().details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await listing(strict)).map((z) => z.name)).not.toContain('s1');
    // The documented form still passes strict.
    expect((await create({ zone: { name: 's5' }, plan: { type: 'static' } }, strict)).status).toBe(201);
  });
});

describe('errors as the clients read them', () => {
  const bearer = { authorization: `Bearer ${TOKEN}` };
  it('zone/passwords of a missing Zone: 422 "zone does not exist" (MCP server)', async () => {
    const r = await raw(t.sandbox.accountUrl, 'GET', '/zone/passwords?zone=no_such_zone', { headers: bearer });
    expect(r.status).toBe(422);
    expect(r.json().error).toMatch(/zone does not exist/);
    expect((await raw(t.sandbox.accountUrl, 'GET', `/zone/passwords?zone=${STATIC}`, { headers: bearer })).json()).toEqual({
      passwords: [STATIC_PW],
    });
  });

  it('DELETE /zone of an unknown Zone: 400 whose text says "not found" (Python SDK)', async () => {
    const r = await raw(t.sandbox.accountUrl, 'DELETE', '/zone', { body: { zone: 'no_such_zone' }, headers: bearer });
    expect(r.status).toBe(400);
    expect(r.text.toLowerCase()).toContain('not found');
  });

  it('a duplicate Zone name: 409 "Duplicate zone name" (Python SDK)', async () => {
    const r = await create({ zone: { name: RES }, plan: { type: 'static' } });
    expect(r.status).toBe(409);
    expect(r.json().error).toMatch(/^Duplicate zone name/);
    expect(r.text).toContain('already exists');
  });

  it('a token without the balance permission: 403 "Your API key lacks the required permissions"; the admin token reads it', async () => {
    const limited = await raw(t.sandbox.accountUrl, 'GET', `/customer/balance?customer=${C}`, {
      headers: { authorization: `Bearer ${LIMITED_TOKEN}` },
    });
    expect(limited.status).toBe(403);
    expect(limited.json().error).toMatch(/^Your API key lacks the required permissions/);
    const ok = await t.account.getBalance({ params: { query: { customer: C } } });
    expect(ok.data).toEqual({ balance: 250, pending_costs: 12.75, pending_balance: 12.75 });
  });
});

describe('the Zone credential header with a brand word', () => {
  const read = (headers: Record<string, string>) => raw(t.sandbox.accountUrl, 'GET', '/api/zone/passwords', { headers });

  it('X-Lum-Auth: lum-…, X-Hola-Auth: hola-… and the documented X-Service-Auth: service-… are the same credential', async () => {
    for (const [name, brand] of [
      ['X-Lum-Auth', 'lum'],
      ['X-Hola-Auth', 'hola'],
      ['X-Brd-Auth', 'brd'],
      ['X-Service-Auth', 'service'],
    ]) {
      const r = await read({ [name as string]: `${brand}-customer-${C}-zone-${RES}-key-${RES_PW}` });
      expect(r.status, `${name} ${r.text}`).toBe(200);
      expect(r.json().passwords).toContain(RES_PW);
    }
  });

  it('refuses a value whose brand word is not the header’s, a wrong password, and two credential headers at once', async () => {
    const mismatch = await read({ 'X-Lum-Auth': `service-customer-${C}-zone-${RES}-key-${RES_PW}` });
    expect(mismatch.status).toBe(401);
    expect(mismatch.json().details).toEqual([{ field: 'header.X-Lum-Auth', reason: expect.stringContaining('lum-') }]);
    const wrong = await read({ 'X-Lum-Auth': `lum-customer-${C}-zone-${RES}-key-nope` });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain('nope');
    const both = await read({
      'X-Lum-Auth': `lum-customer-${C}-zone-${RES}-key-${RES_PW}`,
      'X-Service-Auth': `service-customer-${C}-zone-${RES}-key-${RES_PW}`,
    });
    expect(both.status).toBe(401);
  });
});

describe('the Zone credential header as the spec describes it', () => {
  // The sandbox has no pattern of its own: it takes what the security scheme's patterns take (the
  // model's zoneCredential), documented and observed, and `strict` the documented ones only.
  const credential = zoneCredential(docs.account);
  const read = (headers: Record<string, string>, sandbox = t) => raw(sandbox.sandbox.accountUrl, 'GET', '/api/zone/passwords', { headers });
  const cases: Array<[string, string]> = [
    ['X-Service-Auth', `service-customer-${C}-zone-${RES}-key-${RES_PW}`],
    ['X-Service-Auth', `service-customer-${C}-zone-${RES}-key-${RES_PW}-country-de`],
    ['X-Service-Auth', `service-customer-${C}-zone-${RES}-key-${RES_PW}-country-DE`],
    ['X-Service-Auth', `service-customer-${C}-zone-${RES}-key-${RES_PW}-country-deu`],
    ['X-Service-Auth', `Service-customer-${C}-zone-${RES}-key-${RES_PW}`],
    ['X-Lum-Auth', `lum-customer-${C}-zone-${RES}-key-${RES_PW}-country-us`],
    ['X-LUM-AUTH', `lum-customer-${C}-zone-${RES}-key-${RES_PW}`],
    ['X-Lum-Auth', `LUM-customer-${C}-zone-${RES}-key-${RES_PW}`],
    ['X-Brd2-Auth', `brd2-customer-${C}-zone-${RES}-key-${RES_PW}`],
    ['X-Service-Auth', `service-customer-${C}-zone-${RES}-key-${RES_PW}-session-1`],
  ];

  it("accepts a value exactly when the spec's observed patterns take it", async () => {
    const verdicts = [];
    for (const [name, value] of cases) {
      const spec = credential.names.test(name) && credential.values.test(value);
      const r = await read({ [name]: value });
      verdicts.push(spec);
      expect(r.status, `${name}: ${value} ${r.text}`).toBe(spec ? 200 : 401);
    }
    // Both kinds are among the cases: a parser that takes all or none fails.
    expect(verdicts.filter(Boolean)).toHaveLength(4);
  });

  it('strict: the documented name and layout only', async () => {
    const verdicts = [];
    for (const [name, value] of cases) {
      const spec = name.toLowerCase() === credential.name.toLowerCase() && credential.documented.test(value);
      const r = await read({ [name]: value }, strict);
      verdicts.push(spec);
      expect(r.status, `${name}: ${value} ${r.text}`).toBe(spec ? 200 : 401);
    }
    expect(verdicts.filter(Boolean)).toHaveLength(2);
  });
});

describe('the account parity file', () => {
  it('names only operations of the account bundle, each with a reason', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const entries = Object.entries(
      parse(readFileSync(new URL('../../parity-account.yaml', import.meta.url), 'utf8')) as Record<string, string>,
    );
    expect(entries.length).toBeGreaterThan(3);
    const ids = new Set(
      Object.values(docs.account.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) =>
        Object.values(item).map((op) => op?.operationId),
      ),
    );
    for (const [key, reason] of entries) {
      expect(ids.has(key.split('.')[0]), key).toBe(true);
      expect(reason.length, key).toBeGreaterThan(40);
    }
  });
});
