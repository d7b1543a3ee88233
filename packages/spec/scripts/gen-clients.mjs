#!/usr/bin/env node
// `pnpm generate:clients [python|go ...]`: Python and Go clients of both APIs, generated with
// openapi-generator 4.3.1 (the npm package that ships its jar; runs on Java 17) from the OpenAPI 3.0.3
// variants (4.3.1 reads 3.0 only), shaped for it (generatorInput below; written beside the clients),
// into artifacts/clients/<lang>/<api>/. A build output, never committed, never edited after generation.
// What the generator gets wrong, and how the shaping avoids it, is listed in packages/spec/README.md.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
 * 4.3.1's go-experimental writes a go.mod that says `go 1.13`: below 1.17 Go loads the whole module
 * graph of x/oauth2, which fails offline. The generator is told to skip it and this one is written.
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

/**
 * The document the generators read: the 3.0.3 variant, shaped where 4.3.1 turns a valid schema into
 * broken code, with the same wire contract (what is sent and accepted is unchanged; only how the
 * generated code types it). Each rule is listed in packages/spec/README.md:
 * - a `oneOf`/`anyOf` of value types (`string | array`, `boolean | integer`, two models) becomes an
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
  const shapeSchema = (s, depth = 0) => {
    if (!s || typeof s !== 'object' || depth > 64) return s;
    if (Array.isArray(s)) return s.map((x) => shapeSchema(x, depth + 1));
    if (typeof s.$ref === 'string') {
      const t = target(s.$ref);
      return t && !isModel(t) ? shapeSchema(structuredClone(t), depth + 1) : s;
    }
    for (const key of ['oneOf', 'anyOf']) {
      if (!Array.isArray(s[key])) continue;
      if (s[key].some(isBranchOfValues)) for (const k of TYPING_KEYS) delete s[k];
      else delete s[key];
    }
    const freeForm =
      s.type === 'object' && !s.properties && !s.allOf && (s.additionalProperties === undefined || s.additionalProperties === true);
    if (freeForm) for (const k of TYPING_KEYS) delete s[k];
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
