#!/usr/bin/env node
// pnpm mock [account|manager] [--port N]: Prism serving the bundles as mocks, for a person to try.
// Without an API name both are served, each on its own port (free ports unless --port is given).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../../testkit/src/ports.js';
import { bundleFile, root } from './lib.mjs';

const USAGE = `usage: pnpm mock [account|manager] [--port N]

Prism serving the bundles (packages/spec/dist) as mocks, each API on its own port (free ports, or
N, N+1 with --port). Pick an example with -H 'Prefer: example=NAME', a status with -H 'Prefer: code=404'.
Needs \`pnpm build\` first.`;

let args;
try {
  args = parseArgs({ allowPositionals: true, options: { port: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
} catch (err) {
  // parseArgs' own message names the option; its stack says nothing to a user.
  console.error(`${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = args;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.port !== undefined && !/^\d+$/.test(values.port)) {
  console.error(`--port takes a number, not "${values.port}"\n\n${USAGE}`);
  process.exit(2);
}
const names = positionals.length ? positionals : ['account', 'manager'];
for (const n of names) {
  if (!['account', 'manager'].includes(n)) {
    console.error(`unknown API "${n}": use account or manager`);
    process.exit(2);
  }
  if (!existsSync(bundleFile(n, { ext: 'yaml' }))) {
    console.error(`${n} bundle missing: run pnpm build first`);
    process.exit(1);
  }
}

const children = [];
let base = values.port ? Number(values.port) : undefined;
for (const name of names) {
  const port = base ? base++ : await freePort();
  const child = spawn(
    join(root, 'node_modules/.bin/prism'),
    ['mock', bundleFile(name, { ext: 'yaml' }), '-p', String(port), '-h', '127.0.0.1'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  child.stdout.on('data', (d) => {
    if (/Prism is listening/.test(d)) {
      const url = `http://127.0.0.1:${port}`;
      const hint =
        name === 'account'
          ? `curl -H 'Authorization: Bearer any' '${url}/api/zone?customer=hl_1a2b3c4d&zone=static_zone'`
          : `curl '${url}/api/version'`;
      console.log(`${name} mock: ${url}\n  try: ${hint}\n  pick an example: -H 'Prefer: example=NAME' or a status: -H 'Prefer: code=404'`);
    }
  });
  child.on('exit', (code) => {
    console.error(`${name} mock exited (${code})`);
    process.exitCode = code ?? 1;
  });
}
const stop = () => {
  for (const c of children) c.kill('SIGTERM');
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
