import { MIMEType } from 'node:util';
import { gunzipSync, inflateSync } from 'node:zlib';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import iconv from 'iconv-lite';
import { HttpError } from '../shared/errors.js';
import { PROTO_KEY, parseInPieces, yieldToLoop } from '../shared/in-pieces.js';
import { BODY_DEPTH_LIMIT, tooDeep, tooDeepInPieces } from './depth.js';
import { readForm, readFormOf } from './form-body.js';
import type { RequestChecker } from './lenient.js';
import type { Leniency } from './lenient-headers.js';
import type { OperationDef } from './spec.js';

// How a request body is read and checked before the handler sees it.
//
// By default a body is JSON: another media type is read and refused later, by the operations that take
// a JSON body (400 naming Content-Type), and malformed JSON is a 400. An API that reads bodies as the
// real local proxy manager does (`realBodies`, its express server's body parsers:
// @luminati-io/luminati-proxy 1.570.247 lib/mixins/web_server.js 166-174, body-parser 1.20 and qs 6; form.ts)
// reads a form body (`a[b][0]=c`) as that JSON, any other media type as no body, and answers a JSON body
// it cannot read 500 `Server Error` (its error handler, web_server.js 184-187): malformed JSON, JSON that
// does not start with `{` or `[` (body-parser's `strict`, lib/types/json.js 81-87: `7`, `null`, `"x"`,
// only blanks), a charset other than UTF-* (json.js 126-135) and a body over the limit; it inflates a gzip
// or deflate body and decodes a UTF-16 one first (realText). Its parsers run
// for every route before the API's (web_server.js 166-176), so a GET's body is read too. Strictness keeps
// the JSON-only form.

const kUnsupportedMedia = Symbol('unsupportedMedia');
const kBodySize = Symbol('bodySize');
const kBodyText = Symbol('bodyText');
type Req = FastifyRequest & { [kUnsupportedMedia]?: string; [kBodySize]?: number; [kBodyText]?: BodyAsSent };

/** A body's text as the request sent it, and how it was read (JSON, or a form as the real manager reads one). */
export interface BodyAsSent {
  text: string;
  media: 'json' | 'form';
}

/** The size in bytes of the body a request sent, as read (undefined when none was read). */
export const bodySizeOf = (req: FastifyRequest): number | undefined => (req as Req)[kBodySize];
/** The text of a body as the request sent it (undefined for none, or one of a media type not read). */
export const bodyTextOf = (req: FastifyRequest): BodyAsSent | undefined => (req as Req)[kBodyText];

/** A body as sent, read again as it was read then (the record of calls keeps the text and reads it when listed). */
export function readAsSent(sent: BodyAsSent): unknown {
  return sent.media === 'json' ? JSON.parse(sent.text) : sent.text.length ? readForm(sent.text) : undefined;
}

/**
 * Before an operation's checks: a body of a media type the API does not read is refused by an operation
 * that takes a JSON body (naming Content-Type); as the real manager reads bodies, every route gets one,
 * `{}` when none was sent or read (body-parser); elsewhere a form only where the spec has it, not `strict`.
 */
export function readBody(req: FastifyRequest, op: OperationDef, realBodies: boolean, strict = false): HttpError | undefined {
  if (!realBodies && (req as Req)[kBodyText]?.media === 'form' && (strict || op.body?.formPointer === undefined)) {
    (req as Req)[kUnsupportedMedia] = String(req.headers['content-type']);
    [(req as Req)[kBodyText], req.body] = [undefined, undefined];
  }
  // With `strict`, a JSON `null` sent as the body is a body that is not the declared one; fastify's
  // validator is handed an absent body as null too, so it is told apart here, where the text is known.
  if (strict && op.body && req.body === null && (req as Req)[kBodyText]?.media === 'json')
    return new HttpError(400, 'Invalid request', { details: [{ field: 'body', reason: 'must be object, not null' }] });
  if (realBodies && op.body && req.body == null) req.body = {};
  // The real manager's handlers read the fields they name of whatever body came (`req.body.email`,
  // web_api.js 931-942; `req.body.port`, 276-284; `req.body.zone`, 972-987; `{type, message}`, 1426-1431),
  // and a JSON array has none of them. Where the spec checks the body, an array is read so, as an object
  // without fields; where it does not (`x-observed-unchecked`), the handler gets the array as sent.
  if (realBodies && op.body && Array.isArray(req.body) && !op.unchecked.includes('body')) req.body = {};
  const media = (req as Req)[kUnsupportedMedia];
  if (op.body && media !== undefined)
    return new HttpError(400, 'Invalid request body', {
      details: [{ field: 'header.Content-Type', reason: `must be application/json, not ${media}` }],
    });
  return undefined;
}

