import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { guardLog, realClientDir, realClientsCacheDir } from '@zone-api/testkit/real-clients';
import { describe, expect, it } from 'vitest';
import { calls, TOKEN, useRealClients } from './harness.js';

// @brightdata/mcp 2.11.3, unmodified, started over stdio by an MCP client (the SDK it ships with): at
// start-up it lists the Zones and creates its default ones; its browser tools read the account status
// and the browser Zone's passwords. Its axios calls reach the sandbox through HTTPS_PROXY.
const t = useRealClients();

type McpClient = {
  connect(transport: unknown): Promise<void>;
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(req: {
    name: string;
    arguments: Record<string, unknown>;
  }): Promise<{ isError?: boolean; content: { type: string; text?: string }[] }>;
  close(): Promise<void>;
};

/** Starts the MCP server over stdio and waits for its start-up (the Zones) to end: the client, its stderr so far, and a stop. */
async function startServer(extra: Record<string, string> = {}) {
  const sdk = join(realClientsCacheDir(), 'node_modules/@modelcontextprotocol/sdk/dist/esm/client');
  const { Client } = (await import(pathToFileURL(join(sdk, 'index.js')).href)) as { Client: new (info: object) => McpClient };
  const { StdioClientTransport } = (await import(pathToFileURL(join(sdk, 'stdio.js')).href)) as {
    StdioClientTransport: new (o: object) => { stderr: NodeJS.ReadableStream | null };
  };
  const { env, home } = t.home({ API_TOKEN: TOKEN, GROUPS: 'browser', ...extra });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(realClientDir('mcp'), 'server.js')],
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const client = new Client({ name: 'zone-api-real-clients', version: '1.0.0' });
  await client.connect(transport);
  return { client, home, stderr: () => stderr, stop: () => client.close() };
}

const text = (r: { content: { type: string; text?: string }[] }) =>
  r.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

describe('the provider MCP server (@brightdata/mcp 2.11.3) over stdio', () => {
  it('starts with its default Zones: creates mcp_unlocker (unblocker, ub_premium) and mcp_browser (browser_api), then finds them', async () => {
    const first = await startServer();
    const tools = (await first.client.listTools()).tools.map((x) => x.name);
    await first.stop();
    expect(first.stderr()).toContain('Zone "mcp_unlocker" created successfully');
    expect(first.stderr()).toContain('Zone "mcp_browser" created successfully');
    expect(first.stderr()).not.toContain('Error checking/creating zones');
    expect(tools).toContain('scraping_browser_navigate');
    expect(calls(t.proxy)).toEqual(['GET /zone/get_active_zones 200', 'POST /zone 201', 'POST /zone 201']);
    const listed = t.sandbox.state().account.zones.filter((z) => z.name.startsWith('mcp_'));
    expect(listed.map((z) => [z.name, z.plans[0]?.type, z.plans[0]?.ub_premium])).toEqual([
      ['mcp_unlocker', 'unblocker', true],
      ['mcp_browser', 'browser_api', undefined],
    ]);

    expect(t.proxy.refused).toEqual([]);
  });

  it('started again it finds its Zones; its browser tool reads the account status and the Zone passwords, and a missing Zone is the 422 it names', async () => {
    let from = t.proxy.exchanges.length;
    const server = await startServer();
    expect(server.stderr()).toContain('Required zone "mcp_unlocker" already exists');
    expect(server.stderr()).toContain('Required zone "mcp_browser" already exists');
    expect(calls(t.proxy, from)).toEqual(['GET /zone/get_active_zones 200']);

    // With the Zone there: the credentials it builds come from the sandbox; what fails is the browser
    // connection to the provider's browser host, which the guard refused (not the account API).
    from = t.proxy.exchanges.length;
    const present = await server.client.callTool({ name: 'scraping_browser_navigate', arguments: { url: 'https://example.com/' } });
    expect(calls(t.proxy, from)).toEqual(['GET /status 200', 'GET /zone/passwords 200']);
    expect(present.isError).toBe(true);
    expect(text(present)).not.toContain('Error retrieving browser credentials');
    expect(guardLog(server.home).join('\n')).toMatch(/brd\.superproxy\.io/);
    expect(guardLog(server.home).join('\n')).not.toMatch(/api\.brightdata\.com/);

    // The Zone deleted behind the server's back (as in the control panel); a session for another country
    // makes it read the credentials again: the 422 it reads as "does not exist".
    const del = await fetch(`${t.sandbox.accountUrl}/zone`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ zone: 'mcp_browser' }),
    });
    expect(del.status).toBe(200);
    from = t.proxy.exchanges.length;
    const missing = await server.client.callTool({
      name: 'scraping_browser_navigate',
      arguments: { url: 'https://example.com/', country: 'de' },
    });
    await server.stop();
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("Browser zone 'mcp_browser' does not exist");
    expect(calls(t.proxy, from)).toEqual(['GET /status 200', 'GET /zone/passwords 422']);
    expect(t.proxy.refused).toEqual([]);
  });
});
