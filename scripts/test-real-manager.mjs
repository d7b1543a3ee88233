#!/usr/bin/env node
// pnpm test:real-manager: the manager contract held to the real local proxy manager. Installs the
// pinned program into a cache folder (outside the workspace; needs the npm registry), then runs the
// `real-manager` test project inside a private network and PID namespace that has only loopback
// (`unshare --net --pid --fork --mount-proc`, root needed), so the program's attempts to reach its
// cloud cannot leave the machine. Without root or unshare it fails and says why; it never skips.
// Extra arguments go to vitest (CI passes a JSON reporter).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMain, root } from '../packages/spec/scripts/lib.mjs';

function fail(message) {
  console.error(`test:real-manager: ${message}`);
  process.exit(1);
}

if (isMain(import.meta.url)) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    fail('needs root: the real manager runs in a network namespace of its own (unshare --net), which only root may create');
  }
  for (const tool of ['unshare', 'ip']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) fail(`needs \`${tool}\` (util-linux, iproute2) on the PATH`);
  }
  const { ensureRealManagerInstalled } = await import(pathToFileURL(join(root, 'packages/testkit/src/real-manager/install.mjs')).href);
  try {
    ensureRealManagerInstalled((line) => console.log(`test:real-manager: ${line}`));
  } catch (err) {
    fail(String(err?.message ?? err));
  }
  const vitest = join(root, 'node_modules/.bin/vitest');
  const res = spawnSync(
    'unshare',
    [
      '--net',
      '--pid',
      '--fork',
      '--mount-proc',
      'sh',
      '-c',
      'ip link set lo up && exec "$@"',
      'sh',
      vitest,
      'run',
      '--project',
      'real-manager',
      ...process.argv.slice(2),
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, ZONE_API_REAL_MANAGER: '1' } },
  );
  if (res.error) fail(`could not run unshare: ${res.error.message}`);
  process.exit(res.status ?? 1);
}
