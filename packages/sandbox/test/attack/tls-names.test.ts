import { pbkdf2, X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { SandboxCa } from '../../src/traffic/ca.js';
import { useTrafficSandbox } from '../helpers.js';

// Finding 5 of the hardening round three: 200 TLS handshakes to the network, each with an SNI name of its
// own and no credential, had a certificate signed for each name on the event loop (30-90 ms each): the
// manager API waited 3.4 s. Each certificate's signature is now made in node's thread pool (traffic/ca.ts).
// Shown without timing anything: while every thread of the pool is held by other work, a certificate for
// a new name does not come, and the event loop runs on meanwhile; it comes once a thread is free.
const t = useTrafficSandbox();

/**
 * Holds every thread of libuv's pool (UV_THREADPOOL_SIZE, 4 by default) with a key derivation each:
 * `free` settles when the first of them is done (a thread free again), `all` when every one is.
 */
function holdThreadPool(): { free: Promise<void>; all: Promise<void> } {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const jobs = Array.from(
    { length: threads },
    () => new Promise<void>((resolve, reject) => pbkdf2('held', 'salt', 400_000, 32, 'sha256', (err) => (err ? reject(err) : resolve()))),
  );
  return { free: Promise.race(jobs), all: Promise.all(jobs).then(() => undefined) };
}

/** A TLS handshake to loopback `port` asking for `servername`: the certificate the server presented. */
function handshake(port: number, servername: string, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, servername, ca }, () => {
      const cert = s.getPeerX509Certificate();
      s.destroy();
      if (cert) resolve(cert);
      else reject(new Error(`no certificate for ${servername}`));
    });
    s.once('error', reject);
  });
}

describe('certificates for SNI names are signed off the event loop', () => {
  it("a new name's certificate waits for the thread pool, the event loop turning meanwhile; a known name's does not", async () => {
    const ca = await SandboxCa.create();
    const order: string[] = [];
    const pool = holdThreadPool();
    const held = pool.free.then(() => order.push('a thread free'));
    const made = ca.contextFor('new-name.example').then(() => order.push('certificate'));
    // Turns of the event loop (timers, immediates) while the certificate waits for a thread.
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
    order.push('loop turned');
    await Promise.all([held, made, pool.all]);
    expect(order).toEqual(['loop turned', 'a thread free', 'certificate']);
    // Known now: the same context, without the pool (held again, it is answered before a thread is free).
    const first = await ca.contextFor('new-name.example');
    const poolAgain = holdThreadPool();
    const again = poolAgain.free.then(() => order.push('a thread free again'));
    const known = await ca.contextFor('NEW-NAME.example');
    order.push('known');
    expect(known).toBe(first);
    await Promise.all([again, poolAgain.all]);
    expect(order.slice(3)).toEqual(['known', 'a thread free again']);
    // What was signed apart is a certificate of the CA for the name.
    const { cert } = await ca.pemFor('new-name.example');
    const x509 = new X509Certificate(cert);
    const authority = new X509Certificate(ca.certificate);
    expect(x509.checkIssued(authority)).toBe(true);
    expect(x509.verify(authority.publicKey)).toBe(true);
    expect(x509.subjectAltName).toBe('DNS:new-name.example');
  });

  it('handshakes on the network, a name each, finish only once a thread of the pool is free, each with a certificate for its name', async () => {
    const ca = (await t.sandbox.caCertificate()) as string;
    const port = Number(new URL(t.sandbox.networkUrl as string).port);
    // The network's TLS server is up (its own certificate signed) before the pool is held.
    await handshake(port, 'warm.example', ca);
    const order: string[] = [];
    const pool = holdThreadPool();
    const held = pool.free.then(() => order.push('a thread free'));
    const names = Array.from({ length: 6 }, (_, i) => `sni-${i}.example`);
    const shaken = names.map((name) =>
      handshake(port, name, ca).then((cert) => {
        order.push('handshake');
        return cert;
      }),
    );
    // The manager API answers while they wait.
    const version = await fetch(`${t.sandbox.managerUrl}/api/version`);
    expect(version.status).toBe(200);
    const certs = await Promise.all(shaken);
    await Promise.all([held, pool.all]);
    expect(order).toEqual(['a thread free', ...names.map(() => 'handshake')]);
    expect(certs.map((c) => c.subjectAltName)).toEqual(names.map((n) => `DNS:${n}`));
  });
});
