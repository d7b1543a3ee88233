// The published packages' runtime dependencies are ranges, as a library's should be: an exact pin in
// a package a user installs forces a duplicate copy beside the user's own, and blocks their fixes.
// (The repository's lockfile pins what this repository installs.)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const catalog: Record<string, string> = parse(readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')).catalog;
const published = readdirSync(join(root, 'packages'))
  .map((dir) => JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')))
  .filter((pkg) => !pkg.private);

/** The range a dependency is published with: `catalog:` from the catalog, `workspace:^` as pnpm pack writes it. */
function publishedRange(name: string, spec: string): string {
  if (spec === 'catalog:') return catalog[name] ?? 'missing from the catalog';
  if (spec.startsWith('workspace:')) return spec === 'workspace:*' ? 'the exact version (workspace:*)' : spec.slice('workspace:'.length);
  return spec;
}
const EXACT = /^=?v?\d+\.\d+\.\d+(-[\w.]+)?$/;

describe('published runtime dependencies', () => {
  it('are ranges, not exact versions, in every published package', () => {
    expect(published.length).toBeGreaterThanOrEqual(5);
    const deps = published.flatMap((pkg) =>
      Object.entries<string>(pkg.dependencies ?? {}).map(([name, spec]) => ({ pkg: pkg.name, name, range: publishedRange(name, spec) })),
    );
    expect(deps.length).toBeGreaterThan(10);
    const pinned = deps.filter((d) => EXACT.test(d.range) || d.range.startsWith('the exact') || d.range.startsWith('missing'));
    expect(pinned.map((d) => `${d.pkg}: ${d.name} ${d.range}`)).toEqual([]);
  });
});
