#!/usr/bin/env node
// Checks that each published package's `exports` map resolves with types, as a consumer's TypeScript
// sees it after `npm pack` (arethetypeswrong). The packages are ESM-only, so CommonJS and node10
// resolution are out of scope (`--profile esm-only`). Needs `pnpm compile` first.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from './lib.mjs';

const published = ['client-core', 'account-client', 'manager-client'];
let failed = 0;
for (const pkg of published) {
  const res = spawnSync(join(root, 'node_modules/.bin/attw'), ['--pack', '.', '--profile', 'esm-only', '--format', 'ascii'], {
    cwd: join(root, 'packages', pkg),
    encoding: 'utf8',
  });
  if (res.status === 0) console.log(`ok   exports of @zone-api/${pkg}`);
  else {
    failed++;
    console.log(`FAIL exports of @zone-api/${pkg}\n${res.stdout}${res.stderr}`);
  }
}
process.exit(failed ? 1 : 0);
