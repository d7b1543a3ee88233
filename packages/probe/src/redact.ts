import { isIP } from 'node:net';

// What a report may not carry: every credential the probe was given, every customer id, Zone
// password, key and token it saw, and every IP address. Secrets are collected first (given, then
// learned from every answer), and only then is the report redacted as a whole, so that a secret
// learned from a late answer is also taken out of an earlier one. Each secret is taken out in every
// form a report could hold it in: as is, URL-encoded (either case of hex, `+` for spaces), JSON-escaped,
// and base64 (an `Authorization: Basic` value).

/** The kinds of secret a report names in place of the value (`[redacted:token]`). */
export type SecretKind = 'token' | 'password' | 'customer' | 'key' | 'credential' | 'ip';

/** Fields of an answer whose values are secrets, whatever the operation. */
const SECRET_FIELD =
  /pass(word)?s?$|passwd|secret|token|(api|access|private|zone)_?key|^auth(orization)?$|_auth$|cookie|credential|customer/i;
/** Values of such fields that are words of the format, not secrets (`lpm_auth: none`, a status code 200). */
const NOT_A_SECRET = /^(none|null|true|false|undefined|\d{1,3})$/i;
/** The kind a secret field's value is reported as. */
const kindOfField = (field: string): SecretKind =>
  /customer/i.test(field)
    ? 'customer'
    : /pass/i.test(field)
      ? 'password'
      : /key/i.test(field)
        ? 'key'
        : /token/i.test(field)
          ? 'token'
          : 'credential';

