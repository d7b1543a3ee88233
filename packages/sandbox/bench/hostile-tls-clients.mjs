// The clients of the tls-names row (hostile-clients.mjs), in a process of their own so that the manager
// API's answers are timed by a process that does not also run 200 TLS handshakes: `n` handshakes to loopback
// `port`, each asking for a name of its own (SNI), all at once. Prints how many completed and how long all took.
import { connect } from 'node:tls';

const [port, n, run] = process.argv.slice(2);
const started = performance.now();
const shaken = await Promise.all(
  Array.from(
    { length: Number(n) },
    (_, i) =>
      new Promise((resolve) => {
        const s = connect({ host: '127.0.0.1', port: Number(port), servername: `n${i}-${run}.example`, rejectUnauthorized: false }, () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
        s.setTimeout(60_000, () => {
          s.destroy();
          resolve(false);
        });
      }),
  ),
);
process.send({ done: shaken.filter(Boolean).length, ms: performance.now() - started });
