import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// A published package that says it runs on Node >= 20.19 must not pull in a dependency that says it
// needs more (npm warns EBADENGINE; an engine-strict install refuses). Checked on the installed tree.

interface Node {
  name?: string;
  version?: string;
  path?: string;
  dependencies?: Record<string, Node>;
}

const published = readdirSync(join(repoRoot, 'packages'))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(repoRoot, 'packages', dir, 'package.json'), 'utf8')) }))
  .filter(({ pkg }) => !pkg.private);

function walk(node: Node, seen: Set<string>, out: { id: string; path: string }[], trail: string): void {
  for (const [name, dep] of Object.entries(node.dependencies ?? {})) {
    if (!dep.path || seen.has(dep.path)) continue;
    seen.add(dep.path);
    out.push({ id: `${trail} > ${name}@${dep.version}`, path: dep.path });
    walk(dep, seen, out, `${trail} > ${name}`);
  }
}

describe('engines of the published packages and of everything they install', () => {
  it.each(published.map(({ dir, pkg }) => [pkg.name as string, dir, pkg] as const))('%s', (name, _dir, pkg) => {
    const ours = pkg.engines?.node ?? '>=20.19';
    expect(semver.validRange(ours), `${name} declares engines.node`).not.toBeNull();
    const tree = JSON.parse(
      execFileSync('pnpm', ['ls', '--prod', '--json', '--depth', 'Infinity', '--filter', name], { cwd: repoRoot, encoding: 'utf8' }),
    ) as Node[];
    const deps: { id: string; path: string }[] = [];
    walk(tree[0] as Node, new Set(), deps, name);
    const tooNew = deps
      .map(({ id, path }) => ({
        id,
        node: JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')).engines?.node as string | undefined,
      }))
      .filter(({ node }) => node !== undefined && semver.validRange(node) !== null && !semver.subset(ours, node))
      .map(({ id, node }) => `${id} wants node ${node}`);
    expect(tooNew, `dependencies of ${name} that need a newer Node than its ${ours}`).toEqual([]);
  });
});

// Setup's install (`pnpm install --frozen-lockfile`) of the whole workspace, dev tools included, on
// this Node: the README says Node >= 20.19, so no locked package may ask for more. Run on a copy of
// the manifests and the lockfile, offline from the store setup filled, so that it costs seconds and
// leaves this checkout's node_modules alone.
describe("setup's install", () => {
  it('prints no "Unsupported engine" warning on this Node', () => {
    const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines?: { node?: string } };
    expect(semver.satisfies(process.version, root.engines?.node ?? '')).toBe(true);
    const copy = mkdtempSync(join(tmpdir(), 'zone-api-install-'));
    try {
      for (const f of ['package.json', 'pnpm-lock.yaml', 'pnpm-workspace.yaml']) cpSync(join(repoRoot, f), join(copy, f));
      for (const dir of readdirSync(join(repoRoot, 'packages'))) {
        mkdirSync(join(copy, 'packages', dir), { recursive: true });
        cpSync(join(repoRoot, 'packages', dir, 'package.json'), join(copy, 'packages', dir, 'package.json'));
      }
      const res = spawnSync('pnpm', ['install', '--frozen-lockfile', '--offline', '--ignore-scripts'], {
        cwd: copy,
        encoding: 'utf8',
        env: { ...process.env, CI: 'true' },
        maxBuffer: 64 * 1024 * 1024,
      });
      const out = `${res.stdout}${res.stderr}`;
      expect(res.status, out.slice(-3000)).toBe(0);
      // The install did happen (a count of packages added), so that no warning is not no install.
      expect(out).toMatch(/added \d{3,}/);
      expect(out.split('\n').filter((l) => /Unsupported engine/i.test(l))).toEqual([]);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 300_000);
});
