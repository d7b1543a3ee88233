import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@zone-api/testkit';
import { PRELOAD } from '@zone-api/testkit/real-clients';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_ENV } from '../../../spec/scripts/samples.mjs';
import { startLocalRegistry } from '../../../testkit/src/local-registry.js';

// A new user's first hour, from packed tarballs in a TypeScript project outside this repository:
// install (offline, from pnpm's store), start the installed sandbox, then compile (strict) and run
// every README example marked `readme-example` against it. An example may not lean on `!` or casts.

interface Example {
  file: string;
  name: string;
  code: string;
}

/** The sandbox's testing guide, a page of its own linked from the root README. */
const GUIDE = 'packages/sandbox/docs/testing-guide.md';

/** Every ```ts block preceded by `<!-- readme-example: NAME -->` in the READMEs users read first (the sandbox's testing guide too). */
function readmeExamples(): Example[] {
  const out: Example[] = [];
  for (const file of [
    'README.md',
    'packages/account-client/README.md',
    'packages/manager-client/README.md',
    'packages/sandbox/README.md',
    GUIDE,
  ]) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    for (const m of text.matchAll(/<!-- readme-example: ([\w-]+)[^>]*-->\s*```ts\n([\s\S]*?)```/g)) {
      out.push({ file, name: m[1] as string, code: m[2] as string });
    }
  }
  return out;
}

