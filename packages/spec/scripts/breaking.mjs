#!/usr/bin/env node
// `pnpm breaking`: compares each current bundle (packages/spec/dist) with the last released one
// (packages/spec/released, kept by `pnpm release:version`) using Optic's breaking-change rules, which
// read OpenAPI 3.1 and run offline. A breaking change passes only when a changeset announces
// `"@zone-api/spec": major`. Exit 0: no breaking change, or announced; 1: unannounced; 2: tool failure.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import readChangesets from '@changesets/read';
import { apis, distDir, isMain, root } from './lib.mjs';

export const SPEC_PACKAGE = '@zone-api/spec';
export const releasedDir = join(root, 'packages/spec/released');

/**
 * Runs Optic on one pair; resolves { breaking, report }; rejects when Optic itself failed. With
 * `cacheDir`, a verdict is kept there under the hash of both bundles and Optic's version, and the same
 * pair is not run again (the tests diff the same changed copies of the released bundle on every run).
 */
export async function diff(before, after, cacheDir) {
  if (!cacheDir) return runOptic(before, after);
  const optic = JSON.parse(readFileSync(join(root, 'node_modules/@useoptic/optic/package.json'), 'utf8')).version;
  const key = createHash('sha256')
    .update(`optic ${optic} diff --check\0`)
    .update(readFileSync(before))
    .update('\0')
    .update(readFileSync(after))
    .digest('hex');
  const file = join(cacheDir, `${key}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const verdict = await runOptic(before, after);
  mkdirSync(cacheDir, { recursive: true });
  // Written whole, then renamed: a run beside this one reads a whole verdict or none.
  writeFileSync(`${file}.${process.pid}`, JSON.stringify(verdict));
  renameSync(`${file}.${process.pid}`, file);
  return verdict;
}

function runOptic(before, after) {
  return new Promise((resolve, reject) => {
    // Telemetry off: Optic otherwise reports usage to Segment and errors to Sentry. No colours, so the
    // report can be matched.
    // Without CI in its environment: under CI=true Optic also writes ci-run-details.json into the
    // checkout, a file no one reads that leaves the tree dirty.
    const { CI: _ci, ...env } = process.env;
    const child = spawn(join(root, 'node_modules/.bin/optic'), ['diff', before, after, '--check'], {
      cwd: root,
      env: { ...env, OPTIC_TELEMETRY_LEVEL: 'off', NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve({ breaking: false, report: out });
      else if (/This is a breaking change/.test(out)) resolve({ breaking: true, report: out });
      else reject(new Error(`optic diff ${before} ${after} failed (${code}):\n${out}`));
    });
  });
}

/** Per flagged operation, its distinct findings (at most five), without Optic's per-property tree. */
export function summarize(report) {
  const ops = [];
  for (const line of report.split('\n')) {
    const op = line.match(/^x ([A-Z]+ \/[^\s:]*):?\s*(.*)$/);
    if (op) ops.push({ title: `${op[1]}${op[2] ? ` (${op[2]})` : ''}`, findings: new Set() });
    const finding = line.match(/^\s+x \[[^\]]+\] (.*?)( This is a breaking change\.)?$/);
    if (finding && ops.length) ops[ops.length - 1].findings.add(finding[1]);
  }
  return ops
    .map(({ title, findings }) => {
      const list = [...findings];
      const more = list.length > 5 ? `\n    … and ${list.length - 5} more` : '';
      return `  ${title}\n${list
        .slice(0, 5)
        .map((f) => `    - ${f}`)
        .join('\n')}${more}`;
    })
    .join('\n');
}

/** The changesets in `<dir>/.changeset` that bump @zone-api/spec by a major version. */
export async function majorChangesets(dir = root) {
  if (!existsSync(join(dir, '.changeset'))) return [];
  const changesets = await readChangesets(dir);
  return changesets.filter((c) => c.releases.some((r) => r.name === SPEC_PACKAGE && r.type === 'major')).map((c) => c.id);
}

/**
 * Optic's verdict on each named bundle, current against baseline. A bundle byte-identical to its
 * baseline has no change to judge, and Optic (seconds of CPU per run) is not started for it.
 */
export async function diffAll({ baseline = releasedDir, current = distDir, names = apis().map((a) => a.name), cacheDir } = {}) {
  return Promise.all(
    names.map(async (name) => {
      const before = join(baseline, `${name}.openapi.json`);
      const after = join(current, `${name}.openapi.json`);
      if (!existsSync(before))
        throw new Error(`${before} is missing: the last released bundle is the baseline (pnpm release:version keeps it)`);
      if (!existsSync(after)) throw new Error(`${after} is missing: run pnpm bundle (or pnpm build) first`);
      if (readFileSync(before).equals(readFileSync(after))) return { name, breaking: false, report: 'identical to the baseline' };
      return { name, ...(await diff(before, after, cacheDir)) };
    }),
  );
}

/** Whether the results may land: no breaking change, or one announced by a major changeset in `<changesets>/.changeset`. */
export async function judge(results, changesets = root) {
  const breaking = results.filter((r) => r.breaking);
  const announcedBy = breaking.length ? await majorChangesets(changesets) : [];
  return { results, breaking, announcedBy, ok: breaking.length === 0 || announcedBy.length > 0 };
}

/** @param {{ baseline?: string, current?: string, changesets?: string, names?: string[], cacheDir?: string }} [options] */
export async function checkBreaking({ baseline = releasedDir, current = distDir, changesets = root, names, cacheDir } = {}) {
  return judge(await diffAll({ baseline, current, names, cacheDir }), changesets);
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { baseline: { type: 'string' }, current: { type: 'string' }, changesets: { type: 'string' } } });
  try {
    const { results, breaking, announcedBy, ok } = await checkBreaking({
      baseline: values.baseline ?? releasedDir,
      current: values.current ?? distDir,
      changesets: values.changesets ?? root,
    });
    for (const r of results) console.log(`${r.breaking ? 'BREAKING' : 'ok      '} ${r.name} against the last release`);
    for (const r of breaking) console.log(`\n${r.name}:\n${summarize(r.report)}`);
    if (!breaking.length) console.log('no breaking change');
    else if (ok) console.log(`\nbreaking, announced as major by changeset ${announcedBy.join(', ')}`);
    else
      console.log(
        `\nbreaking change without a major changeset: run \`pnpm changeset\`, choose ${SPEC_PACKAGE} → major and list the affected operations (or make the change compatible)`,
      );
    process.exit(ok ? 0 : 1);
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
}
