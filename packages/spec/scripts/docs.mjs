#!/usr/bin/env node
// `pnpm docs:build`: reference docs of each bundle, rendered by Redocly into one self-contained HTML page
// (--inlineBundle: the renderer is embedded, so the page works offline and from file://), plus an
// index page linking them, in packages/spec/dist/docs/. Needs the bundles (`pnpm bundle`). The
// parity matrix (packages/spec/parity/manager.md, written by `pnpm test:real-manager`) becomes a page
// of its own, linked from the index.
//
// What the page shows beyond the bundle as published (readerEdition): an Authentication section (every
// security scheme, its header and who takes it) and a Pagination section in the introduction, how to
// walk each paged operation with `paginate` on the operation itself, each operation's operationId at
// the head of its description (so the page's search finds `getZone`), and every `x-observed: true`
// mark as a visible "Observed" badge, and under each description whose object has `x-observed-source`
// a source note naming it (where the fact shows: a program's file and line). The page makes no request off the machine: the renderer's one
// remote asset, its attribution logo, is replaced by an inline image (offline).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marked } from 'marked';
import { loadBundle, operations } from '../model/index.js';
import { apis, distDir, isMain, quiet, root, tool } from './lib.mjs';

export const docsDir = join(distDir, 'docs');

const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

/** The label and colour of the badge that marks what is known only from the real service. */
export const OBSERVED_BADGE = { name: 'Observed', color: '#8a5a00' };
const OBSERVED_TITLE = "Known from the real service (x-observed), not from the provider's documentation";
/** The class of the source note a page shows under a description whose object carries `x-observed-source`. */
export const SOURCE_NOTE_CLASS = 'x-observed-source-note';

/**
 * The source note of an object's `x-observed-source`: where the fact shows (a program's file and line, a
 * client's), rendered under its description, so that the description states behaviour and the spec keeps
 * the citation in one place.
 */
export function sourceNote(sources) {
  const list = (Array.isArray(sources) ? sources : [sources]).map((s) => `<code>${escapeHtml(s)}</code>`).join('; ');
  return `<small class="${SOURCE_NOTE_CLASS}">Source: ${list}</small>`;
}

const OBSERVED_HTML = `<span class="x-observed-badge" title="${OBSERVED_TITLE}" style="background:#fff3cd;color:#6b4f00;border:1px solid #e0c36c;border-radius:4px;padding:0 .4em;font-size:.8em;font-weight:600">${OBSERVED_BADGE.name}</span>`;

/**
 * The bundle as the reference page shows it (a copy; the published bundle is not changed): each
 * operation's description starts with its operationId, and each object marked `x-observed: true`
 * carries a badge: the renderer's `x-badges` on schemas and parameters, and an inline badge at the
 * head of the description of a response (which the renderer gives no badges).
 */
export function readerEdition(source, api = 'account') {
  const doc = structuredClone(source);
  const ops = operations(doc);
  // First the source notes, so that each stays with its own description (the introduction's sections follow).
  const noteSources = (node, isMap) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) noteSources(item, false);
      return;
    }
    if (!isMap && node['x-observed-source'] !== undefined && typeof (node.description ?? '') === 'string') {
      node.description = `${(node.description ?? '').trimEnd()}\n\n${sourceNote(node['x-observed-source'])}`.trimStart();
    }
    for (const [key, value] of Object.entries(node)) noteSources(value, !isMap && MAPS.has(key) && !Array.isArray(value));
  };
  noteSources(doc, false);
  for (const op of ops) {
    const o = doc.paths[op.path][op.method];
    const paged = op.facts.pagination ? `\n\n${pagingOf(api, op)}` : '';
    o.description = `**operationId** \`${op.operationId}\`${o.description ? `\n\n${o.description}` : ''}${paged}`;
  }
  doc.info.description = `${(doc.info.description ?? '').trimEnd()}\n\n${authenticationSection(doc, ops)}\n\n${paginationSection(api, ops)}\n`;
  // `kind` is the key the object sits under (`responses`, `parameters`, `properties`, ...): for the
  // entries of a map (keyed by names or statuses) and of a list, the map's or the list's own key.
  const walk = (node, kind, isMap) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) walk(item, kind, false);
      return;
    }
    if (!isMap && node['x-observed'] === true) {
      if (kind === 'responses') node.description = `${OBSERVED_HTML} ${node.description ?? ''}`.trimEnd();
      else node['x-badges'] = [...(node['x-badges'] ?? []), OBSERVED_BADGE];
    }
    for (const [key, value] of Object.entries(node)) {
      if (isMap) walk(value, kind, false);
      else walk(value, key, MAPS.has(key) && !Array.isArray(value));
    }
  };
  walk(doc, '', false);
  return doc;
}
/**
 * The Authentication section of a page (a heading in the introduction, so the navigation lists it and
 * its search finds it): every security scheme of the bundle, the header it sends, the operations that
 * take it, and its own description, which holds the facts.
 */
