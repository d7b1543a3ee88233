import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@zone-api/testkit';
import { type LaunchedChromium, launchChromium } from '@zone-api/testkit/chromium';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, inject } from 'vitest';
import { docsDir } from '../../scripts/docs.mjs';

// The reference docs as a reader sees them, for each test file of the docs project (which runs its
// files one after another): the pages built with `pnpm docs:build` (once, by the project's global
// setup, build.setup.ts), opened in headless Chromium with
// the network cut off. Every request that is not file: or loopback is aborted and recorded.

export const shots = join(repoRoot, 'artifacts/docs');

export interface Browser {
  context: BrowserContext;
  /** Requests that went off the machine (aborted). */
  offsite: string[];
  /** Throws the setup's error, if any: a failed setup fails every test rather than skipping it. */
  ready(): void;
  /** Opens a page of the docs; its script errors collect in `errors`. */
  open(file: string): Promise<Page & { errors: string[] }>;
}

/** The file: URL of a docs page, with an optional fragment (`#operation/getZone`). */
export const pageUrl = (file: string, hash = '') => `${pathToFileURL(join(docsDir, file)).href}${hash}`;

/** Registers the setup and teardown of a file: docs built, Chromium launched with a fresh profile. */
export function useBrowser(viewport = { width: 1400, height: 1000 }): Browser {
  let launched: LaunchedChromium | undefined;
  let setupError: unknown;
  const browser: Browser = {
    context: undefined as unknown as BrowserContext,
    offsite: [],
    ready: () => {
      if (setupError) throw setupError;
    },
    async open(file) {
      const page = (await browser.context.newPage()) as Page & { errors: string[] };
      page.errors = [];
      page.on('pageerror', (e) => page.errors.push(e.message));
      await page.goto(pageUrl(file));
      return page;
    },
  };
  beforeAll(async () => {
    try {
      // Built once for the project's files by its global setup (build.setup.ts).
      const buildError = inject('docsBuildError');
      if (buildError) throw new Error(buildError);
      mkdirSync(shots, { recursive: true });
      launched = await launchChromium('docs-chromium', viewport);
      browser.context = launched.context;
      await browser.context.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (['file:', 'data:', 'blob:'].includes(url.protocol) || ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
          return route.continue();
        browser.offsite.push(url.href);
        return route.abort('internetdisconnected');
      });
    } catch (e) {
      setupError = e;
    }
  }, 120_000);
  afterAll(async () => {
    await launched?.close();
  });
  return browser;
}

/** Opens an operation of a page by its fragment and scrolls it into view; returns its section. */
export async function showOperation(page: Page, file: string, operationId: string) {
  await page.goto(pageUrl(file, `#operation/${operationId}`));
  const section = page.locator(`[data-section-id$="/${operationId.toLowerCase()}"]`).first();
  await section.waitFor({ timeout: 15_000 });
  await section.scrollIntoViewIfNeeded();
  return section;
}

/** Picks a code sample by its label in an operation's sample dropdown (the renderer shows one at a time). */
export async function pickSample(page: Page, section: ReturnType<Page['locator']>, labels: string[], label: string) {
  const picker = section.getByTestId('dropdown').filter({ hasText: new RegExp(`^(${labels.join('|')})$`) });
  // As a reader scrolls to the samples before opening the list: opened at the window's lower edge
  // (a long request body above it, in the one-column layout), its items fall below the window.
  await picker.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await picker.click();
  await page
    .locator('[data-component-name="Dropdown/DropdownMenuItem"]')
    .filter({ hasText: new RegExp(`^${label}$`) })
    .first()
    .click();
  for (let i = 0; i < 50 && (await picker.textContent()) !== label; i++) await page.waitForTimeout(100);
  if ((await picker.textContent()) !== label) throw new Error(`the sample dropdown did not switch to ${label}`);
}
