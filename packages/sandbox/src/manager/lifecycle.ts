import type { ManagerContext, ManagerHandlers } from './context.js';

// Lifecycle: versions, and restart, shutdown and upgrade, simulated so that the process keeps running.

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
  const { m, options, resetRuntime } = c;
  return {
    // `backup_exist` is sent only when the manager started from a backup of its config; the sandbox never does.
    getVersion: () => ({ body: { version: m().version, argv: options.argv } }),

    getLatestVersion: () => {
      const latest = m().releases[0];
      return { body: { version: latest.ver, newer: newer(latest.ver, m().version), versions: m().releases } };
    },

    getNodeVersion: () => {
      const [major, minor, patch] = process.versions.node.split('.').map(Number) as [number, number, number];
      const version = process.versions.node;
      return {
        body: {
          current: { options: {}, loose: false, raw: process.version, major, minor, patch, prerelease: [], build: [], version },
          satisfied: major > 20 || (major === 20 && minor >= 19),
          recommended: '>=20.19.0',
        },
      };
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
      if (newer(latest, from)) m().version = latest;
      resetRuntime(`upgrade from ${from} to ${m().version}`);
      return { body: { result: 'ok' } };
    },
  } satisfies ManagerHandlers;
}
