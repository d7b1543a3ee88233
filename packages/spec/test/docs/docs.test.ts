import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type ApiName, listOperations, loadBundle, repoRoot } from '@zone-api/testkit';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsDir } from '../../scripts/docs.mjs';

// The reference docs as a reader sees them: each page opened in headless Chromium with the network
// cut off. Every request that is not file: or loopback is aborted and recorded.

// Debian's chromium, found on the PATH (or CHROMIUM_PATH); `bash scripts/setup.sh` installs it.
const CHROMIUM =
  process.env.CHROMIUM_PATH ?? (spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).stdout.trim() || 'chromium');
const shots = join(repoRoot, 'artifacts/docs');
// The renderer's "API docs by Redocly" badge loads its logo from Redocly's CDN and hides the image when
// that fails; it is the one remote request the page makes, and nothing depends on it.
const DECORATIVE = /^https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg$/;

let profile: string;
let context: BrowserContext;
const offsite: string[] = [];

// A failed setup is rethrown by every test, so that it counts as failed tests rather than skipped ones.
let setupError: unknown;
const ready = () => {
  if (setupError) throw setupError;
};

beforeAll(async () => {
  try {
    if (!existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} not found: run \`bash scripts/setup.sh\` as root (it installs Debian's chromium), or set CHROMIUM_PATH`);
    // The command as the READMEs write it (a script named `docs` would run pnpm's own `docs` command).
    const build = spawnSync('pnpm', ['docs:build'], { cwd: repoRoot, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`pnpm docs:build failed (${build.status}): ${build.stdout}${build.stderr}`);
    mkdirSync(shots, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), 'zone-api-docs-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1400, height: 1000 },
    });
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (['file:', 'data:', 'blob:'].includes(url.protocol) || ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
        return route.continue();
      offsite.push(url.href);
      return route.abort('internetdisconnected');
    });
  } catch (e) {
    setupError = e;
  }
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

async function open(file: string): Promise<Page> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(pathToFileURL(join(docsDir, file)).href);
  (page as Page & { errors: string[] }).errors = errors;
  return page;
}

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

describe.each(['account', 'manager'] as ApiName[])('%s reference page', (api) => {
  const doc = loadBundle(api);
  const ops = listOperations(doc);
  let page: Page;

  beforeAll(async () => {
    if (setupError) return;
    try {
      page = await open(`${api}.html`);
      await page.getByTestId('menu-item-label').first().waitFor({ timeout: 30_000 });
    } catch (e) {
      setupError = e;
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
      }
    }
    // A deprecated operation's heading ends with the renderer's "deprecated" badge.
    const want = ops.map((o) => [o.operationId.toLowerCase(), o.op.deprecated ? `${o.op.summary} deprecated` : o.op.summary]);
    expect(got).toEqual(Object.fromEntries(want));
    expect(listed).toBe(ops.length);
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
    expect((page as Page & { errors: string[] }).errors).toEqual([]);
  });
});

describe('index page', () => {
  it('links both reference pages and the parity matrix', async () => {
    ready();
    const page = await open('index.html');
    const links = await page.locator('a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
    expect(links).toEqual([
      [loadBundle('account').info.title, 'account.html'],
      [loadBundle('manager').info.title, 'manager.html'],
      ['Parity: the sandbox against the real local proxy manager', 'parity-manager.html'],
    ]);
    await page.screenshot({ path: join(shots, 'index.png') });
    await page.getByText(loadBundle('manager').info.title).click();
    await page.getByTestId('menu-item-label').first().waitFor({ timeout: 30_000 });
    expect(page.url()).toMatch(/manager\.html/);
  });
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
  it('no page needed the network: the only off-machine request is the decorative logo', () => {
    ready();
    expect(offsite.filter((u) => !DECORATIVE.test(u))).toEqual([]);
  });
});
