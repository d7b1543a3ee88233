#!/usr/bin/env node
import { bundle } from './bundle.mjs';
// Lints twice (digitalocean/openapi): the hand-written sources, then the bundles that consumers get.
// Spectral (spectral:oas + OWASP + our rules) and Redocly (recommended + ours) both run on both,
// and any warning fails as well as any error. `--sources` skips the bundle pass. The bundle pass
// writes the bundles (scripts/bundle.mjs), so `pnpm build` needs no bundle step of its own.
import { apis, bundlePath, quiet, tool } from './lib.mjs';

const sourcesOnly = process.argv.includes('--sources');
let failed = false;

function check(label, res, clean) {
  const out = quiet(res.out);
  if (res.ok && clean(out)) {
    console.log(`ok   ${label}`);
  } else {
    failed = true;
    console.log(`FAIL ${label}\n${out}\n`);
  }
}

const spectralClean = (out) => /No results with a severity of 'hint'/.test(out);
const redoclyClean = (out) => /Your API description is valid/.test(out) && !/warning/i.test(out);

function lintPass(label, targets) {
  for (const t of targets) {
    check(`spectral ${label} ${t.name}`, tool('spectral', ['lint', t.path, '--fail-severity', 'hint', '-D']), spectralClean);
    check(`redocly  ${label} ${t.name}`, tool('redocly', ['lint', t.redoclyArg]), redoclyClean);
  }
}

lintPass(
  'sources',
  apis().map((a) => ({ name: a.name, path: a.root, redoclyArg: a.id })),
);
if (!sourcesOnly && !failed) {
  bundle();
  lintPass(
    'bundle ',
    apis().map((a) => ({ name: a.name, path: bundlePath(a.name), redoclyArg: bundlePath(a.name) })),
  );
}
if (failed) {
  console.log('lint failed');
  process.exit(1);
}
console.log('lint: 0 errors, 0 warnings');
