import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const src = (pkg: string, file = 'index') => fileURLToPath(new URL(`./packages/${pkg}/src/${file}.ts`, import.meta.url));

// Tests run against the sources of the workspace packages (no compile step needed for tests),
// but against the built bundles in packages/spec/dist (`pnpm build` first).
const alias = {
  '@zone-api/client-core': src('client-core'),
  '@zone-api/account-client': src('account-client'),
  '@zone-api/manager-client': src('manager-client'),
  '@zone-api/sandbox': src('sandbox'),
  '@zone-api/probe': src('probe'),
  // The test kit is private and read from its sources by every suite (the spec package's tests too,
  // which cannot depend on it: the test kit depends on the spec package's operation model).
  '@zone-api/testkit/fuzz': src('testkit', 'fuzz'),
  '@zone-api/testkit/contract': src('testkit', 'contract'),
  '@zone-api/testkit/real-manager': src('testkit', 'real-manager/index'),
  '@zone-api/testkit/differential': src('testkit', 'differential/index'),
  '@zone-api/testkit/real-clients': src('testkit', 'real-clients/index'),
  '@zone-api/testkit/chromium': src('testkit', 'chromium'),
  '@zone-api/testkit': src('testkit'),
};

/** The sandbox's test files that share their modules in a worker (project sandbox:shared). */
const SANDBOX_SHARED = ['packages/sandbox/test/account/**/*.test.ts', 'packages/sandbox/test/manager/**/*.test.ts'];

export default defineConfig({
  resolve: { alias },
  test: {
    // At least two files at a time. Vitest's default (cores − 1) gives one worker on a 2-core machine such
    // as CI's, and then every file waits for the one before it while that file mostly waits on a child
    // process (a sandbox, Prism, Java, Chromium, Optic). Measured there on a quiet machine: `pnpm test`
    // 584 s with one worker, 424 s with two, every test passing in both.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 20_000,
    hookTimeout: 90_000,
    projects: [
      // The spec package's own tests, then its slow suites in folders of their own.
      { extends: true, test: { name: 'spec', include: ['packages/spec/test/*.test.ts'] } },
      { extends: true, test: { name: 'client-core', include: ['packages/client-core/test/**/*.test.ts'] } },
      // The probe's own tests; its run against the real manager is in the real-manager project.
      {
        extends: true,
        test: {
          name: 'probe',
          include: ['packages/probe/test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'packages/probe/test/real-manager/**'],
        },
      },
      { extends: true, test: { name: 'testkit', include: ['packages/testkit/test/**/*.test.ts'] } },
      { extends: true, test: { name: 'account-client', include: ['packages/account-client/test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'manager-client', include: ['packages/manager-client/test/unit/**/*.test.ts'] } },
      // The sandbox's own tests (flows, persistence, faults, fuzz, concurrency).
      {
        extends: true,
        test: {
          name: 'sandbox',
          include: ['packages/sandbox/test/**/*.test.ts'],
          exclude: [
            ...configDefaults.exclude,
            'packages/sandbox/test/samples/**',
            'packages/sandbox/test/real-manager/**',
            ...SANDBOX_SHARED,
          ],
        },
      },
      // Its API files, their modules loaded once per worker rather than once per file (isolate: false):
      // each file imported the sandbox, Ajv and fastify anew, about 2 s of CPU a file. These 16 files at a
      // load average of 30: 65.9 s of CPU isolated, 20.5 s not, every test passing in both. Not (yet) the
      // others: the CPU-heavy property tests (router/json-pieces, attack/amplification) ran past their
      // timeouts at a load of 25 in a shared worker and passed isolated.
      { extends: true, test: { name: 'sandbox:shared', include: SANDBOX_SHARED, isolate: false } },
      // Every operation's code samples (x-codeSamples of the bundles) run against the sandbox: TypeScript
      // through the built clients (`pnpm build` first), curl and python3.
      { extends: true, test: { name: 'samples', include: ['packages/sandbox/test/samples/**/*.test.ts'], testTimeout: 30_000 } },
      // Each API's contract suite against each server: Prism's mock, the sandbox, and the sandbox behind
      // `prism proxy` (any response that breaks the spec fails).
      ...['account', 'manager'].flatMap((api) =>
        ['prism', 'sandbox', 'sandbox-via-prism'].map((server) => ({
          extends: true as const,
          test: {
            name: `${api}-contract:${server}`,
            include: [`packages/${api}-client/test/contract/**/*.test.ts`],
            globalSetup: [`packages/testkit/src/setup/${server}.ts`],
          },
        })),
      ),
      // Python and Go clients generated with openapi-generator and driven against Prism (Java 17, python3, Go).
      {
        extends: true,
        test: { name: 'generators', include: ['packages/spec/test/generators/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 300_000 },
      },
      // The reference docs in headless Chromium (Debian's chromium; scripts/setup.sh installs it): the
      // pages built and one Chromium started once, by its global setup; each file opens a context of its
      // own in that browser. Its files run beside the others: one after another they were vitest's last
      // group, about 100 s with the second worker idle.
      {
        extends: true,
        test: {
          name: 'docs',
          include: ['packages/spec/test/docs/**/*.test.ts'],
          globalSetup: ['packages/spec/test/docs/build.setup.ts'],
          testTimeout: 60_000,
        },
      },
      // The manager contract against the real local proxy manager: only inside the namespace that
      // `pnpm test:real-manager` makes (it sets ZONE_API_REAL_MANAGER), never in a plain `pnpm test`.
      ...(process.env.ZONE_API_REAL_MANAGER === '1'
        ? [
            {
              extends: true,
              // One file at a time: each starts the real manager, whose own ports are fixed numbers.
              test: {
                name: 'real-manager',
                include: ['packages/sandbox/test/real-manager/**/*.test.ts', 'packages/probe/test/real-manager/**/*.test.ts'],
                testTimeout: 60_000,
                fileParallelism: false,
                // The real manager writes a log entry, its statistics and a worker's bans a moment after it
                // answered (over IPC from its worker); the sandbox a moment after too. Every read of such
                // state polls until it holds what the case expects; on CI's 2 cores under load the default
                // second was not always enough, and a poll ends as soon as it matches.
                expect: { poll: { timeout: 10_000 } },
              },
            },
          ]
        : []),
      // The account API against the provider's own npm clients, run unmodified: only inside the namespace
      // that `pnpm test:real-clients` makes (it sets ZONE_API_REAL_CLIENTS).
      ...(process.env.ZONE_API_REAL_CLIENTS === '1'
        ? [
            {
              extends: true,
              test: {
                name: 'real-clients',
                include: ['packages/account-client/test/real-clients/**/*.test.ts'],
                testTimeout: 90_000,
                fileParallelism: false,
              },
            },
          ]
        : []),
      {
        extends: true,
        test: {
          name: 'types',
          include: [],
          typecheck: {
            enabled: true,
            only: true,
            include: ['packages/*/test/types/**/*.test-d.ts'],
            // Only the type tests and what they import (436 files, not the 1,638 of `pnpm typecheck`, which
            // checks the rest): 16.5 s of tsc's CPU instead of 28.4 s.
            tsconfig: './tsconfig.types.json',
          },
        },
      },
    ],
  },
});
