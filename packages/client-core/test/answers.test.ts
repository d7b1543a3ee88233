import { describe, expect, it } from 'vitest';
import { createTypedClient } from '../src/index.js';

// What a call returns for each kind of answer: which bodies are data, which are errors, and the one-line
// `message` of every error (over a recording fetch; nothing leaves the process).

type Op = { get: { parameters: { query?: never }; responses: Record<number, unknown> } };
type Paths = { '/api/thing': Op; '/api/empty': Op };
const ops = {
  getThing: { method: 'GET', path: '/api/thing', idempotent: true, changesState: false, success: { '200': ['text/plain'] } },
  getJson: {
    method: 'GET',
    path: '/api/thing',
    idempotent: true,
    changesState: false,
    success: { '200': ['application/json', 'application/vnd.api+json'] },
  },
  getEmpty: { method: 'GET', path: '/api/empty', idempotent: true, changesState: false, success: { '200': [], '204': [] } },
} as const;

/** Calls `operationId` once against a fetch that answers `response()`. */
async function answer(operationId: keyof typeof ops, response: () => Response, secrets: string[] = []) {
  const fetch = (async () => response()) as typeof globalThis.fetch;
  const client = createTypedClient<Paths, typeof ops>({ baseUrl: 'http://x.test', fetch, retry: false }, ops, { secrets });
  return (
    client[operationId] as () => Promise<{
      data?: unknown;
      error?: { kind?: string; message: string; error?: unknown; contentType?: string | null };
      response: Response;
    }>
  )();
}
const typed =
  (body: string | null, type: string | undefined, status = 200, headers: Record<string, string> = {}) =>
  () =>
    // Bytes, not a string: a string body would get a text/plain Content-Type of its own.
    new Response(body === null ? null : new TextEncoder().encode(body), {
      status,
      headers: { ...(type === undefined ? {} : { 'Content-Type': type }), ...headers },
    });

describe('which 2xx bodies are data', () => {
  it('a media type is compared without its parameters, case or spaces', async () => {
    const { data, error } = await answer('getThing', typed('hi', 'Text/Plain ; charset=UTF-8'));
    expect(error).toBeUndefined();
    expect(data).toBe('hi');
  });

  it('a structured +json type is JSON', async () => {
    const { data, error } = await answer('getJson', typed('{"a":1}', 'application/vnd.api+json'));
    expect(error).toBeUndefined();
    expect(data).toEqual({ a: 1 });
  });

  it('the type decides, not a parameter that names JSON: a text answer stays text', async () => {
    const { data, error } = await answer('getThing', typed('hello', 'text/plain; profile=application/json'));
    expect(error).toBeUndefined();
    expect(data).toBe('hello');
  });

  it('a JSON answer is handed on as the server sent it (its headers untouched)', async () => {
    const { data, response } = await answer('getJson', typed('{"a":1}', 'application/json', 200, { 'Content-Length': '7' }));
    expect(data).toEqual({ a: 1 });
    expect(response.headers.get('Content-Length')).toBe('7');
  });

  it('no body (204, Content-Length 0, an empty text): no data and no error', async () => {
    for (const [label, make] of [
      ['204', typed(null, undefined, 204)],
      ['Content-Length 0', typed('', 'application/json', 200, { 'Content-Length': '0' })],
      ['empty text', typed('', 'text/plain')],
    ] as const) {
      const { data, error } = await answer(label === 'empty text' ? 'getThing' : 'getEmpty', make);
      expect(error, label).toBeUndefined();
      expect(data, label).toBeUndefined();
    }
  });
});

describe('a 2xx body the operation does not declare is an error', () => {
  it('another media type: a result with an error saying which, not a thrown parse error', async () => {
    const { data, error } = await answer('getThing', typed('\u0000\u0001', 'application/octet-stream'));
    expect(data).toBeUndefined();
    expect(error).toMatchObject({
      kind: 'media-type',
      message: 'GET /api/thing answered 200 with application/octet-stream, which the operation does not declare (it declares text/plain)',
    });
  });

  it('no Content-Type: said so, and the response still has none', async () => {
    const { error, response } = await answer('getJson', typed('{"a":1}', undefined));
    expect(error).toMatchObject({
      kind: 'media-type',
      contentType: null,
      message:
        'GET /api/thing answered 200 with no Content-Type, which the operation does not declare (it declares application/json, application/vnd.api+json)',
    });
    expect(response.headers.get('Content-Type')).toBeNull();
  });

  it('a body where the operation declares none', async () => {
    const { error } = await answer('getEmpty', typed('{"a":1}', 'application/json'));
    expect(error?.message).toBe(
      'GET /api/empty answered 200 with application/json, which the operation does not declare (it declares no body)',
    );
  });

  it('a status the operation does not declare', async () => {
    const { error } = await answer('getJson', typed('{"a":1}', 'application/json', 201));
    expect(error?.message).toBe('GET /api/thing answered 201 with application/json, which the operation does not declare');
  });
});

