#!/usr/bin/env node
// `pnpm build`: the pipeline, in one explicit order, each step doing one thing:
//
//   lint sources → bundle → lint bundles → docs → types → compile → check packages
//
// A step whose inputs (every file it reads, its own code and the lockfile, which pins the tools) are
// byte for byte those of its last successful run, and whose outputs are all there, is skipped: a
// warm build redoes only what changed. `tsc -b` keeps its own incremental state. `--force` (or
// ZONE_API_BUILD_CACHE=0) runs every step. The record of successful runs is in
// node_modules/.cache/zone-api/build.json, gone with node_modules; a failed step records nothing.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundle } from '../packages/spec/scripts/bundle.mjs';
import { buildDocs, docsDir } from '../packages/spec/scripts/docs.mjs';
import { apis, bundleFile, distDir, isMain, quiet, root, tool } from '../packages/spec/scripts/lib.mjs';
import { lint } from '../packages/spec/scripts/lint.mjs';
import { checkPackages, published } from './check-packages.mjs';
import { generatedDirs } from './gen-operations.mjs';

const cacheFile = join(root, 'node_modules/.cache/zone-api/build.json');

/** Files tracked or new under these paths (ignored ones left out), relative to the root. */
const sources = (...paths) =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...paths], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && existsSync(join(root, f)));

/** Files of an ignored output folder (e.g. a package's dist), relative to the root. */
function tree(dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(root.length + 1));
}

const bundles = () => apis().flatMap((a) => ['yaml', 'json'].map((ext) => bundleFile(a.name, { ext }).slice(root.length + 1)));

async function run(label, name, args) {
  const res = await tool(name, args);
  const out = quiet(res.out);
  if (out) console.log(out);
  if (!res.ok) throw new Error(`${label} failed`);
}

/** The steps, in order. `inputs` and `outputs` list files relative to the root; a step without `inputs` always runs. */
const steps = [
  {
    name: 'lint TypeScript',
    // Biome is quick and reads every source file: it always runs.
    run: () => run('biome', 'biome', ['check', '--error-on-warnings', '.']),
  },
  {
    name: 'lint spec sources',
    run: async () => {
      if (!(await lint('sources'))) throw new Error('lint of the spec sources failed');
    },
    inputs: () => [
      ...sources('specs', 'spectral', '.spectral.yaml', 'redocly.yaml', 'packages/spec/scripts/lint.mjs', 'packages/spec/scripts/lib.mjs'),
    ],
  },
  {
    name: 'bundle',
    run: bundle,
    inputs: () => [...sources('specs', 'redocly.yaml', 'packages/spec/scripts', 'packages/spec/model', 'packages/spec/package.json')],
    outputs: () => tree(distDir.slice(root.length + 1)).filter((f) => /\.(json|yaml)$/.test(f) && !f.includes('/docs/')),
  },
  {
    name: 'lint bundles',
    run: async () => {
      if (!(await lint('bundles'))) throw new Error('lint of the bundles failed');
    },
    inputs: () => [
      ...bundles(),
      ...sources('spectral', '.spectral.yaml', 'redocly.yaml', 'packages/spec/scripts/lint.mjs', 'packages/spec/scripts/lib.mjs'),
    ],
  },
  {
    // The reference pages ship in @zone-api/spec (the editor's hover text of each method links its operation there).
    name: 'docs',
    run: buildDocs,
    inputs: () => [
      ...bundles(),
      ...sources(
        'packages/spec/scripts/docs.mjs',
        'packages/spec/scripts/lib.mjs',
        'packages/spec/model',
        'packages/spec/parity',
        'redocly.yaml',
      ),
    ],
    outputs: () => tree(docsDir.slice(root.length + 1)),
  },
  {
    name: 'types',
    run: async () => {
      await run('openapi-typescript', 'openapi-typescript', ['--redocly', 'redocly.types.yaml']);
      execFileSync(process.execPath, [join(root, 'scripts/gen-operations.mjs')], { cwd: root, stdio: 'inherit' });
    },
    inputs: () => [...bundles(), 'redocly.types.yaml', 'scripts/gen-operations.mjs', ...sources('packages/spec/model')],
    outputs: () => generatedDirs().flatMap((d) => tree(d.slice(root.length + 1))),
  },
  {
    name: 'compile',
    // tsc -b skips what is up to date by itself.
    run: () =>
      run('tsc', 'tsc', [
        '-b',
        ...readdirSync(join(root, 'packages'))
          .map((p) => `packages/${p}/tsconfig.json`)
          .filter((f) => existsSync(join(root, f))),
      ]),
  },
  {
    name: 'check packages',
    run: async () => {
      if (!(await checkPackages())) throw new Error('the exports check of the packages failed');
    },
    inputs: () => [
      'scripts/check-packages.mjs',
      ...published.flatMap((p) => [`packages/${p}/package.json`, ...sources(`packages/${p}/README.md`), ...tree(`packages/${p}/dist`)]),
    ],
  },
];

/** One hash of the contents of these files under `base` (and of the names given). */
function hashOf(base, names, files) {
  const h = createHash('sha256');
  for (const n of names) h.update(`${n}\0`);
  for (const f of [...new Set(files)].sort()) {
    h.update(`\0${f}\0`);
    h.update(existsSync(join(base, f)) ? readFileSync(join(base, f)) : 'missing');
  }
  return h.digest('hex');
}

/**
 * Runs steps in order, skipping a step whose inputs (its own code, the lockfile, every file it
 * names) and outputs are those of its last successful run. A step is forgotten before it runs, so a
 * failure leaves no record; `force` forgets every step.
 */
export async function runSteps(list, { base = root, cache: file = cacheFile, force = false, log = console.log } = {}) {
  const cache = !force && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const inputKey = (step) => hashOf(base, [step.name, String(step.run)], ['pnpm-lock.yaml', ...step.inputs()]);
  const outputKey = (step) => (step.outputs ? hashOf(base, [], step.outputs()) : '');
  const record = (name, entry) => {
    if (entry) cache[name] = entry;
    else delete cache[name];
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(cache, null, 2)}\n`);
  };
  const started = Date.now();
  const ran = [];
  for (const step of list) {
    const t0 = Date.now();
    const last = cache[step.name];
    if (step.inputs && last && last.inputs === inputKey(step) && last.outputs === outputKey(step)) {
      log(`== ${step.name}: up to date`);
      continue;
    }
    log(`== ${step.name}`);
    if (step.inputs) record(step.name, undefined);
    await step.run();
    if (step.inputs) record(step.name, { inputs: inputKey(step), outputs: outputKey(step) });
    ran.push(step.name);
    log(`   ${step.name}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  log(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return ran;
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { force: { type: 'boolean', default: false } } });
  try {
    await runSteps(steps, { force: values.force || process.env.ZONE_API_BUILD_CACHE === '0' });
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
