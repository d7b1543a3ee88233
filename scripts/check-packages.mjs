#!/usr/bin/env node
// Checks that each published package's `exports` map resolves with types, as a consumer's TypeScript
// sees it after `npm pack` (arethetypeswrong). The packages are ESM-only, so CommonJS and node10
// resolution are out of scope (`--profile esm-only`). Needs `pnpm compile` first. The packages are
// checked at once (each check is its own process); results print in a stable order.
import { join } from 'node:path';
import { isMain, root, tool } from '../packages/spec/scripts/lib.mjs';

/** The packages whose exports are checked (the build's check step reads its inputs from the same list). */
export const published = ['client-core', 'account-client', 'manager-client', 'probe'];
const attw = async (pkg) => ({
  pkg,
  ...(await tool('attw', ['--pack', '.', '--profile', 'esm-only', '--format', 'ascii'], { cwd: join(root, 'packages', pkg) })),
});

/** Checks every published package at once; prints each result in a stable order; resolves whether all passed. */
export async function checkPackages() {
  let failed = 0;
  for (const { pkg, ok, out } of await Promise.all(published.map(attw))) {
    if (ok) console.log(`ok   exports of @zone-api/${pkg}`);
    else {
      failed++;
      console.log(`FAIL exports of @zone-api/${pkg}\n${out}`);
    }
  }
  return failed === 0;
}

if (isMain(import.meta.url)) process.exit((await checkPackages()) ? 0 : 1);
