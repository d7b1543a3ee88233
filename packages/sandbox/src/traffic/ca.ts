import { constants, generateKeyPair, privateEncrypt } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { promisify } from 'node:util';
import forge from 'node-forge';

// The certificate authority of the sandbox's SSL analyzing: made when the sandbox starts (keys by
// node's crypto, certificates by node-forge), its certificate handed out by `GET /__sandbox/ca`. A
// port with `ssl: true` terminates the TLS of a CONNECT with a certificate for the target's name,
// signed by this CA, as the real manager does with its own. One key serves every host's certificate.

const keyPair = promisify(generateKeyPair);
const DAY = 86_400_000;
/** The DER head of a SHA-256 DigestInfo (RFC 8017 9.2, note 1), before the 32 bytes of the digest. */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

async function rsaKeys() {
  return keyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

export class SandboxCa {
  private readonly contexts = new Map<string, { key: string; cert: string; context: SecureContext }>();
  private serial = 1;

  private constructor(
    /** The CA certificate, PEM: what a client trusts to read through an SSL-analyzing port. */
    readonly certificate: string,
    private readonly caCert: forge.pki.Certificate,
    private readonly caKeyPem: string,
    private readonly leafKeyPem: string,
    private readonly leafPublic: forge.pki.rsa.PublicKey,
  ) {}

  static async create(now = Date.now()): Promise<SandboxCa> {
    const [ca, leaf] = await Promise.all([rsaKeys(), rsaKeys()]);
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.publicKeyFromPem(ca.publicKey);
    cert.serialNumber = '01';
    cert.validity.notBefore = new Date(now - DAY);
    cert.validity.notAfter = new Date(now + 365 * DAY);
    const name = [
      { name: 'commonName', value: 'zone-api sandbox CA' },
      { name: 'organizationName', value: 'zone-api sandbox (local testing only)' },
    ];
    cert.setSubject(name);
    cert.setIssuer(name);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ]);
    const caKey = forge.pki.privateKeyFromPem(ca.privateKey) as forge.pki.rsa.PrivateKey;
    cert.sign(caKey, forge.md.sha256.create());
    return new SandboxCa(
      forge.pki.certificateToPem(cert),
      cert,
      ca.privateKey,
      leaf.privateKey,
      forge.pki.publicKeyFromPem(leaf.publicKey) as forge.pki.rsa.PublicKey,
    );
  }

  /** A TLS context presenting a certificate for `host` (a name or an IP), signed by the CA; cached. */
  contextFor(host: string, now = Date.now()): SecureContext {
    return this.issue(host, now).context;
  }

  /** The key and certificate (PEM) for `host`, for a server's default credentials. */
  pemFor(host: string, now = Date.now()): { key: string; cert: string } {
    const { key, cert } = this.issue(host, now);
    return { key, cert };
  }

  /**
   * What forge's `sign` asks of a key: the PKCS#1 v1.5 signature of the digest it made (RFC 8017 9.2:
   * the DigestInfo of SHA-256, then the private-key operation), here by OpenSSL.
   */
  private readonly nativeSigner = {
    sign: (md: forge.md.MessageDigest): string => {
      const digest = Buffer.from(md.digest().getBytes(), 'binary');
      return privateEncrypt(
        { key: this.caKeyPem, padding: constants.RSA_PKCS1_PADDING },
        Buffer.concat([SHA256_DIGEST_INFO, digest]),
      ).toString('binary');
    },
  } as unknown as forge.pki.rsa.PrivateKey;

  private issue(host: string, now: number) {
    const h = host.replace(/^\[|\]$/g, '').toLowerCase();
    const cached = this.contexts.get(h);
    if (cached) return cached;
    const cert = forge.pki.createCertificate();
    cert.publicKey = this.leafPublic;
    cert.serialNumber = (++this.serial).toString(16).padStart(2, '0');
    cert.validity.notBefore = new Date(now - DAY);
    cert.validity.notAfter = new Date(now + 30 * DAY);
    cert.setSubject([{ name: 'commonName', value: h.slice(0, 64) }]);
    cert.setIssuer(this.caCert.subject.attributes);
    cert.setExtensions([
      { name: 'subjectAltName', altNames: [isIP(h) ? { type: 7, ip: h } : { type: 2, value: h }] },
      { name: 'extKeyUsage', serverAuth: true },
    ]);
    // Signed by OpenSSL, not by forge's RSA in JavaScript: 30-90 ms of the event loop per name, and a
    // client sending 200 names held the manager API 3.4 s (issue 39).
    cert.sign(this.nativeSigner, forge.md.sha256.create());
    const pem = forge.pki.certificateToPem(cert);
    const issued = { key: this.leafKeyPem, cert: pem, context: createSecureContext({ key: this.leafKeyPem, cert: pem }) };
    if (this.contexts.size > 1000) this.contexts.delete(this.contexts.keys().next().value as string);
    this.contexts.set(h, issued);
    return issued;
  }
}
