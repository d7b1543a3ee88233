// Loaded with `--import` into a real client's process (the real-clients suite's MSW test): a sandbox in
// this very process that listens on no port, and the sandbox's MSW adapter, so that the client's calls
// to the provider's host are answered by it with no proxy, no socket and no base URL changed. When the
// process exits, the calls the sandbox received are written to ZONE_API_MSW_CALLS (JSON).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const sandboxDir = fileURLToPath(new URL('../../../sandbox/', import.meta.url));
const load = (file) => import(pathToFileURL(`${sandboxDir}${file}`).href);
const { startSandbox } = await load('dist/index.js');
const { sandboxHandlers } = await load('dist/in-process/msw.js');
// msw as the sandbox package resolves it (its optional peer, installed for its tests).
const { setupServer } = await import(pathToFileURL(createRequire(`${sandboxDir}package.json`).resolve('msw/node')).href);

const sandbox = await startSandbox({ listen: false });
const server = setupServer(...sandboxHandlers(sandbox));
server.listen({ onUnhandledRequest: 'error' });
process.on('exit', () => {
  if (process.env.ZONE_API_MSW_CALLS) writeFileSync(process.env.ZONE_API_MSW_CALLS, JSON.stringify(sandbox.calls()));
});
