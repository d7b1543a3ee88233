import { join } from 'node:path';
import { type ApiName, listOperations, loadBundle, type Operation, resolvePointer } from '@zone-api/testkit';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { OBSERVED_BADGE, SOURCE_NOTE_CLASS } from '../../scripts/docs.mjs';
import { SAMPLE_LANGS } from '../../scripts/samples.mjs';
import { pageUrl, pickSample, shots, useBrowser } from './browser.js';

// The reference docs as a reader sees them (browser.ts): every operation, its samples, the search,
// the Observed badges, the Authentication and Pagination sections, the index and the parity page.
// What a reader needs beyond that (whole samples, server texts, permissions, links) is in reader.test.ts.

const browser = useBrowser();
const { ready, offsite } = browser;
const open = (file: string) => browser.open(file);

/** Scrolls a lazily rendered operation into view and reads its heading; the node is replaced while it renders. */
async function heading(section: ReturnType<Page['locator']>): Promise<string | null> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    await section.scrollIntoViewIfNeeded({ timeout: 2_000 }).catch(() => undefined);
    const text = await section
      .locator('h2')
      .first()
      .textContent({ timeout: 1_000 })
      .catch(() => null);
    if (text !== null) return text.trim();
  }
  return null;
}

const searchTarget: Record<ApiName, string> = { account: 'getAvailableIpCount', manager: 'createProxy' };
// Found by its operationId alone (`getZone` is also the start of other operationIds).
const idTarget: Record<ApiName, string> = { account: 'getZone', manager: 'listProxies' };

