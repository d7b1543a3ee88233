import { createAjv, schemaValidator } from '@zone-api/spec/model';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { OpenApiDoc } from '../router/spec.js';
import { loggedUrl } from './har.js';
import { seedSchema } from './seed-schema.js';
import type { StateData } from './types.js';

// What a seed (or a saved state) must be before a Store takes it: its JSON Schema, the specs' own
// schemas for plans and HAR entries, and every cross-reference, each problem named by its JSON path.

let seedValidator: ValidateFunction | undefined;
/** The first error of a failed validation (Ajv gives at least one whenever it answers false). */
const firstError = (fn: ValidateFunction) => {
  const [e] = fn.errors as [ErrorObject];
  return `${e.instancePath} ${e.message}`;
};
const specChecks = new WeakMap<OpenApiDoc, { validator: ReturnType<typeof schemaValidator>; byName: Map<string, ValidateFunction> }>();

/**
 * Checks a seed (or a saved state) and throws one message listing every problem: schema errors by
 * JSON path, then references that do not resolve (an allocated IP missing from the pool, a port's
 * Zone that does not exist, …). Plans and HAR entries are checked against the specs' own schemas.
 */
export function validateSeed(
  data: unknown,
  specs: { account: OpenApiDoc; manager: OpenApiDoc },
  source = 'seed',
): asserts data is StateData {
  if (!seedValidator) {
    seedValidator = createAjv().compile(seedSchema);
  }
  const problems: string[] = [];
  if (!seedValidator(data)) {
    for (const e of seedValidator.errors as ErrorObject[]) {
      const extra = e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : '';
      problems.push(`${e.instancePath || '/'} ${e.message}${extra}`);
    }
    throw new Error(`Invalid ${source}:\n  ${problems.slice(0, 30).join('\n  ')}`);
  }
  const d = data as StateData;
  // Compiled once per bundle (a sandbox validates every seed of createAccount() against the same ones).
  const specCheck = (doc: OpenApiDoc, name: string) => {
    let checks = specChecks.get(doc);
    if (!checks) {
      checks = { validator: schemaValidator(doc, { allErrors: false }), byName: new Map() };
      specChecks.set(doc, checks);
    }
    let fn = checks.byName.get(name);
    if (!fn) {
      fn = checks.validator.compile(`#/components/schemas/${name}`);
      checks.byName.set(name, fn);
    }
    return fn;
  };
  const plan = specCheck(specs.account, 'StoredPlan');
  const har = specCheck(specs.manager, 'HarEntry');

  const pool = new Set<string>();
  for (const p of d.pools.ips) {
    if (pool.has(p.ip)) problems.push(`/pools/ips: ${p.ip} is listed twice`);
    pool.add(p.ip);
  }
  const gips = new Set<string>();
  for (const g of d.pools.gips) {
    if (gips.has(g.vip)) problems.push(`/pools/gips: ${g.vip} is listed twice`);
    gips.add(g.vip);
  }
  const zoneNames = new Set<string>();
  const usedIps = new Set<string>();
  const usedGips = new Set<string>();
  d.account.zones.forEach((z, i) => {
    if (zoneNames.has(z.name)) problems.push(`/account/zones/${i}: Zone ${z.name} is listed twice`);
    zoneNames.add(z.name);
    z.plans.forEach((p, j) => {
      if (!plan(p)) problems.push(`/account/zones/${i}/plans/${j}: ${firstError(plan)}`);
    });
    for (const ip of z.ips) {
      if (!pool.has(ip)) problems.push(`/account/zones/${i}/ips: ${ip} is not in /pools/ips`);
      if (usedIps.has(ip)) problems.push(`/account/zones/${i}/ips: ${ip} is allocated twice`);
      usedIps.add(ip);
    }
    for (const vip of z.gips) {
      if (!gips.has(vip)) problems.push(`/account/zones/${i}/gips: ${vip} is not in /pools/gips`);
      if (usedGips.has(vip)) problems.push(`/account/zones/${i}/gips: ${vip} is allocated twice`);
      usedGips.add(vip);
    }
  });
  const tokens = new Set<string>();
  d.account.tokens.forEach((t, i) => {
    if (tokens.has(t.token)) problems.push(`/account/tokens/${i}: the token is listed twice`);
    tokens.add(t.token);
  });
  problems.push(...zoneReferences(d, zoneNames));
  const ports = new Set<number>();
  d.manager.ports.forEach((p, i) => {
    if (ports.has(p.port)) problems.push(`/manager/ports/${i}: port ${p.port} is listed twice`);
    ports.add(p.port);
  });
  if (d.manager.settings.customer !== d.account.customer)
    problems.push(`/manager/settings/customer: must be the account's customer ${d.account.customer}`);
  d.manager.har.forEach((e, i) => {
    if (!har(e)) problems.push(`/manager/har/${i}: ${firstError(har)} (HarEntry of the manager spec)`);
    // Stats read the host of each entry's URL: absolute, or a tunnel's authority (`host:port`), as the real manager logs one.
    else if (!loggedUrl(e.request.method, e.request.url))
      problems.push(
        `/manager/har/${i}/request/url: ${JSON.stringify(e.request.url)} is not an absolute URL${e.request.method === 'CONNECT' ? ' nor host:port' : ''}`,
      );
  });
  if (problems.length) throw new Error(`Invalid ${source}:\n  ${problems.slice(0, 30).join('\n  ')}`);
}

/**
 * Every name of a Zone outside `/account/zones` that names none of them, one line per section and
 * Zone (a renamed Zone is named in dozens of usage days: one line says where, how many, and what to
 * do). A state the sandbox wrote itself (`format`: a data file, a dump of `GET /__sandbox/state`) may
 * hold ports and a default Zone naming a deleted Zone, as the real manager keeps them; a seed may not.
 */
function zoneReferences(d: StateData, zoneNames: ReadonlySet<string>): string[] {
  const saved = d.format === 'zone-api-sandbox-state';
  const missing = new Map<string, { section: string; zone: string; paths: string[] }>();
  const check = (section: string, path: string, zone: string | undefined): void => {
    if (zone !== undefined && !zoneNames.has(zone)) {
      const key = `${section}\n${zone}`;
      const m = missing.get(key) ?? { section, zone, paths: [] };
      m.paths.push(path);
      missing.set(key, m);
    }
  };
  for (const [i, u] of d.usage.entries()) check('/usage', `/usage/${i}/zone`, u.zone);
  for (const [i, r] of d.req_logs.entries()) check('/req_logs', `/req_logs/${i}/zone`, r.zone);
  for (const [i, c] of d.charges.entries()) check('/charges', `/charges/${i}/zone`, c.zone);
  for (const [i, p] of d.peers.entries()) check('/peers', `/peers/${i}/zone`, p.zone);
  if (!saved) {
    for (const [i, p] of d.manager.ports.entries()) check('/manager/ports', `/manager/ports/${i}/zone`, p.zone);
    if (zoneNames.size) check('/manager/settings', '/manager/settings/zone', d.manager.settings.zone);
  }
  const known = [...zoneNames].join(', ') || 'none';
  return [...missing.values()].map(({ section, zone, paths }) => {
    const where = paths.length === 1 ? paths[0] : `${paths[0]} and ${paths.length - 1} more of ${section}`;
    return `${where}: Zone ${zone} does not exist in /account/zones (${known}); if you renamed it there, rename it here too`;
  });
}
