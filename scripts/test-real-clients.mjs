#!/usr/bin/env node
// pnpm test:real-clients: the account API held to the provider's own npm clients (SDK, MCP server, CLI),
// run unmodified. Installs the pinned clients into a cache folder (outside the workspace; needs the npm
// registry), then runs the `real-clients` test project inside a private network and PID namespace that
// has only loopback (`unshare --net --pid --fork --mount-proc`, root needed): the sandbox, the forward
// proxy that carries the clients' fixed host names to it, and the clients all run there, so nothing a
// client sends can leave the machine. Without root or unshare it fails and says why; it never skips.
// Extra arguments go to vitest (CI passes a JSON reporter).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMain, root } from '../packages/spec/scripts/lib.mjs';
import { runLoopbackSuite } from './loopback-suite.mjs';

if (isMain(import.meta.url)) {
  const { ensureRealClientsInstalled } = await import(pathToFileURL(join(root, 'packages/testkit/src/real-clients/install.mjs')).href);
  runLoopbackSuite({
    label: 'test:real-clients',
    who: 'the clients run in a network namespace of their own',
    install: ensureRealClientsInstalled,
    project: 'real-clients',
    env: { ZONE_API_REAL_CLIENTS: '1' },
  });
}