/** Headers whose values are secrets whole. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-[a-z]+-auth)$/i;

/** The provider's username and Zone credential forms: `<brand>-customer-<c>-zone-<z>[-key-<k>]`, and a password after `:`. */
const USERNAME =
  /\b[a-z]+-customer-([A-Za-z0-9_]+)(?:-zone-[A-Za-z0-9_]+)?(?:-[a-z_]+-[A-Za-z0-9_.*]+)*?(?:-key-([^\s:"'&,;/-]+))?(?::([^\s"'&,;/@]+))?/g;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** What a redaction leaves in place of a secret. */
const MARKER = /\[redacted:[a-z]+\]/g;

/** The shortest value taken for a secret: anything shorter would take ordinary words out of the report. */
const MIN_SECRET = 3;

/** The forms a value may take in a text: as is, URL-encoded, form-encoded, JSON-escaped. */
export function encodings(value: string): string[] {
  const uri = encodeURIComponent(value);
  const lowerHex = uri.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  const json = JSON.stringify(value).slice(1, -1);
  const jsonAscii = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [...new Set([value, uri, lowerHex, form, json, jsonAscii, JSON.stringify(json).slice(1, -1)])];
}

/** Candidates for an IPv6 address: hex groups separated by `:` (or its URL-encoded `%3A`), at least two. */
const IPV6_CANDIDATE = /[0-9A-Fa-f]*(?:(?::|%3[Aa])[0-9A-Fa-f]*){2,}(?:\.\d{1,3}){0,3}/g;
const IPV4_CANDIDATE = /(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])/g;

/** Every IP address (v4, v6, URL-encoded v6) in `text` replaced by `[redacted:ip]`. */
export function redactIps(text: string): string {
  const v6 = text.replace(IPV6_CANDIDATE, (c) => {
    const decoded = c.replace(/%3a/gi, ':');
    if (!/[0-9A-Fa-f]/.test(decoded)) return c;
    if (isIP(decoded) === 6) return '[redacted:ip]';
    // A candidate can carry a neighbour's hex (`a:` of `data:`): the longest valid address within it counts.
    for (let start = 0; start < decoded.length; start++) {
      for (let end = decoded.length; end > start + 2; end--) {
        if (isIP(decoded.slice(start, end)) === 6 && decoded.slice(start, end).includes('::')) {
          return `${c.slice(0, start)}[redacted:ip]${c.slice(end)}`;
        }
      }
    }
    return c;
  });
  return v6.replace(IPV4_CANDIDATE, (c) => (isIP(c) === 4 ? '[redacted:ip]' : c));
}

export class Redactor {
  /** Each secret's forms, the longest first when redacting. */
  private readonly secrets = new Map<string, SecretKind>();

  /** Takes `value` (and its forms) out of every report from now on. */
  add(value: string | undefined, kind: SecretKind): void {
    if (typeof value !== 'string' || value.length < MIN_SECRET) return;
    for (const form of encodings(value)) if (!this.secrets.has(form)) this.secrets.set(form, kind);
  }

  /** A `user:password` pair: both, the pair, and the pair in base64 (an `Authorization: Basic` value). */
  addBasic(user: string, password: string): void {
    this.add(user, 'credential');
    this.add(password, 'password');
    this.add(`${user}:${password}`, 'credential');
    this.add(Buffer.from(`${user}:${password}`).toString('base64'), 'credential');
  }

  /** The secrets a text shows by its form: the provider's usernames and Zone credentials (customer, key, password). */
  learnText(text: string): void {
    for (const m of text.matchAll(USERNAME)) {
      this.add(m[1], 'customer');
      this.add(m[2], 'key');
      this.add(m[3], 'password');
    }
  }

  /** The secrets of a JSON value: every value of a secret field (at any depth), and whatever its texts show. */
  learnJson(value: unknown, field = ''): void {
    if (typeof value === 'string') {
      if (field && SECRET_FIELD.test(field) && !NOT_A_SECRET.test(value)) this.add(value, kindOfField(field));
      this.learnText(value);
    } else if (typeof value === 'number' && field && SECRET_FIELD.test(field) && !NOT_A_SECRET.test(String(value))) {
      this.add(String(value), kindOfField(field));
    } else if (Array.isArray(value)) {
      for (const v of value) this.learnJson(v, field);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        this.learnText(k);
        this.learnJson(v, k);
      }
    }
  }

  /** The secrets of an answer's headers: secret headers whole, and whatever the others show. */
  learnHeaders(headers: Record<string, string>): void {
    for (const [name, value] of Object.entries(headers)) {
      if (SECRET_HEADER.test(name)) {
        this.add(value, 'credential');
        this.add(value.replace(/^(Bearer|Basic)\s+/i, ''), 'credential');
      }
      this.learnText(value);
    }
  }

  /** The secrets of a body: JSON is read field by field; any text for the forms it shows. */
  learnBody(text: string): void {
    try {
      this.learnJson(JSON.parse(text));
    } catch {
      // Not JSON: its text forms only.
    }
    this.learnText(text);
  }

  /** `text` with every known secret (in each of its forms) and every IP address taken out. */
  redact(text: string): string {
    // One pass over the text, the longest form first: a replacement is never scanned again, so a short
    // secret cannot match inside a marker another one left.
    const forms = [...this.secrets.keys()].sort((a, b) => b.length - a.length);
    const out = forms.length
      ? text.replace(new RegExp(forms.map(escapeRegExp).join('|'), 'g'), (form) => `[redacted:${this.secrets.get(form)}]`)
      : text;
    return redactIps(out);
  }

  /** A JSON-like value with every string (object keys too) redacted. */
  redactDeep<T>(value: T): T {
    if (typeof value === 'string') return this.redact(value) as T;
    if (Array.isArray(value)) return value.map((v) => this.redactDeep(v)) as T;
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.redact(k), this.redactDeep(v)])) as T;
    }
    return value;
  }

  /** The known secrets `text` still holds, in any of their forms, markers aside (a report is not written while it holds one). */
  leaks(text: string): SecretKind[] {
    const bare = text.replace(MARKER, '\u0000');
    return [...this.secrets].filter(([form]) => bare.includes(form)).map(([, kind]) => kind);
  }

  /** Whether `text` holds `value` in any of its forms. */
  static holds(text: string, value: string): boolean {
    return encodings(value).some((form) => text.includes(form));
  }
}
