import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultSeed, type Sandbox, startSandbox } from '@zone-api/sandbox';
import { loadBundle } from '@zone-api/testkit';
import { type DifferentialReport, runDifferential, type Step, type Target } from '@zone-api/testkit/differential';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The differential suite holds every answer of the real manager to the manager bundle (a `spec:`
// divergence when one does not validate). Here the "real manager" is the sandbox behind a relay that
// can break one answer; both sides are otherwise the same program, so the only divergence there can be
// is the spec check's. Without that check (in play.ts or compare.ts) the broken answer goes unreported.

const doc = loadBundle('manager');
let sandbox: Sandbox;
let relay: Server;
/** What the relay answers GET /api/version with instead of the sandbox's answer (undefined: the sandbox's). */
let version: string | undefined;

beforeAll(async () => {
  const seed = defaultSeed();
  Object.assign(seed.manager, { ports: [], bans: [], sessions: {}, har: [] });
  sandbox = await startSandbox({ accountPort: 0, managerPort: 0, networkPort: 0, seed });
  relay = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (version !== undefined && req.method === 'GET' && req.url === '/api/version') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(version);
      return;
    }
    const up = await fetch(`${sandbox.managerUrl}${req.url}`, {
      method: req.method,
      headers: req.headers['content-type'] ? { 'content-type': req.headers['content-type'] } : {},
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    // The sandbox's headers as they are (the comparison reads them too), but for those of the body's
    // encoding (fetch has decoded the body), which this relay's own server writes.
    const headers: Record<string, string> = {};
    up.headers.forEach((value, name) => {
      if (!['transfer-encoding', 'content-encoding'].includes(name)) headers[name] = value;
    });
    res.writeHead(up.status, headers).end(Buffer.from(await up.arrayBuffer()));
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
  await sandbox?.close();
});

const VERSION_STEP: Step = { kind: 'call', operationId: 'getVersion', method: 'GET', path: '/api/version', query: [], classes: ['valid'] };

async function run(): Promise<DifferentialReport> {
  const reset = async () => {
    sandbox.clock.reset();
    await sandbox.reset();
  };
  const wwwPort = Number(new URL(sandbox.managerUrl).port);
  const real: Target = { name: 'relay', url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, wwwPort, reset };
  const sbx: Target = { name: 'sandbox', url: sandbox.managerUrl, wwwPort, reset };
  return runDifferential({
    doc,
    real,
    sandbox: sbx,
    targetUrl: 'http://127.0.0.1:9',
    listing: [],
    seed: 1,
    runs: 1,
    maxSteps: 1,
    timeLimitMs: 60_000,
    examples: [[VERSION_STEP]],
  });
}

describe('the differential suite’s spec check', () => {
  it('a real answer that the bundle does not accept is a spec: divergence, though both sides answer alike', async () => {
    // The control: the same program on both sides, no divergence at all.
    version = undefined;
    const clean = await run();
    expect(clean.sequences).toBe(1);
    expect(clean.failure?.reproduction).toBeUndefined();
    // `version` a number, on a JSON answer whose shape is the same as the sandbox's.
    version = JSON.stringify({ version: 7, argv: '' });
    const broken = await run();
    expect(broken.failure?.divergence).toMatchObject({ operation: 'getVersion', differs: 'spec:getVersion', step: 0 });
    expect(broken.failure?.divergence.real).toMatch(/version/);
  }, 120_000);
});
