import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// `info.version` of every spec is the version of @zone-api/spec, the release that contains them.
// `pnpm release:version` moves all of them together (packages/spec/README.md, "Versions").

const pkg = JSON.parse(readFileSync(join(repoRoot, 'packages/spec/package.json'), 'utf8'));
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

describe('info.version moves with the package version', () => {
  it('the package version is semver', () => {
    expect(pkg.version).toMatch(SEMVER);
  });

  it.each(['account', 'manager', 'sandbox-control'])('%s: the source spec says the package version', (api) => {
    const src = parse(readFileSync(join(repoRoot, `specs/${api}/openapi.yaml`), 'utf8'));
    expect(src.info.version).toBe(pkg.version);
  });

  it.each(['account', 'manager', 'sandbox-control'])('%s: every published artifact says the package version', (api) => {
    const dist = (f: string) => readFileSync(join(repoRoot, 'packages/spec/dist', f), 'utf8');
    const versions = [
      JSON.parse(dist(`${api}.openapi.json`)).info.version,
      parse(dist(`${api}.openapi.yaml`)).info.version,
      JSON.parse(dist(`${api}.openapi.deref.json`)).info.version,
      JSON.parse(dist(`${api}.openapi-3.0.json`)).info.version,
      parse(dist(`${api}.openapi-3.0.yaml`)).info.version,
    ];
    expect(versions).toEqual(Array(5).fill(pkg.version));
  });

  it('the CHANGELOG has an entry for the package version', () => {
    const changelog = readFileSync(join(repoRoot, 'packages/spec/CHANGELOG.md'), 'utf8');
    expect(changelog).toContain(`\n## ${pkg.version}\n`);
  });
});
