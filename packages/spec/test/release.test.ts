import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type OpenApiDoc, repoRoot, testCacheDir } from '@zone-api/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { setInfoVersion } from '../../../scripts/release-version.mjs';
import { checkBreaking, diffAll, judge, majorChangesets, summarize } from '../scripts/breaking.mjs';

// The breaking-change check (Optic's rules, last released bundle vs current) on deliberately changed
// copies of the released account bundle, with and without a changeset that announces a major release;
// then the release step itself on a copy of the repository.

const released = join(repoRoot, 'packages/spec/released');
const temps: string[] = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Runs a program; resolves its exit status and output (an answer, not a throw, on a non-zero exit). */
const run = (file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { ...opts, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });

// Optic's verdicts on these changed copies of the released bundle, kept by the hash of both bundles (and
// Optic's version) between runs: the same pair is diffed once per released bundle, not on every run. The
// CLI case below runs Optic itself, uncached, as CI does.
const cacheDir = testCacheDir('optic');

/** A scenario: the released account bundle changed by `change`, and the given changesets. */
function scenario(change: (doc: OpenApiDoc) => void, changesets: Record<string, string> = {}) {
  const dir = temp('zone-api-breaking-');
  const doc = JSON.parse(readFileSync(join(released, 'account.openapi.json'), 'utf8'));
  change(doc);
  mkdirSync(join(dir, 'current'));
  writeFileSync(join(dir, 'current/account.openapi.json'), JSON.stringify(doc, null, 2));
  mkdirSync(join(dir, '.changeset'));
  for (const [name, text] of Object.entries(changesets)) writeFileSync(join(dir, '.changeset', `${name}.md`), text);
  return { current: join(dir, 'current'), changesets: dir, baseline: released, names: ['account'], cacheDir };
}

const changeset = (releases: Record<string, string>, summary: string) =>
  `---\n${Object.entries(releases)
    .map(([pkg, bump]) => `"${pkg}": ${bump}`)
    .join('\n')}\n---\n\n${summary}\n`;

const removeCities = (doc: OpenApiDoc) => {
  delete doc.paths['/api/cities'];
};
const requireZoneOnUptimeSwitch = (doc: OpenApiDoc) => {
  doc.components.schemas.SwitchZoneUptimeRequest.required.push('zone');
};

// Each Optic run takes seconds of CPU (its start alone about three; under a full parallel test run
// several times that), so each change here costs one run: the removed operation is diffed once and
// judged with and without the changeset that announces it, and what needs no Optic (which changesets
// count, an unchanged bundle) is tested without it. The runs stay one after another: run together they
// only share the same cores, each nearer its timeout. An Optic run took 60 s of wall time at a load
// average of 35 on 2 cores (6 s of CPU): the timeouts bound a run on such a machine.
describe('breaking-change check', { timeout: 180_000 }, () => {
  let removed: ReturnType<typeof diffAll> | undefined;
  const removedCities = () => (removed ??= diffAll(scenario(removeCities)));

  it('catches a removed operation and names it', async () => {
    const res = await judge(await removedCities(), scenario(() => {}).changesets);
    expect(res.ok).toBe(false);
    expect(res.announcedBy).toEqual([]);
    expect(res.breaking.map((r: { name: string }) => r.name)).toEqual(['account']);
    const summary = summarize(res.breaking[0].report);
    expect(summary).toContain('GET /api/cities (removed)');
    expect(summary).toContain('cannot remove an operation');
  });

  it('catches a request field that became required', async () => {
    const res = await checkBreaking(scenario(requireZoneOnUptimeSwitch));
    expect(res.ok).toBe(false);
    expect(summarize(res.breaking[0].report)).toMatch(/POST \/api\/zone\/switch_100uptime\n\s+- cannot make a request property required/);
  });

  it('lets a new optional response field and a new optional request field through', async () => {
    const res = await checkBreaking(
      scenario((doc) => {
        doc.components.schemas.Balance.properties.currency = { type: 'string', maxLength: 3, description: 'ISO 4217 code.' };
        doc.components.schemas.SwitchZoneUptimeRequest.properties.note = { type: 'string', maxLength: 100 };
      }),
    );
    expect(res.results.map((r: { name: string }) => r.name)).toEqual(['account']);
    expect(res.breaking).toEqual([]);
    expect(res.ok).toBe(true);
  });

  it('passes a breaking change that a changeset announces as a major release of @zone-api/spec', async () => {
    const announced = scenario(() => {}, {
      'brave-cats-run': changeset({ '@zone-api/spec': 'major' }, 'Remove `GET /api/cities` (`listCities`).'),
    });
    const res = await judge(await removedCities(), announced.changesets);
    expect(res.breaking).toHaveLength(1);
    expect(res.announcedBy).toEqual(['brave-cats-run']);
    expect(res.ok).toBe(true);
  });

  it('does not start Optic for a bundle identical to its baseline: nothing changed, nothing breaks', async () => {
    const res = await checkBreaking({
      baseline: released,
      current: released,
      changesets: scenario(() => {}).changesets,
      names: ['account', 'manager'],
    });
    expect(res.results).toEqual([
      { name: 'account', breaking: false, report: 'identical to the baseline' },
      { name: 'manager', breaking: false, report: 'identical to the baseline' },
    ]);
    expect(res.ok).toBe(true);
  });

  it('counts only a major changeset of @zone-api/spec, not a minor one or a major one of another package', async () => {
    const only = (changesets: Record<string, string>) => majorChangesets(scenario(() => {}, changesets).changesets);
    const minor = { 'calm-dogs-sing': changeset({ '@zone-api/spec': 'minor' }, 'Remove cities.') };
    const other = { 'tidy-owls-nap': changeset({ '@zone-api/account-client': 'major' }, 'Drop listCities.') };
    const major = { 'brave-cats-run': changeset({ '@zone-api/spec': 'major', '@zone-api/account-client': 'minor' }, 'Remove cities.') };
    expect(await only(minor)).toEqual([]);
    expect(await only(other)).toEqual([]);
    expect(await only({ ...minor, ...other })).toEqual([]);
    expect(await only({ ...minor, ...other, ...major })).toEqual(['brave-cats-run']);
  });

  it('the CLI that CI runs, under CI=true as CI runs it, exits 1 on an unannounced breaking change and leaves no file in the checkout (Optic writes ci-run-details.json)', async () => {
    const s = scenario(requireZoneOnUptimeSwitch);
    // Only the account bundle is changed; the others are compared with themselves.
    for (const other of ['manager', 'sandbox-control'])
      cpSync(join(released, `${other}.openapi.json`), join(s.current, `${other}.openapi.json`));
    const status = () => execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repoRoot, encoding: 'utf8' });
    const before = status();
    const res = await run(
      process.execPath,
      [join(repoRoot, 'packages/spec/scripts/breaking.mjs'), '--current', s.current, '--changesets', s.changesets],
      {
        cwd: repoRoot,
        env: { ...process.env, CI: 'true' },
      },
    );
    expect(res.stdout).toContain('BREAKING account');
    expect(res.stdout).toContain('ok       manager');
    expect(res.stdout).toContain('breaking change without a major changeset');
    expect(res.status).toBe(1);
    const after = status();
    expect(after.split('\n').filter((l) => l.includes('ci-run-details'))).toEqual([]);
    expect(after).toBe(before);
  });
});

