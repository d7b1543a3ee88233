// @ts-check
// Plain JavaScript, so that the build scripts and the benchmark (run by node as they are) share it
// with the TypeScript suites.
import { createServer } from 'node:net';

/**
 * A free TCP port on loopback, found by binding port 0 and closing. Tests and tools never use fixed ports.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
