#!/usr/bin/env node
// `pnpm generate:clients [python|go ...]`: Python and Go clients of both APIs, generated with
// openapi-generator 5.0.0-beta (the newest that works of the npm packages that ship its jar; runs on Java 17;
// packages/spec/README.md says why not 5.0.0-beta2) from the
// OpenAPI 3.0.3 variants (it reads 3.0 only), shaped for it (generatorInput below; written beside the
// clients), into artifacts/clients/<lang>/<api>/, each a package a user installs: Python a PEP 621
// project with its wheel in artifacts/clients/python/dist/, Go a module. The files that make them
// packages (pyproject.toml, go.mod, the READMEs with their examples) are written here from
// packages/spec/clients/, the generator told to leave them alone. A build output, never committed,
// never edited after generation. What the generator gets wrong, and how the shaping avoids it, is
// listed in packages/spec/README.md.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { openapi30Path } from './artifacts.mjs';
import { isMain, root } from './lib.mjs';
import { SAMPLE_ENV } from './samples.mjs';

export const clientsDir = join(root, 'artifacts/clients');
export const LANGS = ['python', 'go'];
const APIS = ['account', 'manager'];
const version = JSON.parse(readFileSync(join(root, 'packages/spec/package.json'), 'utf8')).version;
/** The generator's version, as its npm package names it (`1.0.15-5.0.0-beta`: the wrapper, then the generator). */
const generatorVersion = JSON.parse(readFileSync(join(root, 'node_modules/@openapitools/openapi-generator-cli/package.json'), 'utf8'))
  .version.split('-')
  .slice(1)
  .join('-');
/** The templates of what makes each client a package (READMEs, examples). */
const ownDir = join(root, 'packages/spec/clients');
/** Where the Python wheels are written. */
export const wheelDir = join(clientsDir, 'python/dist');
/**
 * What the generated Python package imports beyond the standard library (the generator's own
 * setup.py lists the same as its REQUIRES).
 */
const PYTHON_DEPENDENCIES = ['urllib3 >= 1.15', 'six >= 1.10', 'certifi', 'python-dateutil'];
/** Files the generator would write that are written here instead (or not at all: setup.py gives way to pyproject.toml). */
const OWN_FILES = {
  python: ['setup.py', 'setup.cfg', 'README.md', 'requirements.txt', 'test-requirements.txt', 'tox.ini'],
  go: ['go.mod', 'go.sum', 'README.md'],
};

/** Where a generated client lives, and the names it is generated under. */
export function target(lang, api) {
  return {
    dir: join(clientsDir, lang, api),
    python: `zone_${api}`,
    project: `zone-${api}`,
    wheel: `zone_${api}-${version}-py3-none-any.whl`,
    go: { package: `zone${api}`, module: `github.com/zone-api/${api}-go` },
  };
}

