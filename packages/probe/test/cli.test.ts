import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Sandbox, startSandbox } from '@zone-api/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startStandIn } from './stand-in.js';

// The command as a user runs it (the compiled bin; `pnpm build` first): the token from the environment,
// the report in two files, nothing secret on the terminal.

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const TOKEN = 'sandbox-token-0001';

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
});
afterAll(() => sandbox?.close());

describe('zone-api-probe', () => {
  it('probes the account API with the token from the environment and writes both reports, redacted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probe-cli-'));
    const out = join(dir, 'report');
    const r = await run(
      [
        'account',
        '--base-url',
        sandbox.accountUrl,
        '--customer',
        'hl_1a2b3c4d',
        '--only',
        'getBalance,getAccountStatus,createZone',
        '--max-per-minute',
        '99',
        '--out',
        out,
      ],
      { ZONE_API_TOKEN: TOKEN },
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('2 calls, 0 findings, 1 not called');
    const md = readFileSync(`${out}.md`, 'utf8');
    const json = JSON.parse(readFileSync(`${out}.json`, 'utf8'));
    expect(json.exchanges.map((e: { operationId: string }) => e.operationId)).toEqual(['getBalance', 'getAccountStatus']);
    expect(md).toContain('`createZone` | changes state');
    for (const text of [md, JSON.stringify(json), r.out]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain('hl_1a2b3c4d');
    }
  });

  it('exits 1 when an answer breaks the spec', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probe-cli-'));
    // A service whose getZone carries two fields the spec does not declare.
    const offSpec = await startStandIn({ '/api/zone': json({ ips: ['any'], password: ['p'], plans: [], surprise: 1, other: 2 }) });
    try {
      const r = await run(
        ['account', '--base-url', offSpec.url, '--customer', 'hl_1a2b3c4d', '--only', 'getZone', '--out', join(dir, 'r')],
        {
          ZONE_API_TOKEN: TOKEN,
        },
      );
      expect(r.code).toBe(1);
      expect(r.out).toContain('1 calls, 2 findings (extra-field)');
    } finally {
      await offSpec.close();
    }
  });

  it('reaches nothing without --base-url, and refuses a pace at the documented limit', async () => {
    const none = await run(['account'], { ZONE_API_TOKEN: TOKEN });
    expect(none.code).toBe(2);
    expect(none.err).toContain('--base-url is required');
    const fast = await run(['account', '--base-url', sandbox.accountUrl, '--max-per-minute', '100'], { ZONE_API_TOKEN: TOKEN });
    expect(fast.code).toBe(2);
    expect(fast.err).toContain('not below the documented limit of 100 requests a minute');
    expect(fast.err).not.toContain(TOKEN);
  });
});
