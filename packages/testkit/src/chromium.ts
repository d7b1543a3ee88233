import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

// Headless Chromium for the suites that drive a page (the reference docs, the real manager's web
// interface): Debian's chromium, found on the PATH (or CHROMIUM_PATH); `bash scripts/setup.sh` installs it.

export const CHROMIUM =
  process.env.CHROMIUM_PATH ?? (spawnSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).stdout.trim() || 'chromium');

export interface LaunchedChromium {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/** Chromium with a fresh profile of its own; without the browser it throws and says how to install it. */
export async function launchChromium(name: string, viewport: { width: number; height: number }): Promise<LaunchedChromium> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: run \`bash scripts/setup.sh\` as root (it installs Debian's chromium), or set CHROMIUM_PATH`);
  const profile = mkdtempSync(join(tmpdir(), `zone-api-${name}-`));
  try {
    const context = await chromium.launchPersistentContext(profile, {
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
      viewport,
    });
    return {
      context,
      close: async () => {
        await context.close().catch(() => undefined);
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}
