// Code samples of every operation (`x-codeSamples`: TypeScript through the typed client, curl, and
// Python with the standard library), generated from the operation as the bundle describes it: its
// method and path, the `example` of each of its parameters, the first named example of its request
// body and its security. `pnpm bundle` writes them into the bundles; the docs show them beside each
// operation; packages/sandbox/test/samples runs every one of them against the sandbox.
//
// A sample reads where to send the call and the credential from the environment, as a user would
// run it (SAMPLE_ENV below, listed in each API's introduction), and fails loudly on an error: the
// TypeScript one throws, curl exits non-zero (--fail-with-body), Python raises HTTPError.
import { operations, parameterExample } from '../model/index.js';

/**
 * The environment a sample reads, per API: the base URL (with its default, if the API has one) and the
 * credential of each security scheme the samples use.
 */
export const SAMPLE_ENV = {
  account: { url: 'ZONE_API_BASE_URL', urlDefault: undefined, token: 'ZONE_API_TOKEN' },
  manager: { url: 'ZONE_API_MANAGER_URL', urlDefault: 'http://127.0.0.1:22999', token: 'ZONE_API_MANAGER_TOKEN' },
};

/** The typed client of each API: its package, its factory and how a token is given to it. */
const CLIENTS = {
  account: { pkg: '@zone-api/account-client', factory: 'createAccountClient', variable: 'account', tokenOption: 'auth: { token }' },
  manager: { pkg: '@zone-api/manager-client', factory: 'createManagerClient', variable: 'manager', tokenOption: 'token' },
};

/** Languages in the order the docs show them. */
export const SAMPLE_LANGS = [
  { lang: 'TypeScript', label: 'TypeScript client' },
  { lang: 'curl', label: 'curl' },
  { lang: 'Python', label: 'Python' },
];

/**
 * What one call sends: path parameters in the path, the query, the JSON body, the credential header.
 * Every parameter with an example is sent; a required one without an example is an error (the sample
 * could not run).
 */
export function sampleRequest(doc, op) {
  const path = {};
  const query = {};
  for (const p of op.parameters) {
    if (p.in !== 'path' && p.in !== 'query') continue;
    const ex = parameterExample(p);
    if (!ex) {
      if (p.required) throw new Error(`${op.operationId}: required ${p.in} parameter ${p.name} has no example to build its code sample`);
      continue;
    }
    (p.in === 'path' ? path : query)[p.name] = ex.value;
  }
  let body;
  if (op.requestBody) {
    const json = op.requestBody.content['application/json'];
    if (json?.examples.length) body = json.examples[0];
    else if (op.requestBody.required) throw new Error(`${op.operationId}: its JSON request body has no example to build its code sample`);
  }
  // The first requirement of the operation's security that names a scheme (an empty one means none).
  const requirement = op.security.find((r) => Object.keys(r).length > 0);
  const scheme = requirement ? doc.components?.securitySchemes?.[Object.keys(requirement)[0]] : undefined;
  let credential;
  if (scheme?.type === 'http' && scheme.scheme === 'bearer') credential = { header: 'Authorization', prefix: 'Bearer ' };
  else if (scheme?.type === 'apiKey' && scheme.in === 'header') credential = { header: scheme.name, prefix: '' };
  else if (scheme) throw new Error(`${op.operationId}: no code sample for the security scheme ${JSON.stringify(scheme)}`);
  const url = op.path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(String(path[name])));
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
  return { method: op.method.toUpperCase(), path, query, body, credential, url: qs ? `${url}?${qs}` : url };
}

// --- TypeScript -------------------------------------------------------------------------------------

const IDENT = /^[A-Za-z_$][\w$]*$/;

/** A value as a TypeScript literal: inline when short, else one property a line. */
function tsLiteral(value, indent = '') {
  const inline = tsInline(value);
  if (inline.length + indent.length <= 90 || value === null || typeof value !== 'object') return inline;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => `${inner}${tsLiteral(v, inner)},`).join('\n')}\n${indent}]`;
  const props = Object.entries(value).map(([k, v]) => `${inner}${tsKey(k)}: ${tsLiteral(v, inner)},`);
  return `{\n${props.join('\n')}\n${indent}}`;
}
const tsKey = (k) => (IDENT.test(k) ? k : tsString(k));
const tsString = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
function tsInline(value) {
  if (typeof value === 'string') return tsString(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(tsInline).join(', ')}]`;
  const props = Object.entries(value).map(([k, v]) => `${tsKey(k)}: ${tsInline(v)}`);
  return props.length ? `{ ${props.join(', ')} }` : '{}';
}

