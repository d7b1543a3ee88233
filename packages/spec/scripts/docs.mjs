#!/usr/bin/env node
// `pnpm docs:build`: reference docs of each bundle, rendered by Redocly into one self-contained HTML page
// (--inlineBundle: the renderer is embedded, so the page works offline and from file://), plus an
// index page linking them, in packages/spec/dist/docs/. Needs the bundles (`pnpm bundle`). The
// parity matrix (packages/spec/parity/manager.md, written by `pnpm test:real-manager`) becomes a page
// of its own, linked from the index.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { marked } from 'marked';
import { loadBundle, bundlePath as modelBundlePath, operations } from '../model/index.js';
import { apis, distDir, isMain, quiet, root, tool } from './lib.mjs';

export const docsDir = join(distDir, 'docs');

const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

export async function buildDocs() {
  mkdirSync(docsDir, { recursive: true });
  const pages = [];
  for (const api of apis()) {
    const bundle = modelBundlePath(api.name, { ext: 'yaml' });
    const doc = loadBundle(api.name);
    const file = `${api.name}.html`;
    const title = `${doc.info.title} ${doc.info.version}`;
    const res = await tool('redocly', ['build-docs', bundle, '--inlineBundle', '--title', title, '-o', join(docsDir, file)]);
    if (!res.ok) {
      console.error(quiet(res.out));
      throw new Error(`docs of ${api.id} failed`);
    }
    pages.push({ file, doc });
    console.log(`docs     ${api.id} -> packages/spec/dist/docs/${file}`);
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