function authenticationSection(doc, ops) {
  const schemes = Object.entries(doc.components?.securitySchemes ?? {});
  const lines = ['## Authentication', ''];
  if (!schemes.length) return `${lines.join('\n')}No operation of this API takes a credential.`;
  lines.push("How a call proves who makes it: the `Authorization` header or the scheme's own header, as below.", '');
  for (const [name, scheme] of schemes) {
    const header =
      scheme.type === 'http' && scheme.scheme === 'bearer'
        ? '`Authorization: Bearer <token>`'
        : scheme.type === 'http' && scheme.scheme === 'basic'
          ? '`Authorization: Basic <base64 of user:password>`'
          : scheme.type === 'apiKey'
            ? `\`${scheme.name}: <value>\` (${scheme.in})`
            : `\`${scheme.type}\``;
    const users = ops.filter((op) => op.security.some((r) => name in r)).map((op) => op.operationId);
    const deprecated = scheme['x-deprecated'] ? ' (deprecated)' : '';
    lines.push(`### ${name}${deprecated}`, '', `Sends ${header}.`, '');
    lines.push(
      users.length === ops.length ? 'Taken by every operation.' : `Taken by: ${users.map((u) => `\`${u}\``).join(', ') || 'no operation'}.`,
      '',
    );
    lines.push(String(scheme.description ?? '').trim(), '');
  }
  const permitted = ops.filter((op) => op.facts.permissions.length);
  if (permitted.length) {
    lines.push(
      '### Permissions',
      '',
      'Operations that need an account permission beyond a valid credential (`x-permissions`, also the roles of their `security` requirements); without it the call fails with `403`:',
      '',
    );
    for (const op of permitted)
      lines.push(
        `- \`${op.operationId}\` (\`${op.method.toUpperCase()} ${op.path}\`): ${op.facts.permissions.map((p) => `\`${p}\``).join(', ')}`,
      );
  }
  return lines.join('\n').trimEnd();
}

/** How to walk one paged operation with the typed client's `paginate`. */
function pagingOf(api, op) {
  const p = op.facts.pagination;
  // The client variable as the code samples name it: `account`, `manager`.
  const client = api;
  const [pos, size] = p.style === 'page' ? [p.page, p.size] : [p.offset, p.limit];
  return `**Pagination** (\`x-pagination\`, ${p.style} style): \`${pos}\` and \`${size}\` page the results. The typed client walks every page and yields each record: \`for await (const item of ${client}.paginate('${op.operationId}', { params: { query: { … } } }))\`. It starts at the query's own \`${pos}\`, else 0, and stops on a short or empty page${p.total ? ' or at the total the response reports' : ''}.`;
}

/** The Pagination section of a page: the paged operations and how to walk them. */
function paginationSection(api, ops) {
  const paged = ops.filter((op) => op.facts.pagination);
  const lines = ['## Pagination', ''];
  if (!paged.length) return `${lines.join('\n')}No operation of this API is paged.`;
  lines.push('The operations below return their results in pages (`x-pagination` in the spec).', '');
  for (const op of paged) lines.push(`- \`${op.operationId}\` (\`${op.method.toUpperCase()} ${op.path}\`): ${pagingOf(api, op)}`);
  return lines.join('\n');
}

// Objects whose keys are names or statuses: their values are of the kind the object's own key says.
const MAPS = new Set(['responses', 'parameters', 'schemas', 'properties', 'headers', 'patternProperties']);

/**
 * The renderer sets code samples `white-space: pre` in a scrolling box: in its two-column layout (from
 * about 1,100 px) the right panel is narrower than a sample's long lines, which were cut at the box's
 * edge (a curl line of listRequestLogs at 1,400 px). Long lines wrap instead; the browser test measures
 * each sample at widths from 1,024 px.
 */