/**
 * A JSON body of at least this many characters is parsed, checked for depth and handed on in separate
 * turns of the event loop. JSON.parse of a body of 60,000 fields (700 kB) takes tens of milliseconds.
 */
export const LARGE_BODY = 64 * 1024;

/**
 * The real manager's answer to a body its parsers cannot read (web_server.js 184-187): it comes from the
 * app's last error handler, before the `/api` routes and so without their headers (`Deprecation`).
 */
export class UnreadableBody extends HttpError {
  constructor() {
    super(500, 'Server Error', { text: true });
  }
}

/** The charset a request names for its body, in lower case (undefined for none, or a Content-Type that does not parse). */
function charsetOf(req: FastifyRequest): string | undefined {
  try {
    return new MIMEType(String(req.headers['content-type'])).params.get('charset')?.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * A body's text as the real manager's body-parser reads it (body-parser 1.20.3: lib/read.js 147-186,
 * types/json.js 126-135, types/urlencoded.js 107-125), or undefined where it cannot, which is its 500:
 * inflated when its Content-Encoding is `gzip` or `deflate` (any other but `identity` it does not read,
 * nor what does not inflate), up to the body limit once inflated; decoded in the charset named (JSON: any
 * `utf-…` iconv-lite knows, `utf-16` by its byte order mark or, without one, by its bytes; UTF-8 when none
 * is named; a form: UTF-8 only), a byte order mark dropped.
 */
function realText(req: FastifyRequest, raw: Buffer, media: BodyAsSent['media']): string | undefined {
  const charset = charsetOf(req) ?? 'utf-8';
  if (media === 'json' ? !charset.startsWith('utf-') : charset !== 'utf-8') return undefined;
  if (!iconv.encodingExists(charset)) return undefined;
  const coding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const bound = { maxOutputLength: req.routeOptions.bodyLimit };
  let bytes = raw;
  try {
    if (coding === 'gzip') bytes = gunzipSync(raw, bound);
    else if (coding === 'deflate') bytes = inflateSync(raw, bound);
    else if (coding !== 'identity') return undefined;
  } catch {
    return undefined;
  }
  return iconv.decode(bytes, charset);
}

/**
 * Whether body-parser's JSON parser, as the real manager sets it up (`strict`, the default), refuses the
 * text: a first character (after JSON's blanks) that opens no object or array (types/json.js 81-87).
 */
const refusedAsRealJson = (text: string): boolean => !/^[ \t\n\r]*[{[]/.test(text);

/**
 * A body's text read as JSON, checked for depth and handed on. A large body is parsed in pieces and checked
 * for depth in pieces, the event loop let go of between them, so that what waits (other requests, timers)
 * runs before the checks and the handler.
 */
function parseJson(
  req: FastifyRequest,
  text: string,
  jsonParser: ReturnType<FastifyInstance['getDefaultJsonParser']>,
  realBodies: boolean,
  done: (err: Error | null, body?: unknown) => void,
): void {
  if (realBodies && refusedAsRealJson(text)) {
    done(new UnreadableBody(), undefined);
    return;
  }
  const parsedAs = (parsed: unknown) => {
    (req as Req)[kBodyText] = { text, media: 'json' };
    return parsed;
  };
  /** fastify's own parser, in one stretch: its answer, its error as it gives it. */
  const whole = (then: (parsed: unknown) => void): void => {
    jsonParser(req, text, (err, parsed) => (err ? done(realBodies ? new UnreadableBody() : err, undefined) : then(parsedAs(parsed))));
  };
  if (text.length < LARGE_BODY) {
    whole((parsed) => done(depthError(tooDeep(parsed)), parsed));
    return;
  }
  const checkInPieces = (parsed: unknown) => void checkDepthInPieces(parsed).then((deep) => done(deep, parsed));
  // The manager's parser reads such keys as JSON.parse does, and so does parseInPieces; the account API's refuses them.
  if (!realBodies && suspect(text)) {
    whole(checkInPieces);
    return;
  }
  void (async () => {
    let parsed: unknown;
    try {
      parsed = parsedAs(await parseInPieces(text));
    } catch {
      // Not JSON: the manager's answer names nothing; the other API's is fastify's parser's (it parses the
      // text once more, in one stretch).
      if (realBodies) return done(new UnreadableBody(), undefined);
      return whole(checkInPieces);
    }
    checkInPieces(parsed);
  })();
}

/**
 * A key `constructor`, spelt in letters or `\u` escapes: with PROTO_KEY, what fastify's JSON parser
 * (secure-json-parse 4.1.1, index.js 4-5) looks for before it checks a parsed body for a `__proto__` field
 * or a `constructor` with a `prototype`, which it refuses where it is set to (the account API; the
 * manager's reads them as fields, as the real manager's JSON.parse does). A large body whose text holds one
 * is parsed by fastify's parser there, whole, and refused or read as it decides.
 */
const CONSTRUCTOR_KEY =
  /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;
const suspect = (text: string) => PROTO_KEY.test(text) || CONSTRUCTOR_KEY.test(text);

export function addBodyParsers(app: FastifyInstance, realBodies: boolean): void {
  // The real one's body-parser reads JSON with JSON.parse: `__proto__` and `constructor` are fields like any
  // other (own properties, never the prototype). What the handlers then make of them is theirs to say.
  const jsonParser = realBodies ? app.getDefaultJsonParser('ignore', 'ignore') : app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  // express reads a GET's body too; fastify only when told to.
  if (realBodies) app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });
  if (!realBodies) {
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
      // Empty bodies parse to "no body" (the schema then says whether one was required).
      if ((body as string).length === 0) return done(null, undefined);
      (req as Req)[kBodySize] = Buffer.byteLength(body as string);
      parseJson(req, body as string, jsonParser, false, done);
    });
    // A form is read, and kept only by an operation whose spec declares that form of its body (readBody).
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, text, done) => {
      (req as Req)[kBodySize] = Buffer.byteLength(text as string);
      const parsed = (text as string).length ? readForm(text as string) : undefined;
      if (parsed !== undefined) (req as Req)[kBodyText] = { text: text as string, media: 'form' };
      else if ((text as string).length) (req as Req)[kUnsupportedMedia] = String(req.headers['content-type'] ?? '');
      done(depthError(tooDeep(parsed)), parsed);
    });
  } else {
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
      const raw = body as Buffer;
      if (raw.length === 0) return done(null, undefined);
      (req as Req)[kBodySize] = raw.length;
      const text = realText(req, raw, 'json');
      if (text === undefined) return done(new UnreadableBody(), undefined);
      parseJson(req, text, jsonParser, true, done);
    });
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (req, body, done) => {
      const raw = body as Buffer;
      (req as Req)[kBodySize] = raw.length;
      const text = raw.length ? realText(req, raw, 'form') : '';
      if (text === undefined) return done(new UnreadableBody(), undefined);
      void (async () => {
        const parsed = text.length ? await readFormOf(text, text.length >= LARGE_BODY) : undefined;
        if (text.length && parsed === undefined) return done(new UnreadableBody(), undefined);
        (req as Req)[kBodyText] = { text, media: 'form' };
        if (text.length < LARGE_BODY) return done(depthError(tooDeep(parsed)), parsed);
        done(await checkDepthInPieces(parsed), parsed);
      })();
    });
  }
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    if (!realBodies && (body as string).length > 0) (req as Req)[kUnsupportedMedia] = String(req.headers['content-type'] ?? '');
    done(null, undefined);
  });
}

