#!/usr/bin/env node
// `pnpm generate:clients [python|go ...]`: Python and Go clients of both APIs, generated with
// openapi-generator 4.3.1 (the npm package that ships its jar; runs on Java 17) from the OpenAPI 3.0.3
// variants (4.3.1 reads 3.0 only) into artifacts/clients/<lang>/<api>/. A build output, never committed.
// What the generator gets wrong, and the workarounds below, are listed in packages/spec/README.md.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { openapi30Path } from './artifacts.mjs';
import { isMain, root } from './lib.mjs';

export const clientsDir = join(root, 'artifacts/clients');
export const LANGS = ['python', 'go'];
const APIS = ['account', 'manager'];
const version = JSON.parse(readFileSync(join(root, 'packages/spec/package.json'), 'utf8')).version;

/** Where a generated client lives, and the names it is generated under. */
export function target(lang, api) {
  return {
    dir: join(clientsDir, lang, api),
    python: `zone_${api}`,
    go: { package: `zone${api}`, module: `github.com/zone-api/${api}-go` },
  };
}

function generatorArgs(lang, api) {
  const t = target(lang, api);
  // The input path is given relative to the repository (the generator runs there): its parser makes a
  // URL of the file's path, which fails on a checkout path with a space.
  const common = ['generate', '-i', relative(root, openapi30Path(api, 'json')), '-o', t.dir];
  if (lang === 'python')
    return [...common, '-g', 'python', '-p', `packageName=${t.python},projectName=zone-${api},packageVersion=${version}`];
  return [
    ...common,
    '-g',
    'go',
    '-p',
    `packageName=${t.go.package},packageVersion=${version}`,
    '--git-user-id',
    'zone-api',
    '--git-repo-id',
    `${api}-go`,
  ];
}

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${out.slice(-4000)}`)),
    );
  });
}

/**
 * The Go generator of 4.3.1 writes a go.mod without a `go` directive (so Go loads the whole module
 * graph of x/oauth2, which fails offline); the generator is told to skip it and this one is written.
 */
function goMod(t) {
  return `module ${t.go.module}

go 1.19

require (
	github.com/antihax/optional v1.0.0
	golang.org/x/oauth2 v0.0.0-20190604053449-0f29369cfe45
)
`;
}

/**
 * 4.3.1's Go generator types a property whose schema is `oneOf` as `OneOf<types>` (e.g.
 * `OneOfstringarray`) and never declares that type, so the package does not compile. Each such name
 * is declared as an alias of `interface{}`: the value is then whatever encoding/json decodes.
 */
function goOneOfAliases(t) {
  const names = new Set();
  for (const f of readdirSync(t.dir).filter((f) => f.endsWith('.go'))) {
    for (const m of readFileSync(join(t.dir, f), 'utf8').matchAll(/\bOneOf[A-Za-z0-9]+\b/g)) names.add(m[0]);
  }
  const lines = [...names].sort().map((n) => `type ${n} = interface{}`);
  return `// Written by packages/spec/scripts/gen-clients.mjs, not by openapi-generator: see goOneOfAliases there.\npackage ${t.go.package}\n\n${lines.join('\n')}\n`;
}

/**
 * 4.3.1's Python generator has the same gap: a `oneOf` property is typed `OneOf<types>` in the model's
 * `openapi_types`, a class it never writes, so deserializing any response that holds one raises
 * AttributeError. Each such name becomes `object` (the JSON value as decoded) in the package and its docs.
 * Likewise a map whose values are lists or maps (`additionalProperties` of an array or an object) is
 * typed `dict(str, list)` / `dict(str, dict)`, whose bare `list` / `dict` it then looks up as a model
 * class: they become `list[object]` and `dict(str, object)`, which it deserializes as they come.
 */
function pythonOneOfAsObject(t) {
  const files = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(py|md)$/.test(e.name)) files.push(p);
    }
  };
  walk(t.dir);
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const fixed = text
      .replace(/\bOneOf[A-Za-z0-9]+\b/g, 'object')
      .replace(/dict\(str, list\)/g, 'dict(str, list[object])')
      .replace(/dict\(str, dict\)/g, 'dict(str, dict(str, object))');
    if (fixed !== text) writeFileSync(f, fixed);
  }
}

async function generate(lang, api) {
  const t = target(lang, api);
  rmSync(t.dir, { recursive: true, force: true });
  mkdirSync(t.dir, { recursive: true });
  if (lang === 'go') writeFileSync(join(t.dir, '.openapi-generator-ignore'), 'go.mod\ngo.sum\n');
  // The jar is run directly: the package's bin joins its arguments into one shell command, which
  // splits a checkout path that has a space in it.
  const jar = join(root, 'node_modules/@openapitools/openapi-generator-cli/bin/openapi-generator.jar');
  const javaOpts = (process.env.JAVA_OPTS ?? '').split(/\s+/).filter(Boolean);
  await run('java', [...javaOpts, '-jar', jar, ...generatorArgs(lang, api)]);
  if (lang === 'go') {
    writeFileSync(join(t.dir, 'go.mod'), goMod(t));
    writeFileSync(join(t.dir, 'zz_oneof_aliases.go'), goOneOfAliases(t));
  }
  if (lang === 'python') pythonOneOfAsObject(t);
  return t.dir;
}

/** Generates the given languages for both APIs, two generator JVMs at a time (the machines have 2 cores). */
export async function generateClients(langs = LANGS) {
  for (const api of APIS) {
    if (!existsSync(openapi30Path(api))) throw new Error(`${openapi30Path(api)} is missing: run pnpm bundle (or pnpm build) first`);
  }
  const jobs = langs.flatMap((lang) => APIS.map((api) => [lang, api]));
  const done = [];
  for (let i = 0; i < jobs.length; i += 2) {
    done.push(...(await Promise.all(jobs.slice(i, i + 2).map(([lang, api]) => generate(lang, api)))));
  }
  return done;
}

if (isMain(import.meta.url)) {
  const langs = process.argv.slice(2).length ? process.argv.slice(2) : LANGS;
  const bad = langs.filter((l) => !LANGS.includes(l));
  if (bad.length) {
    console.error(`unknown language ${bad.join(', ')}: use ${LANGS.join(' or ')}`);
    process.exit(2);
  }
  try {
    for (const dir of await generateClients(langs)) console.log(`generated ${dir.slice(root.length + 1)}`);
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
