// Prism as the bench runs it beside the sandbox (bench.mjs).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '@zone-api/testkit/ports';

/** The repository's root (the bundles and the tools' binaries are read from it). */
export const repo = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Prism mocking the account bundle: as users run it (`prism mock`, logging each request), or quiet
 * (`-v error`), its fastest single-process form.
 */
export async function startPrism(quiet) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    'mock',
    `${repo}packages/spec/dist/account.openapi.yaml`,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    ...(quiet ? ['-v', 'error'] : []),
  ];
  const child = spawn(`${repo}node_modules/.bin/prism`, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // Keep only the start of its log (for an error message); reading the pipe keeps Prism from blocking.
  const keep = (d) => {
    if (output.length < 10_000) output += d;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`prism exited (${child.exitCode}):\n${output}`);
    try {
      await fetch(`${url}/api/status`);
      return { url, stop: () => child.kill() };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill();
  throw new Error(`prism did not start:\n${output}`);
}