/** tooDeep in pieces, a turn of the event loop before and after: the refusal, or null. */
async function checkDepthInPieces(parsed: unknown): Promise<HttpError | null> {
  await yieldToLoop();
  const deep = await tooDeepInPieces(parsed);
  await yieldToLoop();
  return depthError(deep);
}

/** A body nested deeper than the sandbox reads (depth.ts), as tooDeep found it: refused before anything reads it, naming where. */
function depthError(deep: string | undefined): HttpError | null {
  return deep
    ? new HttpError(400, 'Invalid request body', { details: [{ field: deep, reason: `nests deeper than ${BODY_DEPTH_LIMIT} levels` }] })
    : null;
}

// What the body validator accepted leniently, keyed by the body it checked (a validator sees no request).
const bodyLeniency = new WeakMap<object, Leniency>();
export const leniencyOf = (body: unknown): Leniency | undefined => (body && typeof body === 'object' ? bodyLeniency.get(body) : undefined);

/**
 * The validator of an operation's JSON body. A body the real program reads without checking it
 * (`x-observed-unchecked: [body]` in the spec) goes to the handler as it came, any shape or none, unless
 * `strict`; the handler then reads it as the real program does.
 */
export function bodyValidator(op: OperationDef, checker: RequestChecker, strict: boolean): ValidateFunction {
  const body = op.body as NonNullable<OperationDef['body']>;
  const unchecked = !strict && op.unchecked.includes('body');
  // fastify hands an absent body over as null.
  const missing = [{ keyword: 'required', instancePath: '', schemaPath: '#', params: {}, message: 'is required: send a JSON body' }];
  const wrapped = ((data: unknown) => {
    wrapped.errors = null;
    if (unchecked) return true;
    if (data == null) {
      wrapped.errors = body.required ? missing : null;
      return !body.required;
    }
    const result = checker.check(body.schemaPointer, data, 'body', strict);
    if (!result.ok) {
      wrapped.errors = result.errors;
      return false;
    }
    if ((result.ignored.length || result.normalized.length) && typeof data === 'object') bodyLeniency.set(data as object, result);
    return true;
  }) as ValidateFunction;
  return wrapped;
}