function typescript(api, op, req) {
  const c = CLIENTS[api];
  const env = SAMPLE_ENV[api];
  const options = [];
  const lines = [`import { ${c.factory} } from '${c.pkg}';`, ''];
  const base = `process.env.${env.url}${env.urlDefault ? ` ?? '${env.urlDefault}'` : ''}`;
  if (!env.urlDefault) {
    lines.push(`const baseUrl = process.env.${env.url};`);
    lines.push(`if (!baseUrl) throw new Error('set ${env.url} to the API host');`);
    options.push('baseUrl');
  } else options.push(`baseUrl: ${base}`);
  if (req.credential) {
    lines.push(`const token = process.env.${env.token};`);
    lines.push(`if (!token) throw new Error('set ${env.token}');`);
    options.push(c.tokenOption);
  }
  lines.push(`const ${c.variable} = ${c.factory}({ ${options.join(', ')} });`, '');
  const init = {};
  const params = {};
  if (Object.keys(req.path).length) params.path = req.path;
  if (Object.keys(req.query).length) params.query = req.query;
  if (Object.keys(params).length) init.params = params;
  if (req.body !== undefined) init.body = req.body;
  const arg = Object.keys(init).length ? tsLiteral(init) : '';
  lines.push(`const { data, error } = await ${c.variable}.${op.operationId}(${arg});`);
  // Every error of the clients has a one-line message naming the call and the field (the README's form).
  lines.push('if (error) throw new Error(error.message);');
  lines.push('console.log(data);');
  return `${lines.join('\n')}\n`;
}

// --- curl -------------------------------------------------------------------------------------------

const shSingle = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

function curl(api, _op, req) {
  const env = SAMPLE_ENV[api];
  const base = env.urlDefault ? `\${${env.url}:-${env.urlDefault}}` : `$${env.url}`;
  const parts = [`curl --fail-with-body -sS${req.method === 'GET' ? '' : ` -X ${req.method}`} "${base}${req.url}"`];
  if (req.credential) parts.push(`-H "${req.credential.header}: ${req.credential.prefix}$${env.token}"`);
  if (req.body !== undefined) {
    parts.push(`-H 'Content-Type: application/json'`);
    parts.push(`-d ${shSingle(JSON.stringify(req.body))}`);
  }
  return `${parts.join(' \\\n  ')}\n`;
}

// --- Python -----------------------------------------------------------------------------------------

function pyLiteral(value, indent = '') {
  const inline = pyInline(value);
  if (inline.length + indent.length <= 90 || value === null || typeof value !== 'object') return inline;
  const inner = `${indent}    `;
  if (Array.isArray(value)) return `[\n${value.map((v) => `${inner}${pyLiteral(v, inner)},`).join('\n')}\n${indent}]`;
  const props = Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${pyLiteral(v, inner)},`);
  return `{\n${props.join('\n')}\n${indent}}`;
}
function pyInline(value) {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyInline).join(', ')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}: ${pyInline(v)}`)
    .join(', ')}}`;
}

function python(api, _op, req) {
  const env = SAMPLE_ENV[api];
  const imports = ['os', 'urllib.request'];
  if (req.body !== undefined) imports.unshift('json');
  if (Object.keys(req.query).length) imports.push('urllib.parse');
  const lines = imports.sort().map((m) => `import ${m}`);
  lines.push('');
  lines.push(env.urlDefault ? `base_url = os.environ.get("${env.url}", "${env.urlDefault}")` : `base_url = os.environ["${env.url}"]`);
  const path = req.url.split('?')[0];
  let url = `f"{base_url}${path}"`;
  if (Object.keys(req.query).length) {
    const query = Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    lines.push(`query = urllib.parse.urlencode(${pyLiteral(query)})`);
    url = `f"{base_url}${path}?{query}"`;
  }
  const headers = [];
  if (req.credential) {
    const token = `os.environ["${env.token}"]`;
    headers.push(`"${req.credential.header}": ${req.credential.prefix ? `"${req.credential.prefix}" + ${token}` : token}`);
  }
  const args = [url, `method="${req.method}"`];
  if (req.body !== undefined) {
    lines.push(`body = ${pyLiteral(req.body)}`);
    headers.push('"Content-Type": "application/json"');
    args.push('data=json.dumps(body).encode()');
  }
  if (headers.length) args.push(`headers={${headers.join(', ')}}`);
  lines.push(`request = urllib.request.Request(\n    ${args.join(',\n    ')},\n)`);
  lines.push('with urllib.request.urlopen(request) as response:');
  lines.push('    print(response.status, response.read().decode())');
  return `${lines.join('\n')}\n`;
}

const RENDER = { TypeScript: typescript, curl, Python: python };

/** The code samples of one operation (an item of the operation model), in SAMPLE_LANGS order. */
export function codeSamplesOf(api, doc, op) {
  const req = sampleRequest(doc, op);
  return SAMPLE_LANGS.map(({ lang, label }) => ({ lang, label, source: RENDER[lang](api, op, req) }));
}

/**
 * The APIs whose operations carry no code samples: the sandbox's control API, whose samples would
 * need its credential to be optional (it is needed only beyond loopback) and its own run in the samples test.
 */
export const WITHOUT_SAMPLES = new Set(['sandbox-control']);

/** Puts `x-codeSamples` on every operation of a bundled document (changed in place); returns how many. */
export function addCodeSamples(api, doc) {
  if (WITHOUT_SAMPLES.has(api)) return 0;
  if (!CLIENTS[api]) throw new Error(`no code samples for the API ${api}`);
  const ops = operations(doc);
  for (const op of ops) doc.paths[op.path][op.method]['x-codeSamples'] = codeSamplesOf(api, doc, op);
  return ops.length;
}
