import { redact } from './errors.js';

const JSON_TYPE = /^application\/([\w.-]+\+)?json\b/i;

/**
 * Readies an answer for openapi-fetch's parsing. Text bodies (`text/plain`, and `text/html`, which the
 * real manager sends for plain strings) come back as strings: the body is re-wrapped as a JSON string
 * so that openapi-fetch's JSON parsing yields the text itself, for data and error alike.
 * `response.headers` keep the real Content-Type. Error bodies are redacted of credentials. A 2xx JSON
 * answer (nearly every call) is passed on as it is, without a look at its body.
 */
export function textAnswer(secrets: readonly string[]): (response: Response) => Response | Promise<Response> {
  return (response) => {
    const type = response.headers.get('Content-Type') ?? '';
    if (response.ok && (type === '' || JSON_TYPE.test(type))) return response;
    return rewrap(response, type, secrets);
  };
}

async function rewrap(response: Response, type: string, secrets: readonly string[]): Promise<Response> {
  const isJson = JSON_TYPE.test(type);
  // Text, and on a 2xx anything that is not JSON (the client then reports the media type), comes
  // back as a string instead of failing openapi-fetch's JSON parse.
  const isText = /^text\//i.test(type) || (response.ok && !isJson && type !== '');
  if (response.status === 204 || response.headers.get('Content-Length') === '0') return response;
  const raw = await response.clone().text();
  // Nothing to re-wrap (and a rebuilt Response would invent a text/plain Content-Type).
  if (raw === '') return response;
  let body = response.ok ? raw : redactBody(raw, isJson, secrets);
  if (isText) body = JSON.stringify(body);
  const headers = new Headers(response.headers);
  headers.delete('Content-Length');
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * An error body without credentials. A JSON body is redacted value by value after parsing: JSON
 * escapes (`\u0073ecret`, `\/`) would hide a secret from a search of the raw text.
 */
function redactBody(raw: string, isJson: boolean, secrets: readonly string[]): string {
  if (isJson) {
    try {
      return JSON.stringify(redactValue(JSON.parse(raw), secrets));
    } catch {
      // Not JSON after all: redact it as text.
    }
  }
  return redact(raw, secrets);
}

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (value && typeof value === 'object') {
    // fromEntries defines own properties: a `__proto__` key stays a key, as JSON.parse made it.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k, secrets), redactValue(v, secrets)]));
  }
  return value;
}
