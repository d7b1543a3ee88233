import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBundle, operations } from '@zone-api/spec/model';
import { repoRoot } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The package as a consumer gets it: `pnpm pack`, install the tarball into an empty project (offline,
// its dependencies from pnpm's store: no registry), then import through the exports map.

const pkgDir = join(repoRoot, 'packages/spec');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
let work: string;
let consumer: string;
let tarball: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'zone-api-spec-pack-'));
  execFileSync('pnpm', ['pack', '--pack-destination', work], { cwd: pkgDir, stdio: 'pipe' });
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`pnpm pack wrote no tarball into ${work}`);
  tarball = join(work, tgz);
  consumer = join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { '@zone-api/spec': `file:${tarball}` } }),
  );
  execFileSync('pnpm', ['install', '--offline'], { cwd: consumer, stdio: 'pipe' });
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function runModule(source: string) {
  const file = join(consumer, `check-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, source);
  const res = spawnSync(process.execPath, [file], { cwd: consumer, encoding: 'utf8' });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

// The manager operations of the workspace's own bundle, which the packed package must ship.
const managerOperations = () => operations(loadBundle('manager')).length;

describe('@zone-api/spec as packed and installed', () => {
  it("ships the bundles, the variants, the parity matrix and the real manager's recorded answers, the generated types and tables, the operation model and the reference pages, not the tests", () => {
    const list = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
    const expected = [
      'package/package.json',
      'package/README.md',
      'package/CHANGELOG.md',
      'package/parity/manager.md',
      'package/parity/real-manager-1.570.247.json',
    ];
    for (const m of ['index', 'bundles', 'conformance', 'limits', 'operations', 'refs', 'security', 'validators'])
      expected.push(`package/model/${m}.js`, `package/types/${m}.d.ts`);
    // The reference pages, where the hover text of each method links its operation (`pnpm build` makes them).
    for (const page of ['index', 'account', 'manager', 'parity-manager']) expected.push(`package/dist/docs/${page}.html`);
    for (const page of ['sandbox-control']) expected.push(`package/dist/docs/${page}.html`);
    for (const api of ['account', 'manager', 'sandbox-control'])
      for (const f of ['js', 'd.ts', 'schema.d.ts']) expected.push(`package/generated/${api}.${f}`);
    for (const api of ['account', 'manager', 'sandbox-control'])
      for (const f of ['openapi.json', 'openapi.yaml', 'openapi.deref.json', 'openapi-3.0.json', 'openapi-3.0.yaml'])
        expected.push(`package/dist/${api}.${f}`);
    expect(list).toEqual(expected.sort());
  });

  it("resolves the reference page each method's hover text names (@zone-api/spec/docs/<api>.html) to a page with every operation", () => {
    const { status, stdout, stderr } = runModule(`
      import { readFileSync } from 'node:fs';
      import { fileURLToPath } from 'node:url';
      const out = {};
      for (const api of ['account', 'manager']) {
        const dts = readFileSync(fileURLToPath(import.meta.resolve('@zone-api/spec/' + api)).replace(/\\.js$/, '.d.ts'), 'utf8');
        const links = [...dts.matchAll(/reference: \`@zone-api\\/spec\\/(docs\\/[\\w-]+\\.html)#operation\\/(\\w+)\`/g)];
        const pages = [...new Set(links.map((m) => m[1]))];
        const html = pages.map((p) => readFileSync(fileURLToPath(import.meta.resolve('@zone-api/spec/' + p)), 'utf8'));
        out[api] = { links: links.length, pages, found: links.filter((m) => html.some((h) => h.includes('"operationId":"' + m[2] + '"'))).length };
      }
      console.log(JSON.stringify(out));
    `);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const n = (api: 'account' | 'manager') => operations(loadBundle(api)).length;
    expect(JSON.parse(stdout)).toEqual({
      account: { links: n('account'), pages: ['docs/account.html'], found: n('account') },
      manager: { links: n('manager'), pages: ['docs/manager.html'], found: n('manager') },
    });
  });

  it('imports every JSON export with an import attribute', () => {
    const { status, stdout, stderr } = runModule(`
      import account from '@zone-api/spec/account.json' with { type: 'json' };
      import accountDeref from '@zone-api/spec/account.deref.json' with { type: 'json' };
      import account30 from '@zone-api/spec/account.3.0.json' with { type: 'json' };
      import manager from '@zone-api/spec/manager.json' with { type: 'json' };
      import managerDeref from '@zone-api/spec/manager.deref.json' with { type: 'json' };
      import manager30 from '@zone-api/spec/manager.3.0.json' with { type: 'json' };
      import control from '@zone-api/spec/sandbox-control.json' with { type: 'json' };
      import controlDeref from '@zone-api/spec/sandbox-control.deref.json' with { type: 'json' };
      import control30 from '@zone-api/spec/sandbox-control.3.0.json' with { type: 'json' };
      console.log(JSON.stringify([account, accountDeref, account30, manager, managerDeref, manager30, control, controlDeref, control30].map((d) => [d.openapi, d.info.title, d.info.version])));
    `);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const v = pkg.version;
    expect(JSON.parse(stdout)).toEqual([
      ['3.1.0', 'Account and Zone Management API', v],
      ['3.1.0', 'Account and Zone Management API', v],
      ['3.0.3', 'Account and Zone Management API', v],
      ['3.1.0', 'Local Proxy Manager API', v],
      ['3.1.0', 'Local Proxy Manager API', v],
      ['3.0.3', 'Local Proxy Manager API', v],
      ['3.1.0', 'Sandbox control API', v],
      ['3.1.0', 'Sandbox control API', v],
      ['3.0.3', 'Sandbox control API', v],
    ]);
  });

  it('resolves the YAML exports to files a reader can open', () => {
    const { status, stdout, stderr } = runModule(`
      import { readFileSync } from 'node:fs';
      import { fileURLToPath } from 'node:url';
      const out = {};
      for (const p of ['account.yaml', 'account.3.0.yaml', 'manager.yaml', 'manager.3.0.yaml', 'sandbox-control.yaml', 'sandbox-control.3.0.yaml']) {
        const text = readFileSync(fileURLToPath(import.meta.resolve('@zone-api/spec/' + p)), 'utf8');
        out[p] = text.match(/^openapi: *['"]?([0-9.]+)/m)?.[1];
      }
      console.log(JSON.stringify(out));
    `);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      'account.yaml': '3.1.0',
      'account.3.0.yaml': '3.0.3',
      'manager.yaml': '3.1.0',
      'manager.3.0.yaml': '3.0.3',
      'sandbox-control.yaml': '3.1.0',
      'sandbox-control.3.0.yaml': '3.0.3',
    });
  });

  it('reads its own bundles through the operation model', () => {
    const { status, stdout, stderr } = runModule(`
      import { loadBundle, operations, schemaValidator } from '@zone-api/spec/model';
      const doc = loadBundle('manager');
      const ops = operations(doc);
      const createProxy = ops.find((o) => o.operationId === 'createProxy');
      const v = schemaValidator(doc);
      console.log(JSON.stringify({
        count: ops.length,
        method: createProxy.method,
        body: createProxy.requestBody.required,
        refused: v.validate(createProxy.requestBody.content['application/json'].schemaPointer, 'not an object') !== null,
      }));
    `);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ count: managerOperations(), method: 'post', body: true, refused: true });
  });

  it('exports the operation table of each API, which agrees with the operation model', () => {
    const { status, stdout, stderr } = runModule(`
      import { operations as table } from '@zone-api/spec/manager';
      import { loadBundle, operations } from '@zone-api/spec/model';
      const ops = operations(loadBundle('manager'));
      const differ = ops.filter((o) => table[o.operationId]?.path !== o.path || table[o.operationId].idempotent !== o.facts.idempotent);
      console.log(JSON.stringify({ count: Object.keys(table).length, differ: differ.length, users: table.listUsers }));
    `);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const out = JSON.parse(stdout);
    expect(managerOperations()).toBeGreaterThan(30);
    expect(out).toMatchObject({
      count: managerOperations(),
      differ: 0,
      users: { method: 'GET', path: '/api/pm_users', brandPrefix: 'pm', idempotent: true },
    });
  });

  it('refuses paths outside the exports map', () => {
    const { status, stderr } = runModule(`import x from '@zone-api/spec/dist/account.openapi.json' with { type: 'json' };`);
    expect(status).not.toBe(0);
    expect(stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });
});