/** `x!` and `x as T` in the example's own code, with their line. */
function assertionsIn(code: string): string[] {
  const found: string[] = [];
  const src = ts.createSourceFile('example.ts', code, ts.ScriptTarget.ES2022, true);
  const visit = (n: ts.Node) => {
    if (ts.isNonNullExpression(n) || ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) {
      const { line } = src.getLineAndCharacterOfPosition(n.getStart());
      found.push(`line ${line + 1}: ${n.getText()}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return found;
}

/** Mistakes that must not compile, from the issue that closed the request types. */
const MISTAKES = `import { createAccountClient } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
const account = createAccountClient({ baseUrl: 'http://127.0.0.1:9', auth: { token: 't' }, customer: 'hl_1' });
const manager = createManagerClient();
export async function mistakes(): Promise<void> {
  // @ts-expect-error contry
  await manager.createProxy({ body: { proxy: { zone: 'z', contry: 'us' } } });
  // @ts-expect-error www_whitelist_ipz
  await manager.updateSettings({ body: { www_whitelist_ipz: [] } });
  // @ts-expect-error plan.typ
  await account.createZone({ body: { zone: { name: 'n' }, plan: { typ: 'static' } } });
  // @ts-expect-error contry
  await account.addZoneIps({ body: { zone: 'z', count: 1, contry: 'us' } });
  // @ts-expect-error a number is no ban
  await manager.banIps({ params: { path: { port: 24000 } }, body: 42 });
  // @ts-expect-error neither ip nor ips
  await manager.banIpAllPorts({ body: { ms: 1000 } });
  const created = await manager.createProxy({ body: { proxy: { zone: 'z' } } });
  // @ts-expect-error an error is not data
  created.data.data;
  // @ts-expect-error 418 is not a status createProxy declares
  errorAtOf(created, 418);
  // @ts-expect-error no such operation
  await account.getZones();
}
import { errorAt as errorAtOf } from '@zone-api/manager-client';
`;

/** The version of a package as this repository installed it (root or a package's folder). */
function versionOf(name: string, from = '.'): string {
  return (JSON.parse(readFileSync(join(repoRoot, from, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The testing guide's files: every ```ts block of the guide preceded by `<!-- guide-file: PATH -->`. */
function guideFiles(): { path: string; code: string }[] {
  const text = readFileSync(join(repoRoot, GUIDE), 'utf8');
  return [...text.matchAll(/<!-- guide-file: ([\w./-]+) -->\s*```ts\n([\s\S]*?)```/g)].map((m) => ({
    path: m[1] as string,
    code: m[2] as string,
  }));
}

/** The testing guide's node:test file: the ```ts block of the guide preceded by `<!-- node-test-file: PATH -->`. */
function nodeTestFiles(): { path: string; code: string }[] {
  const text = readFileSync(join(repoRoot, GUIDE), 'utf8');
  return [...text.matchAll(/<!-- node-test-file: ([\w./-]+) -->\s*```ts\n([\s\S]*?)```/g)].map((m) => ({
    path: m[1] as string,
    code: m[2] as string,
  }));
}

/** The README's `pnpm-workspace.yaml` block for pnpm users (marked `pnpm-overrides`). */
function pnpmOverridesBlock(): string {
  const m = readFileSync(join(repoRoot, 'README.md'), 'utf8').match(/<!-- pnpm-overrides[^>]*-->\s*```yaml\n([\s\S]*?)```/);
  if (!m?.[1]) throw new Error('README.md has no pnpm-overrides block');
  return m[1];
}

/** Its overrides: package name -> the tarball it points at. */
function pnpmOverridesOfReadme(): Record<string, string> {
  return Object.fromEntries([...pnpmOverridesBlock().matchAll(/^ {2}'([^']+)': (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
}

/** How many times the guide's suite runs in a row: 2 in CI (ZONE_API_OUTSIDE_RUNS=10 for the issue's ten), at most 20. */
const RUNS = Math.min(20, Math.max(1, Number(process.env.ZONE_API_OUTSIDE_RUNS ?? 2)));

const examples = readmeExamples();
let work: string;
let project: string;
let server: ChildProcess | undefined;
let urls: { accountUrl: string; managerUrl: string; token: string };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'zone-api-outside-'));
  const packs = join(work, 'packs');
  const { packAll } = (await import(pathToFileURL(join(repoRoot, 'scripts/pack.mjs')).href)) as {
    packAll: (dest: string) => Record<string, string>;
  };
  const packed = packAll(packs);
  project = join(work, 'project');
  mkdirSync(join(project, 'src'), { recursive: true });
  const deps = Object.fromEntries(Object.entries(packed).map(([name, file]) => [name, `file:${file}`]));
  // As the README says: the clients in dependencies, the sandbox in devDependencies.
  const { '@zone-api/sandbox': sandboxDep, ...runtimeDeps } = deps;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'outside',
      private: true,
      type: 'module',
      dependencies: runtimeDeps,
      // The testing guide's suite runs with vitest, MSW and the provider's SDK, at the versions this repository tests with.
      devDependencies: {
        '@zone-api/sandbox': sandboxDep,
        vitest: versionOf('vitest'),
        msw: versionOf('msw', 'packages/sandbox'),
        '@brightdata/sdk': versionOf('@brightdata/sdk', 'packages/sandbox'),
      },
    }),
  );
  // The packed packages name each other by version; until they are on a registry, the README's
  // pnpm-workspace.yaml points those at the tarballs: written here as the README has it, with its
  // folder, and each of its file names must be the one packed (else the README is stale).
  const readmeOverrides = pnpmOverridesOfReadme();
  expect(Object.keys(readmeOverrides).sort()).toEqual(Object.keys(packed).sort());
  for (const [name, file] of Object.entries(packed)) expect(readmeOverrides[name], name).toBe(`file:../zone-api-packs/${basename(file)}`);
  writeFileSync(
    join(project, 'pnpm-workspace.yaml'),
    `${pnpmOverridesBlock().replaceAll('file:../zone-api-packs/', `file:${packs}/`)}# msw's postinstall only copies a browser worker file (not needed in Node).\nallowBuilds:\n  msw: false\n`,
  );
  execFileSync('pnpm', ['install', '--offline'], { cwd: project, stdio: 'pipe' });

  // The installed sandbox, started as a user's own script would.
  writeFileSync(
    join(project, 'start.mjs'),
    `import { startSandbox } from '@zone-api/sandbox';
const s = await startSandbox({ accountPort: 0, managerPort: 0 });
console.log(JSON.stringify({ accountUrl: s.accountUrl, managerUrl: s.managerUrl, token: s.credentials.token }));\n`,
  );
  server = spawn(process.execPath, ['start.mjs'], { cwd: project, stdio: ['ignore', 'pipe', 'inherit'] });
  urls = await new Promise((resolve, reject) => {
    let buf = '';
    server?.stdout?.on('data', (d) => {
      buf += d;
      const line = buf.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    server?.on('exit', (code) => reject(new Error(`the installed sandbox exited with ${code}`)));
  });
}, 180_000);