function generatorArgs(lang, api) {
  const t = target(lang, api);
  // The input path is given relative to the repository (the generator runs there): its parser makes a
  // URL of the file's path, which fails on a checkout path with a space.
  const common = ['generate', '-i', relative(root, inputPath(api, lang)), '-o', t.dir];
  if (lang === 'python')
    return [...common, '-g', 'python', '-p', `packageName=${t.python},projectName=zone-${api},packageVersion=${version}`];
  return [
    ...common,
    '-g',
    'go-experimental',
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
 * The generator's go.mod says `go 1.13`: below 1.17 Go loads the whole module graph of x/oauth2,
 * which fails offline. The generator is told to skip it and this one is written.
 */
function goMod(t) {
  return `module ${t.go.module}

go 1.19

require golang.org/x/oauth2 v0.0.0-20190604053449-0f29369cfe45
`;
}

/** Keys of a schema that say what its value is; an untyped schema keeps none of them. */
const TYPING_KEYS = [
  'type',
  'format',
  'items',
  'properties',
  'additionalProperties',
  'required',
  'enum',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'discriminator',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
];
const isBranchOfValues = (b) => b && typeof b === 'object' && ['$ref', 'type', 'items', 'properties', 'enum'].some((k) => k in b);
/** A component schema the generators make a class of: an object with properties, or a composition. */
const isModel = (s) => !!s && typeof s === 'object' && (!!s.properties || Array.isArray(s.allOf));

/** What makes a property's type in generated code (its constraints do not). */
const TYPE_KEYS = ['type', 'format', 'items', '$ref', 'properties', 'additionalProperties', 'enum', 'nullable', 'oneOf', 'anyOf', 'allOf'];
const typingOf = (p) => JSON.stringify(TYPE_KEYS.map((k) => p[k]));
/** The first branch's property, with the constraints every branch shares (a value must pass all of them). */
const sharedProperty = (typed) =>
  Object.fromEntries(
    Object.entries(typed[0]).filter(
      ([k, v]) => TYPE_KEYS.includes(k) || k === 'description' || typed.every((t) => JSON.stringify(t[k]) === JSON.stringify(v)),
    ),
  );

/**
 * One model of the branches of a `oneOf`/`anyOf` that are all models: every property any branch
 * declares, typed where each branch that can hold it types it alike, else untyped (a branch holds a
 * property it does not declare only when it takes other members: `additionalProperties`); required
 * where every branch requires it.
 */
function mergedModel(branches) {
  const properties = {};
  for (const name of new Set(branches.flatMap((b) => Object.keys(b.properties)))) {
    const holders = branches.filter((b) => name in b.properties || (b.additionalProperties && b.additionalProperties !== false));
    const typed = holders.map((b) => b.properties[name]);
    const description = typed.find((t) => t?.description)?.description;
    properties[name] = typed.every((t) => t !== undefined && typingOf(t) === typingOf(typed[0]))
      ? structuredClone(sharedProperty(typed))
      : { ...(description ? { description } : {}) };
  }
  const required = branches.map((b) => b.required ?? []).reduce((all, r) => all.filter((n) => r.includes(n)));
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

/**
 * The document the generators read: the 3.0.3 variant, shaped where 4.3.1 turns a valid schema into
 * broken code, with the same wire contract (what is sent and accepted is unchanged; only how the
 * generated code types it). Each rule is listed in packages/spec/README.md:
 * - a `oneOf`/`anyOf` whose branches are all models (objects with properties) becomes one model of
 *   their properties, each typed where the branches that can hold it agree, else untyped: 4.3.1 would
 *   leave the value untyped, and Python hands over a dict (`list_proxies()` gave dicts, `p.port`
 *   raised).
 * - a `oneOf`/`anyOf` of other value types (`string | array`, `boolean | integer`) becomes an
 *   untyped schema: 4.3.1 names such a type `OneOf<types>` and never declares it (the Python models
 *   raise AttributeError, the Go package does not compile), or takes the first branch only. Untyped,
 *   Python hands over the JSON value as decoded and Go an `interface{}`. A `oneOf`/`anyOf` of
 *   `required` lists alone (which fields must be there) is dropped: it constrains, it does not type.
 * - a `$ref` to a schema that is not a model (a map, a list, a scalar, an untyped schema) is replaced
 *   by a copy of that schema: 4.3.1 loses the element type of a referenced map or list (Python types a
 *   map of lists `dict(str, list)` and then looks `list` up as a model class; Go nests a map of
 *   objects one level too deep).
 * - an object without properties that takes any member (free-form) becomes untyped too: Go nests it
 *   one level too deep when it is the value of a map (`map[string]map[string]map[string]interface{}`).
 * - an object with properties that also takes any other member (`additionalProperties: true`) keeps
 *   its properties only: Go types it as a map of maps and fails to decode a string member (the
 *   manager's `PortFieldConst.desc`).
 * - a query parameter sent as JSON text (`content: application/json`) becomes a string parameter:
 *   4.3.1 would send Python's `repr` of the model or Go's `%v` of the struct; the caller passes the
 *   JSON text, which goes on the wire as the spec says.
 * - Python only: a boolean query parameter becomes the string `true` or `false`: 4.3.1's Python client
 *   sends `str(True)`, `True`, which the services refuse as a boolean.
 */
export function generatorInput(doc30, lang) {
  const doc = structuredClone(doc30);
  const schemas = doc.components?.schemas ?? {};
  const target = (ref) => (ref.startsWith('#/components/schemas/') ? schemas[ref.slice('#/components/schemas/'.length)] : undefined);
  // Branches are read as written: shaping drops `additionalProperties: true`, which decides what a branch may hold.
  const written = structuredClone(schemas);
  const resolved = (b) =>
    b && typeof b.$ref === 'string' && b.$ref.startsWith('#/components/schemas/')
      ? written[b.$ref.slice('#/components/schemas/'.length)]
      : b;
  const shapeSchema = (s, depth = 0) => {
    if (!s || typeof s !== 'object' || depth > 64) return s;
    if (Array.isArray(s)) return s.map((x) => shapeSchema(x, depth + 1));
    if (typeof s.$ref === 'string') {
      const t = target(s.$ref);
      return t && !isModel(t) ? shapeSchema(structuredClone(t), depth + 1) : s;
    }
    for (const key of ['oneOf', 'anyOf']) {
      const branches = Array.isArray(s[key]) ? s[key].map(resolved) : [];
      if (branches.length && branches.every((b) => b?.properties && !b.allOf)) {
        delete s[key];
        Object.assign(s, mergedModel(branches));
      }
    }
    for (const key of ['oneOf', 'anyOf']) {
      if (!Array.isArray(s[key])) continue;
      if (s[key].some(isBranchOfValues)) for (const k of TYPING_KEYS) delete s[k];
      else delete s[key];
    }
    const freeForm =
      s.type === 'object' && !s.properties && !s.allOf && (s.additionalProperties === undefined || s.additionalProperties === true);
    if (freeForm) for (const k of TYPING_KEYS) delete s[k];
    // An object with properties that also takes any other member: Go types it as a map of maps
    // (`*map[string]map[string]interface{}`), which a string member fails to decode into. The named
    // properties type it; other members are ignored by both clients' decoders.
    else if (s.properties && s.additionalProperties === true) delete s.additionalProperties;
    for (const key of ['items', 'additionalProperties', 'not'])
      if (s[key] && typeof s[key] === 'object') s[key] = shapeSchema(s[key], depth + 1);
    if (Array.isArray(s.allOf)) s.allOf = s.allOf.map((x) => shapeSchema(x, depth + 1));
    if (s.properties) for (const [k, v] of Object.entries(s.properties)) s.properties[k] = shapeSchema(v, depth + 1);
    return s;
  };
  for (const [name, s] of Object.entries(schemas)) schemas[name] = shapeSchema(s);
  const visit = (node) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    for (const [k, v] of Object.entries(node)) {
      if (k === 'example' || k === 'examples' || node === doc.components) continue;
      if (k === 'schema') node[k] = shapeSchema(v);
      else visit(v);
    }
    if (lang === 'python' && node.in === 'query' && node.schema?.type === 'boolean') {
      const { description, default: dflt } = node.schema;
      node.schema = {
        type: 'string',
        enum: ['true', 'false'],
        ...(description ? { description } : {}),
        ...(dflt !== undefined ? { default: String(dflt) } : {}),
      };
      if (typeof node.example === 'boolean') node.example = String(node.example);
    }
    if (node.in && node.name && node.content?.['application/json']) {
      const media = node.content['application/json'];
      node.schema = { type: 'string', description: 'JSON text.' };
      if (media.example !== undefined && node.example === undefined) node.example = JSON.stringify(media.example);
      delete node.content;
    }
  };
  visit(doc.paths);
  for (const key of ['parameters', 'requestBodies', 'responses', 'headers']) visit(doc.components?.[key]);
  return doc;
}

/** Where the generator input of an API for a language is written, beside the clients. */
export const inputPath = (api, lang) => join(clientsDir, 'input', `${lang}-${api}.openapi-3.0.json`);

/** The PEP 621 project file of a Python client (setuptools builds it; the generator's setup.py is not written). */
function pyproject(t, title) {
  const list = (xs) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  return `[build-system]
requires = ["setuptools >= 61", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "${t.project}"
version = "${version}"
description = ${JSON.stringify(`Python client of the ${title}, generated from @zone-api/spec ${version} by openapi-generator ${generatorVersion}`)}
readme = "README.md"
requires-python = ">= 3.7"
license = { text = "MIT" }
dependencies = ${list(PYTHON_DEPENDENCIES)}

[tool.setuptools.packages.find]
include = ["${t.python}", "${t.python}.*"]
`;
}

/** A README of packages/spec/clients/<lang>/ with its placeholders filled in, the example of the API included. */
function readme(lang, api, title) {
  const t = target(lang, api);
  const env = SAMPLE_ENV[api];
  const envText = env.urlDefault
    ? `The example reads the manager's address from \`${env.url}\` (default \`${env.urlDefault}\`).`
    : `The example reads the API host from \`${env.url}\` and your API token from \`${env.token}\` (the names the reference docs' code samples use).`;
  const example = readFileSync(join(ownDir, lang, `example-${api}.${lang === 'python' ? 'py' : 'go'}`), 'utf8').trimEnd();
  const values = {
    api,
    title,
    version,
    generator: generatorVersion,
    project: t.project,
    module: lang === 'python' ? t.python : t.go.module,
    package: t.go.package,
    wheel: t.wheel,
    env: envText,
    example,
  };
  return readFileSync(join(ownDir, lang, 'README.md'), 'utf8').replace(/\{\{(\w+)\}\}/g, (m, k) => {
    if (!(k in values)) throw new Error(`packages/spec/clients/${lang}/README.md: unknown placeholder ${m}`);
    return values[k];
  });
}

/**
 * A python3 on the PATH that builds wheels: setuptools 61 or newer (PEP 621), wheel and pip. The first
 * python3 on the PATH may lack `wheel` (setuptools before 70.1 needs it for bdist_wheel); Debian's has it.
 */
function wheelBuilder() {
  const check = 'import setuptools, wheel, pip, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 61)';
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const python = join(dir, 'python3');
    if (existsSync(python) && spawnSync(python, ['-c', check], { stdio: 'ignore' }).status === 0) return python;
  }
  throw new Error(
    'no python3 on the PATH has setuptools >= 61, wheel and pip to build the Python clients: run `bash scripts/setup.sh` as root (installs Debian python3-setuptools, python3-wheel, python3-pip)',
  );
}

/** Builds the wheel of a generated Python client into wheelDir, offline (no index, no isolated build environment). */
async function buildWheel(t) {
  mkdirSync(wheelDir, { recursive: true });
  rmSync(join(wheelDir, t.wheel), { force: true });
  await run(wheelBuilder(), ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-q', '-w', wheelDir, t.dir]);
  if (!readdirSync(wheelDir).includes(t.wheel)) throw new Error(`pip built no ${t.wheel} in ${relative(root, wheelDir)}`);
}

async function generate(lang, api) {
  const t = target(lang, api);
  rmSync(t.dir, { recursive: true, force: true });
  mkdirSync(t.dir, { recursive: true });
  writeFileSync(join(t.dir, '.openapi-generator-ignore'), `${OWN_FILES[lang].join('\n')}\n`);
  // The jar is run directly: the package's bin joins its arguments into one shell command, which
  // splits a checkout path that has a space in it.
  const jar = join(root, 'node_modules/@openapitools/openapi-generator-cli/bin/openapi-generator.jar');
  const javaOpts = (process.env.JAVA_OPTS ?? '').split(/\s+/).filter(Boolean);
  await run('java', [...javaOpts, '-jar', jar, ...generatorArgs(lang, api)]);
  const title = JSON.parse(readFileSync(openapi30Path(api), 'utf8')).info.title;
  writeFileSync(join(t.dir, 'README.md'), readme(lang, api, title));
  if (lang === 'go') writeFileSync(join(t.dir, 'go.mod'), goMod(t));
  if (lang === 'python') {
    writeFileSync(join(t.dir, 'pyproject.toml'), pyproject(t, title));
    await buildWheel(t);
  }
  return t.dir;
}

/** Generates the given languages for both APIs, two generator JVMs at a time (the machines have 2 cores). */
export async function generateClients(langs = LANGS) {
  for (const api of APIS) {
    if (!existsSync(openapi30Path(api))) throw new Error(`${openapi30Path(api)} is missing: run pnpm bundle (or pnpm build) first`);
  }
  mkdirSync(join(clientsDir, 'input'), { recursive: true });
  for (const api of APIS) {
    const doc30 = JSON.parse(readFileSync(openapi30Path(api), 'utf8'));
    for (const lang of langs) writeFileSync(inputPath(api, lang), `${JSON.stringify(generatorInput(doc30, lang), null, 2)}\n`);
  }
  const jobs = langs.flatMap((lang) => APIS.map((api) => [lang, api]));
  const done = [];
  if (langs.includes('python')) wheelBuilder();
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