/**
 * The validator of an operation's path parameters. Where the real program looks a path parameter up
 * without checking it (`x-observed-unchecked: [path]`), the parameters go to the handler as the
 * request gave them, strings not converted (`024000` stays `024000`), unless `strict`: the handler
 * reads them as the real program does (a key, `+port`, `==`).
 */
export function pathValidator(op: OperationDef, fn: ValidateFunction, strict: boolean): ValidateFunction {
  return uncheckedValidator(op, 'path', fn, strict);
}

/**
 * The validator of an operation's query. Where the real program reads the query without checking it
 * (`x-observed-unchecked: [query]`), the parameters go to the handler as the request gave them (texts,
 * a repeated one as a list), unless `strict`: the handler reads them as the real program does (`+skip||0`).
 */
export function queryValidator(op: OperationDef, fn: ValidateFunction, strict: boolean): ValidateFunction {
  return uncheckedValidator(op, 'query', fn, strict);
}

function uncheckedValidator(op: OperationDef, part: 'path' | 'query', fn: ValidateFunction, strict: boolean): ValidateFunction {
  if (strict || !op.unchecked.includes(part)) return fn;
  const wrapped = ((_data: unknown) => {
    wrapped.errors = null;
    return true;
  }) as ValidateFunction;
  return wrapped;
}
