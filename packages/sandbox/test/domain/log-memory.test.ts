import { describe, expect, it } from 'vitest';
import { defaultSeed } from '../../src/index.js';
import { LOG_LINE_MAX, LOG_MAX } from '../../src/manager/context.js';
import { useCliSandbox } from '../cli-sandbox.js';
import { raw } from '../helpers.js';

// Memory the sandbox keeps in bounds, measured on its bin in a child process.

const { urls } = useCliSandbox(defaultSeed);

describe('memory: the general log is capped by size, not by lines', () => {
  it('1,000 restarts of 2,000 ports keep the log under LOG_MAX characters, lines cut at LOG_LINE_MAX', async () => {
    const created = await raw(urls.manager, 'POST', '/api/proxies', { body: { proxy: { port: 30000, multiply: 2000 } } });
    expect(created.status, created.text).toBe(200);
    for (let i = 0; i < 1000; i++) expect((await raw(urls.manager, 'POST', '/api/restart')).status).toBe(200);
    const log = await raw(urls.manager, 'GET', '/api/general_logs?limit=100000');
    expect(log.status).toBe(200);
    const lines = log.text.split('\n');
    expect(lines.length).toBeGreaterThan(400);
    expect(log.text.length - (lines.length - 1)).toBeLessThanOrEqual(LOG_MAX);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(LOG_LINE_MAX + 60);
    expect(lines.at(-1)).toMatch(/restart: ports 24000, 24001, 30000, 30001/);
  }, 60_000);
});
