// What the suites against real programs (test:real-manager, test:real-clients) share: root and unshare
// checked, the programs installed into the cache, then one vitest project run inside a private network
// and PID namespace that has only loopback, so nothing a program sends can leave the machine. Without
// root or unshare it fails and says why; it never skips. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from '../packages/spec/scripts/lib.mjs';

/**
 * @param {{ label: string, who: string, install: (log: (line: string) => void) => void, project: string, env: Record<string, string> }} suite
 */
export function runLoopbackSuite({ label, who, install, project, env }) {
  const fail = (message) => {
    console.error(`${label}: ${message}`);
    process.exit(1);
  };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    fail(`needs root: ${who} (unshare --net), which only root may create`);
  }
  for (const tool of ['unshare', 'ip']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) fail(`needs \`${tool}\` (util-linux, iproute2) on the PATH`);
  }
  try {
    install((line) => console.log(`${label}: ${line}`));
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
      project,
      ...process.argv.slice(2),
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } },
  );
  if (res.error) fail(`could not run unshare: ${res.error.message}`);
  process.exit(res.status ?? 1);
}
