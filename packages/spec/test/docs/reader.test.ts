import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiName, listOperations, loadBundle, type Operation, repoRoot } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { SAMPLE_LANGS } from '../../scripts/samples.mjs';
import { pageUrl, pickSample, shots, showOperation, useBrowser } from './browser.js';

// What a reader of the reference pages needs beyond the operations themselves, each looked at in the
// browser: code samples whole at every width from 1024 px, server descriptions as plain text, the
// permissions as the bundle states them, samples that start where paging starts, and the editor's
// hover links (generated into @zone-api/spec/<api>) landing on their operation in the shipped page.

const browser = useBrowser();
const labels = SAMPLE_LANGS.map((l) => l.label);
const WIDTHS = [1024, 1280, 1400, 1920];

type Sample = { lang: string; label: string; source: string };
const samplesOf = (o: Operation) => (o.op['x-codeSamples'] ?? []) as Sample[];
const longestLine = (o: Operation) => Math.max(0, ...samplesOf(o).flatMap((s) => s.source.split('\n').map((l) => l.length)));

describe.each(['account', 'manager'] as ApiName[])('%s reference page, as a reader needs it', (api) => {
  const doc = loadBundle(api);
  const ops = listOperations(doc);
  const file = `${api}.html`;

  it('shows each code sample whole at widths from 1024 px: long lines wrap, nothing runs past its box or the window', async () => {
    browser.ready();
    // The operation whose samples have the longest line (a curl line of 300-odd characters).
    const target = [...ops].sort((a, b) => longestLine(b) - longestLine(a))[0] as Operation;
    expect(longestLine(target)).toBeGreaterThan(120);
    const page = await browser.context.newPage();
    const cut: string[] = [];
    let measured = 0;
    try {
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        const section = await showOperation(page, file, target.operationId);
        for (const label of labels) {
          await pickSample(page, section, labels, label);
          const box = await section
            .getByTestId('source-code')
            .first()
            .evaluate((el) => ({
              scroll: el.scrollWidth,
              client: el.clientWidth,
              right: el.getBoundingClientRect().right,
              window: el.ownerDocument.documentElement.clientWidth,
            }));
          measured++;
          if (box.scroll > box.client + 1 || box.right > box.window)
            cut.push(`${width} px, ${label}: ${box.scroll} px of text in a ${box.client} px box ending at ${Math.round(box.right)} px`);
        }
        if (width === 1400) await page.screenshot({ path: join(shots, `${api}-samples-wrapped.png`) });
      }
    } finally {
      await page.close();
    }
    expect(measured).toBe(WIDTHS.length * labels.length);
    expect(cut).toEqual([]);
  });

  it('shows each server with its description as plain text, no markdown backticks', async () => {
    browser.ready();
    const target = ops[0] as Operation;
    const page = await browser.context.newPage();
    try {
      const section = await showOperation(page, file, target.operationId);
      // The endpoint above the samples opens the list of servers, each with its description.
      await section.getByText(target.path, { exact: true }).first().click();
      const items = section.locator('[data-component-name="Dropdown/DropdownMenuItem"]').filter({ hasText: target.path });
      await items.first().waitFor({ timeout: 10_000 });
      const shown = (await items.allTextContents()).map((t) => t.replace(/\s+/g, ' '));
      const servers = (doc.servers ?? []) as Array<{ description?: string }>;
      expect(shown).toHaveLength(servers.length);
      for (const s of servers) {
        const start = (s.description ?? '').replace(/\s+/g, ' ').replace(/`/g, '').slice(0, 40);
        expect(
          shown.some((t) => t.includes(start)),
          start,
        ).toBe(true);
      }
      expect(shown.filter((t) => t.includes('`'))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('lists the permissions each operation needs as the bundle states them (x-permissions), under Authentication', async () => {
    browser.ready();
    const page = await browser.open(file);
    try {
      await page.getByTestId('menu-item-label').first().waitFor({ timeout: 30_000 });
      const menu = (await page.getByTestId('menu-item-label').allTextContents()).map((l) => l.trim());
      const permitted = ops.filter((o) => o.facts.permissions.length);
      if (!permitted.length) {
        expect(menu).not.toContain('Permissions');
        return;
      }
      expect(menu).toContain('Permissions');
      await page
        .getByTestId('menu-item-label')
        .filter({ hasText: /^Permissions$/ })
        .first()
        .click();
      // The renderer gives each heading of the introduction a section: `/section/<heading in lower case>`.
      const section = page.locator('[data-section-id="/section/permissions"]').first();
      await section.waitFor({ timeout: 10_000 });
      const listed = await section.locator('li').allTextContents();
      const want = permitted.map((o) => `${o.operationId} (${o.method.toUpperCase()} ${o.path}): ${o.facts.permissions.join(', ')}`);
      expect(listed.map((l) => l.replace(/\s+/g, ' ').trim())).toEqual(want);
      // The introduction's Extensions section names no operation's permissions itself (one home: the list above).
      const intro = ((await page.locator('[data-section-id="/section/extensions"]').first().textContent()) ?? '').replace(/\s+/g, ' ');
      expect(intro).toContain('x-permissions');
      for (const o of permitted) expect(intro).not.toContain(o.path);
    } finally {
      await page.close();
    }
  });

  it("shows paged operations' samples starting where paginate starts (page or offset 0)", async () => {
    browser.ready();
    const paged = ops.filter((o) => o.facts.pagination);
    expect(paged.length).toBeGreaterThan(0);
    const page = await browser.context.newPage();
    const starts: Record<string, string | undefined> = {};
    try {
      for (const o of paged) {
        const p = o.facts.pagination as { style: string; page?: string; offset?: string };
        const position = (p.style === 'page' ? p.page : p.offset) as string;
        const section = await showOperation(page, file, o.operationId);
        await pickSample(page, section, labels, SAMPLE_LANGS[0]?.label as string);
        const code = (await section.getByTestId('source-code').first().textContent()) ?? '';
        const sent = code.match(new RegExp(`\\b${position}: (\\d+)`));
        starts[o.operationId] = sent ? sent[1] : `(no ${position} in the sample)`;
      }
    } finally {
      await page.close();
    }
    expect(starts).toEqual(Object.fromEntries(paged.map((o) => [o.operationId, '0'])));
  });

  it("lands each of the editor's hover links on its operation in the page @zone-api/spec ships", async () => {
    browser.ready();
    const pkgDir = join(repoRoot, 'packages/spec');
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    const dts = readFileSync(join(pkgDir, 'generated', `${api}.d.ts`), 'utf8');
    const links = [...dts.matchAll(/reference: `@zone-api\/spec\/(docs\/[\w-]+\.html)#operation\/(\w+)`/g)].map((m) => ({
      subpath: m[1] as string,
      operationId: m[2] as string,
    }));
    // One link per operation, each to a file the exports map gives and the package's files include.
    expect(links.map((l) => l.operationId).sort()).toEqual(ops.map((o) => o.operationId).sort());
    const target = String(pkg.exports['./docs/*.html']);
    expect(pkg.files).toContain('dist/docs/*.html');
    const files = new Set(links.map((l) => target.replace('*', l.subpath.slice('docs/'.length, -'.html'.length))));
    expect([...files]).toEqual([`./dist/docs/${api}.html`]);
    // In the browser, the link's fragment opens its operation: the first and the last of the page.
    const page = await browser.context.newPage();
    try {
      for (const l of [links[0], links[links.length - 1]] as Array<{ operationId: string }>) {
        await page.goto(pageUrl(file, `#operation/${l.operationId}`));
        const op = ops.find((o) => o.operationId === l.operationId) as Operation;
        const section = page.locator(`[data-section-id$="/${l.operationId.toLowerCase()}"]`).first();
        await section.waitFor({ timeout: 15_000 });
        await expect.poll(() => section.locator('h2').first().textContent()).toContain(op.op.summary);
        const inView = () =>
          section.evaluate((el) => {
            const r = el.getBoundingClientRect();
            return r.top < el.ownerDocument.documentElement.clientHeight && r.bottom > 0;
          });
        await expect.poll(inView).toBe(true);
      }
    } finally {
      await page.close();
    }
  });
});

describe('offline', () => {
  it('no page made a request off the machine', () => {
    browser.ready();
    expect(browser.offsite).toEqual([]);
  });
});
