import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { defaultSeed, type Sandbox, startSandbox } from '@zone-api/sandbox';
import { loadBundle, type RulesTarget, repoRoot, startRulesTarget, viaProxy } from '@zone-api/testkit';
import { type LaunchedChromium, launchChromium } from '@zone-api/testkit/chromium';
import { realManagerPackageDir } from '@zone-api/testkit/real-manager';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Conformance } from '../helpers.js';

// The real manager's own web interface (the files its package ships in bin/pub, served as the real
// manager serves them: lib/mixins/web_server.js 182-184) on the sandbox's manager API, in headless
// Chromium: it starts past its login screen, lists the ports, creates one, bans an IP with a rule and
// shows the logs. It is driven as a user drives it: opened once at its address, then only clicks, each
// step waiting on what the page shows. Every call it makes is recorded and held to the spec; a call the
// sandbox does not serve, or answers in a way the spec does not declare, or a script error of the
// page, fails. Nothing leaves loopback: any other request is aborted and recorded. Without Chromium or
// the package's files the suite fails and says why; a failed step leaves a screenshot in
// artifacts/web-ui/ and prints what the page logged as errors.

const PUB = join(realManagerPackageDir(), 'bin/pub');
const shots = join(repoRoot, 'artifacts/web-ui');
const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'application/javascript',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.png': 'image/png',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
};

interface Call {
  method: string;
  path: string;
  status: number;
  media: string | null;
  /** Null when the page let go of the answer before its body could be read (it navigated away). */
  body: string | null;
}

let sandbox: Sandbox;
let context: BrowserContext;
let page: Page;
let browser: LaunchedChromium | undefined;
let target: RulesTarget | undefined;
const calls: Call[] = [];
/** Each API answer's head as it arrives ("GET /api/defaults 200"), before its body is read. */
const heads: string[] = [];
const pending: Promise<void>[] = [];
const offsite: string[] = [];
/** What the page logged as errors (its attempts to reach the Internet and its WebSocket among them). */
const errors: string[] = [];
/** The page's script errors: uncaught, or caught by its React error boundary and logged. */
const scriptErrors: string[] = [];
/**
 * A race of the Bootstrap 5.3.3 bundled in the interface, not an answer of the sandbox: a tooltip
 * disposed while its hide transition runs nulls its fields, and the transition's end then calls
 * `Object.values(this._activeTrigger)` (twbs/bootstrap#37474). It fires when a click removes the
 * element a tooltip was shown for, depending on timing; these are kept apart and printed, not failed.
 */
const bootstrapTooltipRace = (stack: string) =>
  /^TypeError: Cannot convert undefined or null to object\n\s+at Object\.values \(<anonymous>\)\n\s+at Tooltip\._isWithActiveTrigger /.test(
    stack,
  );
const tooltipRaces: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(PUB, 'index.html')))
    throw new Error(`the real manager's web interface is not in ${PUB}: \`pnpm test:real-manager\` installs the package`);
  target = await startRulesTarget();
  sandbox = await startSandbox({
    accountPort: 0,
    managerPort: 0,
    networkPort: 0,
    proxyPorts: true,
    freeProxyPorts: true,
    seed: defaultSeed(),
  });
  const origin = new URL(sandbox.managerUrl).origin;
  browser = await launchChromium('web-ui', { width: 1400, height: 1000 });
  context = browser.context;
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== origin) {
      offsite.push(url.href);
      return route.abort('internetdisconnected');
    }
    // The API is the sandbox's own; the rest is the package's files, else its page.
    if (url.pathname.startsWith('/api/')) return route.continue();
    const file = normalize(join(PUB, decodeURIComponent(url.pathname)));
    if (file.startsWith(PUB + sep) && extname(file) && existsSync(file))
      return route.fulfill({ status: 200, contentType: TYPES[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) });
    return route.fulfill({ status: 200, contentType: 'text/html', body: readFileSync(join(PUB, 'index.html')) });
  });
  context.on('response', (res) => {
    const url = new URL(res.url());
    if (url.origin !== origin || !url.pathname.startsWith('/api/')) return;
    heads.push(`${res.request().method()} ${url.pathname} ${res.status()}`);
    pending.push(
      res
        .text()
        .catch(() => null)
        .then((body) => {
          calls.push({
            method: res.request().method(),
            path: url.pathname + url.search,
            status: res.status(),
            media: res.headers()['content-type'] ?? null,
            body,
          });
        }),
    );
  });
  page = await context.newPage();
  page.on('pageerror', (e) => {
    const stack = e.stack ?? e.message;
    errors.push(stack);
    (bootstrapTooltipRace(stack) ? tooltipRaces : scriptErrors).push(stack);
  });
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    errors.push(`console: ${m.text()}`);
    if (/^\w*Error: /.test(m.text())) scriptErrors.push(m.text());
  });
}, 120_000);