const SAMPLE_STYLE =
  '<style>pre[data-testid="source-code"][data-component-name="CodeBlock/CodeBlockContainer"] { white-space: pre-wrap; overflow-wrap: anywhere; }</style>';

// The renderer loads its attribution logo from its CDN; the page shows this inline mark instead.
const REMOTE_LOGOS = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
const INLINE_LOGO = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="16"><text x="0" y="12" font-family="sans-serif" font-size="12" fill="#666">Redocly</text></svg>',
)}`;

export async function buildDocs() {
  mkdirSync(docsDir, { recursive: true });
  const pages = [];
  const work = mkdtempSync(join(tmpdir(), 'zone-api-docs-'));
  try {
    for (const api of apis()) {
      const doc = loadBundle(api.name);
      const file = `${api.name}.html`;
      const title = `${doc.info.title} ${doc.info.version}`;
      const edition = join(work, `${api.name}.openapi.json`);
      writeFileSync(edition, JSON.stringify(readerEdition(doc, api.name)));
      const out = join(docsDir, file);
      const res = await tool('redocly', ['build-docs', edition, '--inlineBundle', '--title', title, '-o', out]);
      if (!res.ok) {
        console.error(quiet(res.out));
        throw new Error(`docs of ${api.id} failed`);
      }
      const html = readFileSync(out, 'utf8');
      if (!REMOTE_LOGOS.test(html))
        throw new Error(`docs of ${api.id}: the renderer's remote logo was not found; check the page for remote requests`);
      if (!html.includes('</head>')) throw new Error(`docs of ${api.id}: no </head> to add the code samples' style to`);
      writeFileSync(out, html.replace(REMOTE_LOGOS, INLINE_LOGO).replace('</head>', `${SAMPLE_STYLE}\n</head>`));
      pages.push({ file, doc });
      console.log(`docs     ${api.id} -> packages/spec/dist/docs/${file}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const extras = [];
  const parity = join(root, 'packages/spec/parity/manager.md');
  if (existsSync(parity)) {
    writeFileSync(
      join(docsDir, 'parity-manager.html'),
      markdownPage('Parity: the sandbox against the real manager', readFileSync(parity, 'utf8')),
    );
    extras.push({
      file: 'parity-manager.html',
      title: 'Parity: the sandbox against the real local proxy manager',
      summary:
        "Every manager operation as the real program answered it, validated against the spec, beside the sandbox's answer and the reason for each difference.",
    });
    console.log('docs     parity -> packages/spec/dist/docs/parity-manager.html');
  }
  writeFileSync(join(docsDir, 'index.html'), indexPage(pages, extras));
  console.log('docs     index -> packages/spec/dist/docs/index.html');
}

const STYLE = `body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; padding: 0 1rem; color: #1b1b1b; }
    li { margin: 0 0 1.25rem; list-style: none; } ul { padding: 0; }
    a { font-size: 1.2rem; font-weight: 600; } span { color: #666; } p { margin: .25rem 0 0; }`;

/** A markdown document (the parity matrix) as a standalone page; its tables get room and borders. */
function markdownPage(title, markdown) {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)}</title>
  <style>
    body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem; color: #1b1b1b; }
    table { border-collapse: collapse; } th, td { border: 1px solid #ccc; padding: .25rem .5rem; text-align: left; vertical-align: top; }
    code { font-size: .9em; }
  </style>
</head>
<body>
<p><a href="index.html">zone-api reference</a></p>
${marked.parse(markdown)}
</body>
</html>
`;
}

function indexPage(pages, extras = []) {
  const items = pages
    .map(({ file, doc }) => {
      const ops = operations(doc).length;
      return `    <li><a href="${file}">${escapeHtml(doc.info.title)}</a> <span>${escapeHtml(doc.info.version)} · ${ops} operations</span>
      <p>${escapeHtml(doc.info.summary ?? '')}</p></li>`;
    })
    .concat(extras.map((e) => `    <li><a href="${e.file}">${escapeHtml(e.title)}</a>\n      <p>${escapeHtml(e.summary)}</p></li>`))
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>zone-api reference</title>
  <style>
    ${STYLE}
  </style>
</head>
<body>
  <h1>zone-api reference</h1>
  <ul>
${items}
  </ul>
</body>
</html>
`;
}

if (isMain(import.meta.url)) {
  try {
    await buildDocs();
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
