#!/usr/bin/env node
// pnpm test:real-manager: the manager contract held to the real local proxy manager. Installs the
// pinned program into a cache folder (outside the workspace; needs the npm registry), then runs the
// `real-manager` test project inside a private network and PID namespace that has only loopback
// (`unshare --net --pid --fork --mount-proc`, root needed), so the program's attempts to reach its
// cloud cannot leave the machine. Without root or unshare it fails and says why; it never skips.
// Extra arguments go to vitest (CI passes a JSON reporter).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMain, root } from '../packages/spec/scripts/lib.mjs';
import { runLoopbackSuite } from './loopback-suite.mjs';

if (isMain(import.meta.url)) {
  const { ensureRealManagerInstalled } = await import(pathToFileURL(join(root, 'packages/testkit/src/real-manager/install.mjs')).href);
  runLoopbackSuite({
    label: 'test:real-manager',
    who: 'the real manager runs in a network namespace of its own',
    install: ensureRealManagerInstalled,
    project: 'real-manager',
    env: { ZONE_API_REAL_MANAGER: '1' },
  });
}
