import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { useSandbox } from '../helpers.js';

// The root README's sandbox example, run as written (only its URL points at this test's sandbox):
// the quick start a new user copies must work, and must do what its comment says.
const t = useSandbox();
const dir = mkdtempSync(join(repoRoot, 'packages/sandbox/test/.readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function readmeExample(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const match = readme.match(/<!-- readme-example: sandbox[^>]*-->\s*```ts\n([\s\S]*?)```/);
  if (!match?.[1]) throw new Error('README.md has no `readme-example: sandbox` code block');
  return match[1];
}

describe('the README quick example', () => {
  it('creates a Zone, adds IPs, whitelists an IP and reads them back against the sandbox', async () => {
    const code = readmeExample();
    expect(code).toContain("baseUrl: 'http://127.0.0.1:8787'");
    const file = join(dir, 'example.ts');
    writeFileSync(file, code.replace('http://127.0.0.1:8787', t.sandbox.accountUrl));
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    await import(/* @vite-ignore */ file);
    const [newIps, ips, whitelist] = log.mock.calls[0] as [string[], { ips: Array<{ ip: string }> }, Record<string, string[]>];
    log.mockRestore();

    expect(newIps).toHaveLength(2);
    expect(ips.ips.map((r) => r.ip).sort()).toEqual([...newIps].sort());
    expect(whitelist).toEqual({ my_zone: ['198.51.100.1', '203.0.113.7'] });
    expect(t.sandbox.state().account.zones.some((z) => z.name === 'my_zone')).toBe(true);
  });
});
