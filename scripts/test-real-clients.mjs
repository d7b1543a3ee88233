#!/usr/bin/env node
// pnpm test:real-clients: the account API held to the provider's own npm clients (SDK, MCP server, CLI),
// run unmodified. Installs the pinned clients into a cache folder (outside the workspace; needs the npm
// registry), then runs the `real-clients` test project inside a private network and PID namespace that
// has only loopback (`unshare --net --pid --fork --mount-proc`, root needed): the sandbox, the forward
// proxy that carries the clients' fixed host names to it, and the clients all run there, so nothing a
// client sends can leave the machine. Without root or unshare it fails and says why; it never skips.
// Extra arguments go to vitest (CI passes a JSON reporter).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMain, root } from '../packages/spec/scripts/lib.mjs';

function fail(message) {
  console.error(`test:real-clients: ${message}`);
  process.exit(1);
}

if (isMain(import.meta.url)) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    fail('needs root: the clients run in a network namespace of their own (unshare --net), which only root may create');
  }
  for (const tool of ['unshare', 'ip']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) fail(`needs \`${tool}\` (util-linux, iproute2) on the PATH`);
  }
  const { ensureRealClientsInstalled } = await import(pathToFileURL(join(root, 'packages/testkit/src/real-clients/install.mjs')).href);
  try {
    ensureRealClientsInstalled((line) => console.log(`test:real-clients: ${line}`));
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
      'real-clients',
      ...process.argv.slice(2),
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, ZONE_API_REAL_CLIENTS: '1' } },
  );
  if (res.error) fail(`could not run unshare: ${res.error.message}`);
  process.exit(res.status ?? 1);
}
