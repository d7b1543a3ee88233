import { constants, createPrivateKey, generateKeyPair, type KeyObject, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { promisify } from 'node:util';
import forge from 'node-forge';

// The certificate authority of the sandbox's SSL analyzing: made when the sandbox starts (keys by
// node's crypto, certificates by node-forge), its certificate handed out by `GET /__sandbox/ca`. A
// port with `ssl: true` terminates the TLS of a CONNECT with a certificate for the target's name,
// signed by this CA, as the real manager does with its own. One key serves every host's certificate.

const keyPair = promisify(generateKeyPair);
const signInPool = promisify(sign);
const DAY = 86_400_000;
/** Certificates kept, by name: past them the oldest goes (a client may send any number of SNI names). */
export const CERTIFICATES_KEPT = 1000;

async function rsaKeys() {
  return keyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

/** forge's own step that `cert.sign` takes (x509.js 1141), which its type declarations leave out. */
interface TbsMaker {
  getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1;
}

interface Issued {
  key: string;
  cert: string;
  context: SecureContext;
}

export class SandboxCa {
  /** Certificates issued or being issued, by name (at most CERTIFICATES_KEPT): one signing per name. */
  private readonly issued = new Map<string, Promise<Issued>>();
  private serial = 1;
  private readonly caKey: KeyObject;

  private constructor(
    /** The CA certificate, PEM: what a client trusts to read through an SSL-analyzing port. */
    readonly certificate: string,
    private readonly caCert: forge.pki.Certificate,
    caKeyPem: string,
    private readonly leafKeyPem: string,
    private readonly leafPublic: forge.pki.rsa.PublicKey,
  ) {
    this.caKey = createPrivateKey(caKeyPem);
  }

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
  async contextFor(host: string, now = Date.now()): Promise<SecureContext> {
    return (await this.issue(host, now)).context;
  }

  /** The key and certificate (PEM) for `host`, for a server's default credentials. */
  async pemFor(host: string, now = Date.now()): Promise<{ key: string; cert: string }> {
    const { key, cert } = await this.issue(host, now);
    return { key, cert };
  }

  private issue(host: string, now: number): Promise<Issued> {
    const h = host.replace(/^\[|\]$/g, '').toLowerCase();
    const known = this.issued.get(h);
    if (known) return known;
    const made = this.sign(h, now);
    // A signing that failed is not kept: the next handshake for the name tries again.
    made.catch(() => this.issued.get(h) === made && this.issued.delete(h));
    if (this.issued.size >= CERTIFICATES_KEPT) this.issued.delete(this.issued.keys().next().value as string);
    this.issued.set(h, made);
    return made;
  }

  /**
   * A certificate for `h` signed by the CA. The signature (an RSA private-key operation) is made by OpenSSL
   * in node's thread pool, not on the event loop: signed there one after another, names sent by a client
   * in TLS handshakes (200, each its own) held the manager API 3.4 s (issue 39). What forge's `cert.sign`
   * does (x509.js 1128-1147), with the signature made apart: the algorithm named, the TBSCertificate in DER.
   */
  private async sign(h: string, now: number): Promise<Issued> {
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
    cert.signatureOid = cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption as string;
    cert.tbsCertificate = (forge.pki as unknown as TbsMaker).getTBSCertificate(cert);
    const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
    const signature = await signInPool('sha256', tbs, { key: this.caKey, padding: constants.RSA_PKCS1_PADDING });
    cert.signature = signature.toString('binary');
    const pem = forge.pki.certificateToPem(cert);
    return { key: this.leafKeyPem, cert: pem, context: createSecureContext({ key: this.leafKeyPem, cert: pem }) };
  }
}

/** A TLS server's SNICallback: the CA's certificate for the name the client asked for, once it is signed. */
export const sniFrom =
  (ca: SandboxCa) =>
  (name: string, done: (err: Error | null, context?: SecureContext) => void): void => {
    ca.contextFor(name).then(
      (context) => done(null, context),
      (err: Error) => done(err),
    );
  };
