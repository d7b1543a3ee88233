#!/usr/bin/env node
// Lints the specs, one pass per call (digitalocean/openapi lints twice):
//   --sources  the hand-written sources (specs/), before they are bundled
//   --bundles  the bundles that consumers get (packages/spec/dist), after `bundle.mjs`
// Spectral (spectral:oas + OWASP + our rules) and Redocly (recommended + ours) both run on every API,
// all at once (each is its own process), and any warning fails as well as any error. Linting writes
// nothing: bundling is bundle.mjs's step.
import { apis, bundleFile, isMain, quiet, tool } from './lib.mjs';

const spectralClean = (out) => /No results with a severity of 'hint'/.test(out);
const redoclyClean = (out) => /Your API description is valid/.test(out) && !/warning/i.test(out);

/** The checks of one pass: for each API, Spectral and Redocly on its source or its bundle. */
export function checks(pass) {
  return apis().flatMap((a) => {
    const target = pass === 'sources' ? a.root : bundleFile(a.name, { ext: 'yaml' });
    const label = pass === 'sources' ? 'sources' : 'bundle ';
    return [
      {
        label: `spectral ${label} ${a.name}`,
        tool: 'spectral',
        args: ['lint', target, '--fail-severity', 'hint', '-D'],
        clean: spectralClean,
      },
      { label: `redocly  ${label} ${a.name}`, tool: 'redocly', args: ['lint', pass === 'sources' ? a.id : target], clean: redoclyClean },
    ];
  });
}

/** Runs every check of a pass at once; prints each result in a stable order; resolves whether all are clean. */
export async function lint(pass) {
  const results = await Promise.all(checks(pass).map(async (c) => ({ c, res: await tool(c.tool, c.args) })));
  let failed = false;
  for (const { c, res } of results) {
    const out = quiet(res.out);
    if (res.ok && c.clean(out)) console.log(`ok   ${c.label}`);
    else {
      failed = true;
      console.log(`FAIL ${c.label}\n${out}\n`);
    }
  }
  return !failed;
}

if (isMain(import.meta.url)) {
  const pass = process.argv.includes('--bundles') ? 'bundles' : process.argv.includes('--sources') ? 'sources' : undefined;
  if (!pass) {
    console.error('usage: lint.mjs --sources | --bundles');
    process.exit(2);
  }
  if (await lint(pass)) console.log(`lint ${pass}: 0 errors, 0 warnings`);
  else {
    console.log(`lint ${pass} failed`);
    process.exit(1);
  }
}