describe('error answers', () => {
  it('no body and no Content-Type: the error says so and invents no Content-Type', async () => {
    const { error, response } = await answer('getThing', typed(null, undefined, 400));
    expect(error).toMatchObject({ kind: 'empty', contentType: null, message: 'GET /api/thing answered 400 with no body' });
    expect(response.headers.get('Content-Type')).toBeNull();
  });

  it('a text error whose text is JSON stays that text, exactly', async () => {
    const text = '{ "error":  "x" }';
    const { error } = await answer('getThing', typed(text, 'text/plain', 400));
    expect(error).toMatchObject({ kind: 'text', error: text, message: `GET /api/thing answered 400: ${text.replace(/\s+/g, ' ')}` });
  });

  it('a JSON error that is not an object is quoted as text', async () => {
    for (const [body, quoted] of [
      ['null', 'null'],
      ['42', '42'],
      ['"busy"', 'busy'],
      ['[1,2]', '[1,2]'],
    ] as const) {
      const { error } = await answer('getThing', typed(body, 'application/json', 500));
      expect(error, body).toMatchObject({ kind: 'text', message: `GET /api/thing answered 500: ${quoted}` });
    }
  });

  it('the message is one line: runs of white space become one space, the ends trimmed; nothing but white space says so', async () => {
    const { error } = await answer('getThing', typed('  line one\n\n\tline  two \n', 'text/plain', 400));
    expect(error?.message).toBe('GET /api/thing answered 400: line one line two');
    expect(error?.error).toBe('  line one\n\n\tline  two \n');
    const blank = await answer('getThing', typed(' \n\t ', 'text/plain', 400));
    expect(blank.error?.message).toBe('GET /api/thing answered 400: (empty text)');
  });

  it('a message quotes at most 500 characters of the body', async () => {
    const exactly = 'x'.repeat(500);
    expect((await answer('getThing', typed(exactly, 'text/plain', 400))).error?.message).toBe(`GET /api/thing answered 400: ${exactly}`);
    const over = `${exactly}yz`;
    expect((await answer('getThing', typed(over, 'text/plain', 400))).error?.message).toBe(`GET /api/thing answered 400: ${exactly}…`);
  });

  it("the account API's details: each problem that is an object, its field when it names one, joined", async () => {
    const body = {
      error: 'Bad request',
      details: [null, 'loose text', { field: '', reason: 'r1' }, { field: 7, reason: 'r2' }, { field: 'zone', reason: 'r3' }],
    };
    const { error } = await answer('getThing', () => Response.json(body, { status: 400 }));
    expect(error?.message).toBe('GET /api/thing answered 400: Bad request (r1; r2; zone: r3)');
  });

  it("the manager's errors: the same, and a body with an empty list is quoted whole", async () => {
    const { error } = await answer('getThing', () =>
      Response.json({ errors: [null, { msg: 'm1' }, { field: 'port', msg: 'm2' }] }, { status: 400 }),
    );
    expect(error?.message).toBe('GET /api/thing answered 400: m1; port: m2');
    const empty = await answer('getThing', () => Response.json({ errors: [] }, { status: 400 }));
    expect(empty.error?.message).toBe('GET /api/thing answered 400: {"errors":[]}');
  });

  it('a long JSON error is clipped in the message, never in the body', async () => {
    const reason = 'r'.repeat(600);
    const { error } = await answer('getThing', () => Response.json({ error: 'Bad', details: [{ reason }] }, { status: 400 }));
    expect(error?.message).toBe(`GET /api/thing answered 400: ${`Bad (${reason})`.slice(0, 500)}…`);
    expect((error as unknown as { details: { reason: string }[] }).details[0]?.reason).toBe(reason);
  });
});