describe.each(['account', 'manager'] as ApiName[])('%s reference page', (api) => {
  const doc = loadBundle(api);
  const ops = listOperations(doc);
  let page: Page & { errors: string[] };

  beforeAll(async () => {
    try {
      ready();
      page = await open(`${api}.html`);
      await page.getByTestId('menu-item-label').first().waitFor({ timeout: 30_000 });
    } catch {
      // Each test calls ready(), which throws the setup's error; a page that did not open fails them too.
    }
  }, 60_000);

  it('shows the API title and version', async () => {
    ready();
    await expect.poll(() => page.locator('h1').first().textContent()).toContain(doc.info.title);
    expect(await page.title()).toBe(`${doc.info.title} ${doc.info.version}`);
    await page.screenshot({ path: join(shots, `${api}.png`) });
  });

  it('renders every operation of the bundle under its tag, headed by its summary (and the deprecated badge)', async () => {
    ready();
    // The page renders an operation when it scrolls into view: each one is scrolled to and read.
    const got: Record<string, string | null> = {};
    const sampled: Record<string, boolean> = {};
    let listed = 0;
    for (const tag of doc.tags as Array<{ name: string }>) {
      await page
        .getByTestId('menu-item-label')
        .filter({ hasText: new RegExp(`^${tag.name}$`) })
        .first()
        .click();
      const tagged = ops.filter((op) => op.op.tags?.includes(tag.name));
      const first = page.locator(`[data-section-id$="/${tagged[0]?.operationId.toLowerCase()}"]`).first();
      await first.waitFor({ state: 'attached', timeout: 15_000 });
      const slug = ((await first.getAttribute('data-section-id')) ?? '').replace(/\/[^/]*$/, '');
      listed += await page.locator(`[data-section-id^="${slug}/"]`).count();
      for (const o of tagged) {
        const id = o.operationId.toLowerCase();
        const section = page.locator(`[data-section-id="${slug}/${id}"]`);
        if ((await section.count()) === 0) {
          got[id] = null;
          continue;
        }
        got[id] = await heading(section);
        // Beside it, the first of its code samples: the call of the typed client's method of that name.
        const code = await section
          .getByTestId('source-code')
          .first()
          .textContent({ timeout: 5_000 })
          .catch(() => '');
        sampled[id] = (code ?? '').includes(`.${o.operationId}(`);
      }
    }
    // A deprecated operation's heading ends with the renderer's "deprecated" badge.
    const want = ops.map((o) => [o.operationId.toLowerCase(), o.op.deprecated ? `${o.op.summary} deprecated` : o.op.summary]);
    expect(got).toEqual(Object.fromEntries(want));
    expect(listed).toBe(ops.length);
    expect(sampled).toEqual(Object.fromEntries(ops.map((o) => [o.operationId.toLowerCase(), true])));
  });

  it('shows the code samples of an operation beside it: the TypeScript client, curl and Python, each its own source', async () => {
    ready();
    const target = ops.find((o) => o.operationId === searchTarget[api]) as Operation;
    const samples = target.op['x-codeSamples'] as Array<{ lang: string; label: string; source: string }>;
    await page.goto(`${pageUrl(`${api}.html`)}#operation/${target.operationId.toLowerCase()}`);
    const section = page.locator(`[data-section-id$="/${target.operationId.toLowerCase()}"]`).first();
    await section.waitFor({ timeout: 15_000 });
    await section.scrollIntoViewIfNeeded();
    const code = section.getByTestId('source-code').first();
    const shown: Record<string, string> = {};
    for (const { label } of SAMPLE_LANGS) {
      await pickSample(
        page,
        section,
        SAMPLE_LANGS.map((l) => l.label),
        label,
      );
      shown[label] = ((await code.textContent()) ?? '').trim();
    }
    const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
    expect(Object.fromEntries(Object.entries(shown).map(([k, v]) => [k, norm(v)]))).toEqual(
      Object.fromEntries(samples.map((s) => [s.label, norm(s.source)])),
    );
    await page.screenshot({ path: join(shots, `${api}-samples.png`) });
  });

  it('shows each operationId, and search finds an operation by it', async () => {
    ready();
    const target = ops.find((o) => o.operationId === idTarget[api]) as Operation;
    await page.goto(`${pageUrl(`${api}.html`)}#operation/${target.operationId.toLowerCase()}`);
    const section = page.locator(`[data-section-id$="/${target.operationId.toLowerCase()}"]`).first();
    await section.scrollIntoViewIfNeeded();
    await expect.poll(() => section.getByTestId('middle-panel').nth(1).textContent()).toContain(`operationId ${target.operationId}`);
    await page.getByTestId('search-trigger').click();
    const input = page.getByTestId('search-dialog').locator('input');
    await input.fill(target.operationId);
    const hit = page.locator(`[data-component-name="Search/SearchItem"][href$="/${target.operationId.toLowerCase()}"]`).first();
    await hit.waitFor({ timeout: 15_000 });
    expect(await hit.textContent()).toContain(target.path);
    await page.keyboard.press('Escape');
  });

  it('shows x-observed marks as an Observed badge: on a response and on a field', async () => {
    ready();
    // The first operation with an observed response, and an observed field of a schema it answers with.
    const marked = (o: Operation) => o.responses.find((r) => resolvePointer(doc, r.pointer)?.['x-observed'] === true);
    const target = ops.find((o) => marked(o)) as Operation;
    expect(target, `no operation of the ${api} bundle has an x-observed response`).toBeDefined();
    const status = marked(target)?.status as string;
    await page.goto(`${pageUrl(`${api}.html`)}#operation/${target.operationId.toLowerCase()}`);
    const section = page.locator(`[data-section-id$="/${target.operationId.toLowerCase()}"]`).first();
    await section.waitFor({ timeout: 15_000 });
    await section.scrollIntoViewIfNeeded();
    const responses = section.getByTestId('middle-panel').filter({ hasText: 'Responses' });
    await responses.getByText(status, { exact: true }).first().click();
    const badge = section.locator('.x-observed-badge').first();
    await expect.poll(() => badge.isVisible()).toBe(true);
    expect(await badge.textContent()).toBe(OBSERVED_BADGE.name);
    await page.screenshot({ path: join(shots, `${api}-observed.png`) });
    // A parameter: the renderer's badge named Observed, beside the first observed parameter's name.
    const param = ops
      .flatMap((o) => o.parameters.map((p) => ({ o, p })))
      .find(({ p }) => p.definition['x-observed'] === true || p.schema?.['x-observed'] === true);
    expect(param, `no parameter of the ${api} bundle is x-observed`).toBeDefined();
    const { o, p } = param as { o: Operation; p: Operation['parameters'][number] };
    await page.goto(`${pageUrl(`${api}.html`)}#operation/${o.operationId.toLowerCase()}`);
    const paramSection = page.locator(`[data-section-id$="/${o.operationId.toLowerCase()}"]`).first();
    await paramSection.waitFor({ timeout: 15_000 });
    await paramSection.scrollIntoViewIfNeeded();
    // The renderer's badge (a Tag, not the inline badge of responses) in the row that the parameter's name starts.
    const tagged = () =>
      paramSection
        .locator('[data-component-name="Tag/Tag"]')
        .filter({ hasText: new RegExp(`^${OBSERVED_BADGE.name}$`) })
        .evaluateAll((tags) => tags.map((t) => t.parentElement?.textContent ?? ''));
    await expect.poll(async () => (await tagged()).some((row) => row.startsWith(p.name) && row.endsWith(OBSERVED_BADGE.name))).toBe(true);
  });

  it("shows x-observed-source as a source note under the description, whose prose cites no program's lines", async () => {
    ready();
    // An operation whose own object names its sources, else one with such a parameter.
    const sourcesOf = (node: unknown): string[] | undefined => {
      const s = (node as { 'x-observed-source'?: string | string[] } | undefined)?.['x-observed-source'];
      return s === undefined ? undefined : Array.isArray(s) ? s : [s];
    };
    const onOp = ops.find((o) => sourcesOf(o.op));
    const onParam = ops.flatMap((o) => o.parameters.map((p) => ({ o, p }))).find(({ p }) => sourcesOf(p.definition));
    const found = onOp ? { target: onOp, node: onOp.op } : onParam ? { target: onParam.o, node: onParam.p.definition } : undefined;
    if (!found) throw new Error(`no operation or parameter of the ${api} bundle has x-observed-source`);
    const sources = sourcesOf(found.node) ?? [];
    const target = found.target;
    const { description } = found.node as { description?: string };
    expect(description ?? '').not.toMatch(/[\w.-]\.(?:js|mjs|cjs|ts|py)(?::| lines? | )\d/);
    const id = target.operationId.toLowerCase();
    await page.goto(`${pageUrl(`${api}.html`)}#operation/${id}`);
    const section = page.locator(`[data-section-id$="/${id}"]`).first();
    await section.waitFor({ timeout: 15_000 });
    await section.scrollIntoViewIfNeeded();
    const note = section.locator(`.${SOURCE_NOTE_CLASS}`).first();
    await expect.poll(() => note.isVisible()).toBe(true);
    const text = (await note.textContent()) ?? '';
    expect(text.startsWith('Source: ')).toBe(true);
    expect(sources.length).toBeGreaterThan(0);
    for (const s of sources) expect(text).toContain(s);
    await note.screenshot({ path: join(shots, `${api}-source-note.png`) });
  });

  it('has Authentication (each security scheme) and Pagination in the navigation, and the search finds them', async () => {
    ready();
    const labels = (await page.getByTestId('menu-item-label').allTextContents()).map((l) => l.trim());
    const schemes = Object.keys(doc.components?.securitySchemes ?? {});
    expect(schemes.length).toBeGreaterThan(0);
    expect(labels).toEqual(expect.arrayContaining(['Authentication', 'Pagination']));
    for (const name of schemes)
      expect(
        labels.some((l) => l.startsWith(name)),
        name,
      ).toBe(true);
    const search = async (query: string) => {
      await page.getByTestId('search-trigger').click();
      const input = page.getByTestId('search-dialog').locator('input');
      await input.fill(query);
      const hits = page.locator('[data-component-name="Search/SearchItem"]');
      await hits.first().waitFor({ timeout: 15_000 });
      const found = await hits.evaluateAll((els) => els.map((e) => `${e.getAttribute('href')} ${e.textContent}`));
      await page.keyboard.press('Escape');
      return found;
    };
    // The section's own words: the header a credential goes in.
    expect((await search('Authorization')).length).toBeGreaterThan(0);
    // Each paged operation says how to walk it with paginate, and the search leads there.
    const paged = ops.filter((o) => o.facts.pagination);
    expect(paged.length).toBeGreaterThan(0);
    const hits = await search('paginate');
    for (const op of paged)
      expect(
        hits.some((h) => h.includes(op.operationId.toLowerCase())),
        op.operationId,
      ).toBe(true);
  });

  it('search finds an operation by its summary and opens it', async () => {
    ready();
    const target = ops.find((o) => o.operationId === searchTarget[api]);
    if (!target) throw new Error(`${searchTarget[api]} is not in the ${api} bundle`);
    await page.getByTestId('search-trigger').click();
    const input = page.getByTestId('search-dialog').locator('input');
    await input.fill(target.op.summary);
    const hit = page.locator(`[data-component-name="Search/SearchItem"][href$="/${target.operationId.toLowerCase()}"]`).first();
    await hit.waitFor({ timeout: 15_000 });
    expect(await hit.textContent()).toContain(target.path);
    await page.screenshot({ path: join(shots, `${api}-search.png`) });
    await hit.click();
    const section = page.locator(`[data-section-id$="/${target.operationId.toLowerCase()}"]`);
    await expect.poll(() => section.locator('h2').first().textContent()).toContain(target.op.summary);
    expect(page.url()).toContain(`/${target.operationId.toLowerCase()}`);
    await page.screenshot({ path: join(shots, `${api}-operation.png`) });
  });

  it('threw no script error', () => {
    ready();
    expect(page.errors).toEqual([]);
  });
});

