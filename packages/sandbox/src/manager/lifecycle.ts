import type { ManagerContext, ManagerHandlers } from './context.js';

// Lifecycle: versions, and restart, shutdown and upgrade, simulated so that the process keeps running.

/** The runtime range the real manager recommends (its package.json `recommendedNode`, 1.570.247). */
const RECOMMENDED_NODE = '>=20.12.1';

function semverParts(v: string): number[] {
  return v
    .split(/[.-]/)
    .slice(0, 3)
    .map((n) => Number.parseInt(n, 10) || 0);
}
function newer(a: string, b: string): boolean {
  const x = semverParts(a);
  const y = semverParts(b);
  for (let i = 0; i < 3; i++) if ((x[i] as number) !== (y[i] as number)) return (x[i] as number) > (y[i] as number);
  return false;
}

export function lifecycleHandlers(c: ManagerContext) {
  const { store, m, options, resetRuntime } = c;
  return {
    // `backup_exist` is sent only when the manager started from a backup of its config; the sandbox never does.
    getVersion: () => ({ body: { version: m().version, argv: options.argv } }),

    getLatestVersion: () => {
      const latest = m().releases[0];
      return { body: { version: latest.ver, newer: newer(latest.ver, m().version), versions: m().releases } };
    },

    getNodeVersion: () => {
      // As the real manager answers it (lib/mixins/web_api.js 743-752): the runtime's version string, and
      // whether it satisfies its package's `recommendedNode` (`>=20.12.1` in 1.570.247).
      const current = process.versions.node;
      return { body: { current, satisfied: !newer(RECOMMENDED_NODE.slice(2), current), recommended: RECOMMENDED_NODE } };
    },

    shutdownManager: () => {
      resetRuntime('shutdown (simulated: the sandbox keeps answering)');
      if (options.onShutdown) setImmediate(options.onShutdown);
      return { body: { result: 'ok' } };
    },

    restartManager: () => {
      resetRuntime('restart');
      return { body: { result: 'ok' } };
    },

    upgradeManager: () => {
      const latest = m().releases[0].ver;
      const from = m().version;
      if (newer(latest, from)) store.setManager({ version: latest });
      resetRuntime(`upgrade from ${from} to ${m().version}`);
      return { body: { result: 'ok' } };
    },
  } satisfies ManagerHandlers;
}