// What the page showed when a step failed, for the CI artifacts.
afterEach(async ({ task }) => {
  if (task.result?.state !== 'fail' || !page) return;
  console.error(`the page's errors so far:\n${errors.join('\n')}`);
  mkdirSync(shots, { recursive: true });
  await page
    .screenshot({ path: join(shots, `${task.name.replace(/[^\w]+/g, '-').slice(0, 60)}.png`), fullPage: true })
    .catch(() => undefined);
});

afterAll(async () => {
  await browser?.close();
  await sandbox?.close();
  await target?.close();
});

/** The calls recorded so far (their bodies read). */
async function recorded(): Promise<Call[]> {
  await Promise.all(pending);
  return calls;
}

const api = async (path: string) => (await fetch(`${sandbox.managerUrl}${path}`)).json();

let created: number;

describe('the real manager’s web interface on the sandbox, in headless Chromium', () => {
  it('starts past its login screen and lists the ports', { timeout: 180_000 }, async () => {
    await page.goto(sandbox.managerUrl);
    // Logged in (GET /api/mode), it stays on its dashboard and is not sent to /login.
    await page.getByText('Proxy Manager Dashboard').waitFor({ timeout: 60_000 });
    const ports = ((await api('/api/proxies_running')) as Array<{ port: number }>).map((p) => p.port);
    expect(ports.length).toBeGreaterThan(1);
    const table = page.locator('.proxies_panel');
    for (const port of ports)
      await expect.poll(() => table.getByText(String(port), { exact: true }).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(new URL(page.url()).pathname).not.toMatch(/login/);
    expect(await page.locator('input[type=password]').count()).toBe(0);
  });

  it('creates a port with its "Add new port" form', async () => {
    const before = new Set(((await api('/api/proxies')) as Array<{ port: number }>).map((p) => p.port));
    await page.getByText('Add new port', { exact: true }).click();
    const modal = page.locator('#add_new_proxy_modal');
    // A residential Zone: the network lets this loopback client through it (the default static Zone's whitelist does not).
    await modal.locator('select:has(option[value="res_zone"])').selectOption('res_zone');
    await modal.getByRole('button', { name: 'Next' }).click();
    await modal.getByRole('button', { name: 'Create proxy port' }).click();
    const congrats = modal.getByText(/You've created a new port: \d+/);
    await congrats.waitFor({ timeout: 30_000 });
    created = Number(/(\d+)$/.exec(((await congrats.textContent()) ?? '').trim())?.[1]);
    expect(before.has(created)).toBe(false);
    const stored = (await api('/api/proxies')) as Array<{ port: number; zone?: string }>;
    expect(stored.find((p) => p.port === created)).toMatchObject({ port: created, proxy_type: 'persist', zone: 'res_zone' });
    expect((await recorded()).some((c) => c.method === 'POST' && c.path.startsWith('/api/proxies') && c.status === 200)).toBe(true);
    // Its last step's button closes it.
    await modal.getByRole('button', { name: 'Close', exact: true }).click();
    await modal.waitFor({ state: 'hidden', timeout: 30_000 });
  });

  it('bans an IP: a "Ban IP" rule saved in the port’s Rules tab bans the peer of the request it matches, and the port’s banned IPs list shows it', {
    timeout: 180_000,
  }, async () => {
    // From the overview to the port's page, as a user goes: a click on the new port in the ports table.
    // The port's page copies the manager-wide defaults into its form when it mounts
    // (src/pub/proxy_edit/index.js 221-225, set_default_mgr_proxy_shared_fields), so the interface
    // must have read GET /api/defaults first: opened by its URL, the page can mount before that answer
    // and fails ("reading 'debug'"), a race of the real interface that a user coming from the overview
    // does not meet. The dashboard asked at start-up; wait until it was answered.
    await expect.poll(() => heads, { timeout: 30_000 }).toContain('GET /api/defaults 200');
    await page.locator('.proxies_panel').getByText(String(created), { exact: true }).first().click();
    await page.getByText(`Proxy on port ${created}`).waitFor({ timeout: 30_000 });
    expect(new URL(page.url()).pathname).toMatch(new RegExp(`^/proxy/${created}(/|$)`));
    await page.getByText('Rules', { exact: true }).first().click();
    await page.getByText('New custom rule', { exact: true }).waitFor({ timeout: 30_000 });
    // Ban IP actions need request details (the port's `debug`); where the tab warns that they are off,
    // its "Request details" link turns them on (src/pub/proxy_edit/rules.js 263-278).
    const details = page.getByText('Request details', { exact: true });
    if (await details.isVisible()) await details.click();
    await page.getByText('New custom rule', { exact: true }).click();
    const rule = page.locator('.rule_wrapper').first();
    await rule.click();
    await rule.locator('select:has(option[value="status"])').selectOption('status');
    const status = rule.locator('.react_select__control').first();
    await status.click();
    await page.locator('.react_select__option', { hasText: /^503$/ }).click();
    await rule.locator('select:has(option[value="ban_ip"])').selectOption('ban_ip');
    await page.getByText('Save changes', { exact: true }).click();
    // It asks first ("Accept save changes", src/pub/proxy_edit/index.js 507-515): yes. Saved, it says so.
    const confirm = page.locator('#save_port_confirmation_modal');
    await confirm.getByRole('button', { name: 'Yes', exact: true }).click();
    await page.getByText('Port changes saved').waitFor({ timeout: 30_000 });
    const stored = ((await api('/api/proxies')) as Array<{ port: number; rules?: unknown[] }>).find((p) => p.port === created);
    expect(stored?.rules).toEqual([
      expect.objectContaining({ action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'status', status: '503' }),
    ]);
    expect((await recorded()).some((c) => c.method === 'PUT' && c.path === `/api/proxies/${created}` && c.status === 200)).toBe(true);
    // A request the rule matches: answered, its exit peer banned on the port until lifted.
    const res = await viaProxy(`http://127.0.0.1:${created}`, `${target?.url}/through-the-ui-port?st=503`);
    expect(res.status, res.text).toBe(503);
    const peer = res.headers['x-brd-ip'] as string;
    expect(peer).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(await api(`/api/banlist/${created}`)).toEqual({ ips: [peer] });
    // The rule's "Currently banned IPs" link, under its ban duration, opens the port's banned IPs page.
    await rule.getByText('Currently banned IPs', { exact: true }).click();
    await page.waitForURL(`**/proxy/${created}/logs/banned_ips`, { timeout: 30_000 });
    await expect.poll(() => page.getByText(peer, { exact: true }).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect((await recorded()).some((c) => c.method === 'GET' && c.path.startsWith(`/api/banlist/${created}`) && c.status === 200)).toBe(
      true,
    );
  });

  it('shows the logs: the request through the new port is in its request log', { timeout: 120_000 }, async () => {
    // Back to the overview with the side menu's Overview link; its request log is at the bottom.
    await page.locator('a[href="/overview"]:has(.menu_item)').click();
    await page.waitForURL('**/overview', { timeout: 30_000 });
    await expect.poll(() => page.getByText(/through-the-ui-port/).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect((await recorded()).some((c) => c.method === 'GET' && c.path.startsWith('/api/logs?') && c.status === 200)).toBe(true);
  });

  it('every call it made was one the sandbox serves, answered as the spec declares', async () => {
    const all = await recorded();
    const conformance = new Conformance(loadBundle('manager'));
    const paths = new Set(all.map((c) => `${c.method} ${c.path.split('?')[0]}`));
    // The interface's start-up reads and what the steps above did.
    expect(paths.size).toBeGreaterThan(20);
    for (const needed of [
      'GET /api/mode',
      'GET /api/proxies_running',
      'POST /api/proxies',
      'GET /api/logs',
      'GET /api/all_carriers',
      'GET /api/i18n',
    ])
      expect([...paths]).toContain(needed);
    const read = all.filter((c) => c.body !== null);
    expect(read.length).toBeGreaterThan(all.length / 2);
    const problems = read.flatMap((c) => conformance.check(c.method, `http://x${c.path}`, c.status, c.media, c.body as string));
    expect(problems).toEqual([]);
    expect(all.filter((c) => c.status >= 400).map((c) => `${c.method} ${c.path} ${c.status} ${(c.body ?? '').slice(0, 200)}`)).toEqual([]);
    // No script of the interface failed on an answer of the sandbox.
    if (tooltipRaces.length)
      console.log(`the interface's own Bootstrap tooltip race (twbs/bootstrap#37474), ${tooltipRaces.length}x: set aside`);
    expect(scriptErrors).toEqual([]);
    // The only request off loopback is the icon font's stylesheet of its page, aborted.
    expect([...new Set(offsite)]).toEqual(['https://use.fontawesome.com/releases/v6.7.2/css/all.css']);
  });
});