afterAll(() => {
  server?.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('README examples in a project outside the repository, from packed tarballs', () => {
  it('there are examples to run: the clients and the sandbox quick start', () => {
    expect(examples.map((e) => e.name)).toEqual(
      expect.arrayContaining(['account-client', 'manager-client', 'sandbox', 'sandbox-fixtures', 'sandbox-faults', 'sandbox-msw']),
    );
  });

  it('the README reads the token from the environment variable the code samples name', () => {
    const example = examples.find((e) => e.name === 'account-client');
    expect(example?.code).toContain(`process.env.${SAMPLE_ENV.account.token}`);
  });

  it("the README's install line puts the sandbox in devDependencies", () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    // Each `npm install` command of a shell block, its continued lines joined.
    const commands = readme.replace(/\\\n\s*/g, ' ').split('\n');
    const installs = commands.filter((l) => l.startsWith('npm install '));
    expect(installs.length).toBeGreaterThanOrEqual(2);
    for (const line of installs) {
      const dev = / (-D|--save-dev)( |$)/.test(line);
      expect(line.includes('sandbox'), line).toBe(dev);
    }
  });

  it.each(examples.map((e) => [`${e.file} ${e.name}`, e] as const))('%s: no non-null assertion or cast', (_, e) => {
    expect(assertionsIn(e.code)).toEqual([]);
  });

  it('every example compiles (strict, NodeNext) against the installed packages and runs against the installed sandbox', () => {
    const files: string[] = [];
    for (const e of examples) {
      const code = e.code
        .replaceAll('https://api.example.com', urls.accountUrl)
        .replaceAll('http://127.0.0.1:8787', urls.accountUrl)
        .replaceAll('createManagerClient()', `createManagerClient({ baseUrl: '${urls.managerUrl}' })`)
        .replaceAll('createManagerClient({ token', `createManagerClient({ baseUrl: '${urls.managerUrl}', token`);
      const file = join(project, 'src', `${e.file.replace(/[^\w]+/g, '_')}_${e.name}.ts`);
      writeFileSync(file, `${code}\nexport {};\n`);
      files.push(file);
    }
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          outDir: 'out',
          rootDir: 'src',
          skipLibCheck: false,
          // process.env: the repository's Node typings, as a user's own @types/node would be.
          typeRoots: [join(repoRoot, 'node_modules/@types')],
          types: ['node'],
        },
        include: ['src'],
      }),
    );
    // Beside the examples, mistakes a user makes: each must fail to compile (an unused
    // `@ts-expect-error` fails the compile), against the installed packages' declarations.
    writeFileSync(join(project, 'src', 'mistakes.ts'), MISTAKES);
    const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', project], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr, 'tsc').toBe('');
    expect(tsc.status).toBe(0);
    expect(MISTAKES.match(/@ts-expect-error/g)?.length).toBeGreaterThanOrEqual(8);
    for (const file of files) {
      const js = file.replace(`${join(project, 'src')}`, join(project, 'out')).replace(/\.ts$/, '.js');
      const run = spawnSync(process.execPath, [js], {
        cwd: project,
        encoding: 'utf8',
        env: { ...process.env, [SAMPLE_ENV.account.token]: urls.token },
        timeout: 30_000,
      });
      expect(run.stderr, `${file} stderr`).toBe('');
      expect(run.status, `${file} exit status`).toBe(0);
    }
  }, 300_000); // tsc over a whole project, then each example in its own process: beyond the default on a loaded machine (192 s at load 20)
});

/**
 * Writes a guide's files into the outside project and compiles them with its own tsconfig (strict,
 * NodeNext, against the installed packages): tsc must say nothing and succeed. `emit` is where the
 * JavaScript goes (outDir and rootDir), or noEmit.
 */
function compileInProject(files: { path: string; code: string }[], tsconfig: string, emit: Record<string, unknown>) {
  for (const f of files) {
    mkdirSync(join(project, dirname(f.path)), { recursive: true });
    writeFileSync(join(project, f.path), f.code);
  }
  writeFileSync(
    join(project, tsconfig),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        ...emit,
        skipLibCheck: true,
        typeRoots: [join(repoRoot, 'node_modules/@types')],
        types: ['node'],
      },
      include: files.map((f) => f.path),
    }),
  );
  const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', join(project, tsconfig)], {
    encoding: 'utf8',
  });
  expect(tsc.stdout + tsc.stderr, 'tsc').toBe('');
  expect(tsc.status).toBe(0);
}