describe('release:version', () => {
  it('sets info.version in a YAML source and nothing else', () => {
    const src =
      'openapi: 3.1.0\ninfo:\n  title: T\n  version: 1.0.0\n  contact:\n    name: x\npaths:\n  /a:\n    get:\n      x-version: 1.0.0\n';
    expect(setInfoVersion(src, '2.0.0')).toBe(src.replace('  version: 1.0.0', '  version: 2.0.0'));
    expect(() => setInfoVersion('openapi: 3.1.0\npaths: {}\n', '2.0.0')).toThrow(/info/);
  });

  it('on a copy of the repository: a major changeset gives 2.0.0 to the package, both specs, the CHANGELOG and the baseline', async () => {
    const copy = temp('zone-api-release-');
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: repoRoot, encoding: 'utf8' })
      .split('\n')
      .filter((f) =>
        /^(package\.json|pnpm-workspace\.yaml|redocly\.yaml|\.changeset\/|specs\/|scripts\/|packages\/[^/]+\/(package\.json|CHANGELOG\.md)$|packages\/spec\/released\/|packages\/spec\/model\/|packages\/spec\/scripts\/)/.test(
          f,
        ),
      );
    for (const f of files) {
      mkdirSync(join(copy, dirname(f)), { recursive: true });
      cpSync(join(repoRoot, f), join(copy, f));
    }
    symlinkSync(join(repoRoot, 'node_modules'), join(copy, 'node_modules'));
    writeFileSync(
      join(copy, '.changeset/brave-cats-run.md'),
      changeset({ '@zone-api/spec': 'major' }, 'Remove `GET /api/cities` (`listCities`): call nothing in its place.'),
    );
    const specFile = join(copy, 'specs/account/openapi.yaml');
    writeFileSync(specFile, readFileSync(specFile, 'utf8').replace(/\n {2}\/api\/cities:\n {4}\$ref: paths\/cities\.yaml/, ''));

    const before = JSON.parse(readFileSync(join(copy, 'packages/spec/package.json'), 'utf8')).version;
    expect(before).toBe('1.0.0');
    const res = await run(process.execPath, [join(copy, 'scripts/release-version.mjs')], { cwd: copy, env: process.env });
    expect(res.status, res.stdout + res.stderr).toBe(0);

    const read = (f: string) => readFileSync(join(copy, f), 'utf8');
    expect(JSON.parse(read('packages/spec/package.json')).version).toBe('2.0.0');
    expect(parse(read('specs/account/openapi.yaml')).info.version).toBe('2.0.0');
    expect(parse(read('specs/manager/openapi.yaml')).info.version).toBe('2.0.0');
    // The 2.0.0 entry's major changes: the scenario's changeset among those pending in the repository.
    const major = read('packages/spec/CHANGELOG.md').match(/## 2\.0\.0\n\n### Major Changes\n\n([\s\S]*?)\n(?:### |## )/)?.[1];
    expect(major).toMatch(/^- Remove `GET \/api\/cities`/m);
    const baseline = JSON.parse(read('packages/spec/released/account.openapi.json'));
    expect(baseline.info.version).toBe('2.0.0');
    expect(baseline.paths['/api/cities']).toBeUndefined();
    expect(readdirSync(join(copy, '.changeset'))).not.toContain('brave-cats-run.md');

    // The released bundles are the new baseline: the same check now passes with no changeset left.
    const after = await checkBreaking({
      baseline: join(copy, 'packages/spec/released'),
      current: join(copy, 'packages/spec/dist'),
      changesets: copy,
    });
    expect(after.breaking).toEqual([]);
    expect(after.ok).toBe(true);
  }, 240_000);
});
