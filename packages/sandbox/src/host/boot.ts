import { readFileSync, statSync } from 'node:fs';
import { bundlePath, loadBundle } from '@zone-api/spec/model';
import { isSeedBuilder } from '../control/seed-builder.js';
import { defaultSeed } from '../domain/seed.js';
import { validateSeed } from '../domain/seed-check.js';
import type { Store } from '../domain/state.js';
import type { StateData } from '../domain/types.js';
import type { ApiName, OpenApiDoc } from '../router/spec.js';

// What startSandbox() reads before it builds anything: the bundles, the seed (built in, a file or an
// object, checked), and the credentials it reports from the state.

/**
 * A bundle as read from disk, the same object again while the file is unchanged: the validators,
 * compiled per bundle object, then serve every sandbox of the process (a warm start compiles nothing).
 */
const bundles = new Map<string, { mtimeMs: number; size: number; doc: OpenApiDoc }>();
export function bundleOf(api: ApiName, dir: string | undefined): OpenApiDoc {
  const file = bundlePath(api, { dir, ext: 'json' });
  const { mtimeMs, size } = statSync(file);
  const key = `${api}\n${file}`;
  const hit = bundles.get(key);
  if (hit && hit.mtimeMs === mtimeMs && hit.size === size) return hit.doc;
  const doc = loadBundle(api, { dir });
  bundles.set(key, { mtimeMs, size, doc });
  return doc;
}

const builtInChecked = new WeakMap<OpenApiDoc, WeakSet<OpenApiDoc>>();

export function readSeed(seed: string | StateData | { build(): StateData } | undefined, specs: Record<ApiName, OpenApiDoc>): StateData {
  if (isSeedBuilder(seed)) {
    const data = seed.build();
    validateSeed(data, specs, 'seed (from the builder)');
    return data;
  }
  if (seed === undefined) {
    const data = defaultSeed();
    // The built-in seed is the same each time: checked once per pair of bundle objects (a warm start skips it).
    const checked = builtInChecked.get(specs.account);
    if (!checked?.has(specs.manager)) {
      validateSeed(data, specs, 'built-in seed');
      builtInChecked.set(specs.account, (checked ?? new WeakSet()).add(specs.manager));
    }
    return data;
  }
  if (typeof seed !== 'string') {
    validateSeed(seed, specs, 'seed');
    return seed;
  }
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(seed, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot load the seed file ${seed}: ${(err as Error).message}`);
  }
  validateSeed(data, specs, `seed file ${seed}`);
  return data;
}

export function credentialsOf(store: Store): SandboxCredentials {
  const tokens = [...store.tokens.values()].map((t) => ({
    token: t.token,
    admin: t.admin === true,
    perms: t.perms ?? store.account.perms,
  }));
  return {
    customer: store.account.customer,
    token: (tokens.find((t) => t.admin) ?? tokens[0])?.token ?? '',
    tokens,
    basic: [...store.basic.values()].map(({ username, password }) => ({ username, password })),
    zones: Object.fromEntries([...store.zones.values()].map((z) => [z.name, [...z.passwords]])),
  };
}

export interface SandboxCredentials {
  customer: string;
  /** An API token with admin rights (bearer). */
  token: string;
  tokens: { token: string; admin: boolean; perms: string[] }[];
  basic: { username: string; password: string }[];
  /** Zone name -> passwords (for `X-Service-Auth`). */
  zones: Record<string, string[]>;
}