describe("the testing guide's node:test example, run with node --test in the outside project", () => {
  const files = nodeTestFiles();

  it('compiles (strict, NodeNext) and passes its test under node --test', () => {
    expect(files.map((f) => f.path)).toEqual(['node-test/balance.test.ts']);
    compileInProject(files, 'tsconfig.node-test.json', { outDir: 'node-test-out', rootDir: 'node-test' });
    const js = files.map((f) => join('node-test-out', f.path.replace(/^node-test\//, '').replace(/\.ts$/, '.js')));
    const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', ...js], {
      cwd: project,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, NO_COLOR: '1' },
      timeout: 120_000,
    });
    const report = `${run.stdout}\n${run.stderr}`;
    expect(run.status, report.slice(-3000)).toBe(0);
    // node:test's TAP summary: one test, passed (a test that threw or asserted wrong is `# fail 1`).
    expect(report).toMatch(/^# tests 1$/m);
    expect(report).toMatch(/^# pass 1$/m);
    expect(report).toMatch(/^# fail 0$/m);
  }, 180_000);
});

describe('zone-api-probe from the packed tarballs', () => {
  it('probes the installed sandbox, both APIs, and writes a redacted report (the manager compared with the recorded 1.570.247)', () => {
    const bin = join(project, 'node_modules/.bin/zone-api-probe');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, ZONE_API_TOKEN: urls.token };
    const account = spawnSync(
      bin,
      [
        'account',
        '--base-url',
        urls.accountUrl,
        '--customer',
        'hl_1a2b3c4d',
        '--only',
        'getBalance',
        '--max-per-minute',
        '99',
        '--out',
        'probe-account',
      ],
      { cwd: project, encoding: 'utf8', env, timeout: 60_000 },
    );
    expect(account.stderr).toBe('');
    expect(account.status).toBe(0);
    expect(account.stdout).toContain('1 calls, 0 findings');
    const report = readFileSync(join(project, 'probe-account.md'), 'utf8');
    expect(report).toContain('| `getBalance` | GET /api/customer/balance?customer=[redacted:customer] | 200 |');
    expect(report).not.toContain(urls.token);
    const manager = spawnSync(bin, ['manager', '--base-url', urls.managerUrl, '--only', 'getVersion,getMode', '--out', 'probe-manager'], {
      cwd: project,
      encoding: 'utf8',
      env,
      timeout: 60_000,
    });
    expect(manager.stderr).toBe('');
    expect(manager.stdout).toContain('2 calls, 0 findings, 0 not called, 0 differences from 1.570.247');
  }, 120_000);
});

describe("the sandbox's testing guide, run as a suite in parallel workers in the outside project", () => {
  const files = guideFiles();

  it('the guide has its suite: the config, globalSetup, the account helper and four test files', () => {
    expect(files.map((f) => f.path)).toEqual([
      'vitest.config.ts',
      'test/sandbox-setup.ts',
      'test/account.ts',
      'test/zones.test.ts',
      'test/faults.test.ts',
      'test/traffic.test.ts',
      'test/msw.test.ts',
    ]);
  });

  it('compiles (strict, NodeNext) against the installed packages', () => {
    compileInProject(files, 'tsconfig.guide.json', { noEmit: true });
  }, 120_000);

  it(
    `passes ${RUNS} times in a row: one sandbox in globalSetup, an account per test, parallel workers, behind the loopback guard`,
    () => {
      const vitest = join(project, 'node_modules/vitest/vitest.mjs');
      // The real-clients guard in every process of the suite (its workers inherit NODE_OPTIONS): the
      // provider's SDK runs there, and any DNS lookup or connection that is not loopback is refused and logged.
      const guardLog = join(work, 'guard.jsonl');
      writeFileSync(guardLog, '');
      // A clean environment: nothing of this vitest's own (its worker variables) reaches the suite.
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: work,
        NO_COLOR: '1',
        NODE_OPTIONS: `--require ${JSON.stringify(PRELOAD)}`,
        ZONE_API_GUARD_LOG: guardLog,
      };
      // The guard is live under that environment: a connection off loopback (TEST-NET, never routed) is refused.
      const probe = spawnSync(
        process.execPath,
        ['-e', "require('node:net').connect(443, '192.0.2.1').on('error', (e) => console.log(e.code))"],
        {
          env,
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(probe.stdout.trim()).toBe('ECONNREFUSED');
      expect(readFileSync(guardLog, 'utf8')).toContain('a connection to 192.0.2.1:443');
      writeFileSync(guardLog, '');

      const results: string[] = [];
      for (let run = 1; run <= RUNS; run++) {
        const report = join(work, `guide-run-${run}.json`);
        const res = spawnSync(process.execPath, [vitest, 'run', '--reporter=json', `--outputFile=${report}`], {
          cwd: project,
          encoding: 'utf8',
          env,
          timeout: 180_000,
        });
        const json = JSON.parse(readFileSync(report, 'utf8')) as {
          numTotalTests: number;
          numPassedTests: number;
          testResults: { name: string; status: string; assertionResults: { status: string; failureMessages: string[] }[] }[];
        };
        const failed = json.testResults.flatMap((f) =>
          f.assertionResults.filter((a) => a.status !== 'passed').flatMap((a) => a.failureMessages),
        );
        expect(failed, `run ${run}: ${res.stderr.slice(-2000)}`).toEqual([]);
        expect(res.status, `run ${run}`).toBe(0);
        expect(json.testResults).toHaveLength(4);
        expect(json.numTotalTests).toBe(7);
        expect(json.numPassedTests).toBe(7);
        expect(readFileSync(guardLog, 'utf8'), `run ${run}: the guard refused`).toBe('');
        results.push(`run ${run}: ${json.numPassedTests}/${json.numTotalTests}`);
      }
      expect(results).toHaveLength(RUNS);
    },
    RUNS * 200_000,
  );
});

/** A command run in a shell, its output: asynchronous, so that the registry in this process answers it. */
function shell(command: string, cwd: string): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn('bash', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout?.on('data', (d) => {
      out += d;
    });
    p.stderr?.on('data', (d) => {
      out += d;
    });
    p.on('close', (status) => resolve({ status, out }));
  });
}

describe("the README's npm install, as written, in a second project outside the repository", () => {
  it('installs the packed packages with npm (the sandbox a devDependency) and the installed clients talk to the installed sandbox', async () => {
    // The README's npm lines, continued lines joined, as a user pastes them into a shell.
    const commands = readFileSync(join(repoRoot, 'README.md'), 'utf8')
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .filter((l) => l.startsWith('npm install ') && l.includes('../zone-api-packs/'));
    expect(commands).toHaveLength(2);
    // The folder the README names, beside the project; npm's registry: the packages installed here, on loopback.
    symlinkSync(join(work, 'packs'), join(work, 'zone-api-packs'));
    const npmProject = join(work, 'npm-project');
    mkdirSync(npmProject);
    writeFileSync(join(npmProject, 'package.json'), JSON.stringify({ name: 'outside-npm', private: true, type: 'module' }));
    const registry = await startLocalRegistry(join(repoRoot, 'node_modules/.pnpm'));
    try {
      writeFileSync(
        join(npmProject, '.npmrc'),
        `registry=${registry.url}/\ncache=${join(work, 'npm-cache')}\naudit=false\nfund=false\nupdate-notifier=false\n`,
      );
      for (const command of commands) {
        const { status, out } = await shell(command, npmProject);
        expect(status, `${command}\n${out}`).toBe(0);
      }
    } finally {
      await registry.close();
    }
    const manifest = JSON.parse(readFileSync(join(npmProject, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      '@zone-api/account-client',
      '@zone-api/client-core',
      '@zone-api/manager-client',
      '@zone-api/spec',
    ]);
    expect(Object.keys(manifest.devDependencies)).toEqual(['@zone-api/sandbox']);
    // The installed packages, used as the README's examples use them.
    writeFileSync(
      join(npmProject, 'smoke.mjs'),
      `import { createAccountClient } from '@zone-api/account-client';
import { startSandbox } from '@zone-api/sandbox';
const sandbox = await startSandbox();
const account = createAccountClient({ baseUrl: sandbox.accountUrl, auth: { token: sandbox.credentials.token }, customer: sandbox.credentials.customer });
const { data, error } = await account.getZone({ params: { query: { zone: 'static_zone' } } });
await sandbox.close();
if (error) throw new Error(error.message);
console.log(data.plans?.[0]?.type);\n`,
    );
    const smoke = await shell(`${JSON.stringify(process.execPath)} smoke.mjs`, npmProject);
    expect(smoke.out.trim()).toBe('static');
    expect(smoke.status).toBe(0);
  }, 600_000);
});