describe('index page', () => {
  it('links the reference pages (both APIs and the sandbox control API) and the parity matrix', async () => {
    ready();
    const page = await open('index.html');
    const links = await page.locator('a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    expect(links).toEqual([
      [loadBundle('account').info.title, 'account.html'],
      [loadBundle('manager').info.title, 'manager.html'],
      [loadBundle('sandbox-control').info.title, 'sandbox-control.html'],
      ['Parity: the sandbox against the real local proxy manager', 'parity-manager.html'],
    ]);
    await page.screenshot({ path: join(shots, 'index.png') });
    await page.getByText(loadBundle('manager').info.title).click();
    await page.getByTestId('menu-item-label').first().waitFor({ timeout: 30_000 });
    expect(page.url()).toMatch(/manager\.html/);
  });
});

describe('sandbox control API reference page', () => {
  it('shows its title and version, and every operation of its bundle by its summary, without an Observed badge', async () => {
    ready();
    const doc = loadBundle('sandbox-control');
    const page = await open('sandbox-control.html');
    await page.getByTestId('menu-item-label').first().waitFor({ timeout: 30_000 });
    expect(await page.title()).toBe(`${doc.info.title} ${doc.info.version}`);
    const ops = listOperations(doc);
    expect(ops.length).toBe(15);
    const html = await page.content();
    for (const op of ops) expect(html, op.operationId).toContain(`"operationId":"${op.operationId}"`);
    const labels = (await page.getByTestId('menu-item-label').allTextContents()).join('\n');
    for (const tag of doc.tags) expect(labels).toContain(tag.name);
    expect(html).not.toContain('x-observed-badge');
    expect(page.errors).toEqual([]);
    await page.screenshot({ path: join(shots, 'sandbox-control.png') });
  }, 90_000);
});

describe('parity page', () => {
  it('shows the matrix: one row per scenario of every manager operation, each difference with its reason', async () => {
    ready();
    const page = await open('parity-manager.html');
    const rows = await page
      .locator('table tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
    const ops = new Set(rows.map((r) => r[0]));
    expect(ops).toEqual(new Set(listOperations(loadBundle('manager')).map((o) => o.operationId)));
    expect(rows.filter((r) => !r[4])).toEqual([]);
    expect(rows.filter((r) => /not listed/.test(r[4] ?? ''))).toEqual([]);
    await page.screenshot({ path: join(shots, 'parity-manager.png'), fullPage: true });
  });
});

describe('offline', () => {
  it('no page made a request off the machine', () => {
    ready();
    expect(offsite).toEqual([]);
  });
});
