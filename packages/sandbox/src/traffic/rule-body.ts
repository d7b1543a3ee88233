import { Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

// What a body rule reads of an answer (issue 39): the real manager reads the whole body and decodes it
// whole before such a rule (lib/mixins/server_handle.js 214-231, lib/rules.js 131-173), so a 1 MB gzip
// answer of 1 GiB held the event loop 3.1 s and grew the RSS by 1 GB here too. The sandbox reads the
// answer in pieces, decodes them off the event loop (zlib's streams), and stops once it has
// `RULE_BODY_LIMIT` bytes of text; the rule tests that text. The client is handed the whole answer as the
// target sent it: the pieces read, then the rest as it arrives.

/** Decoded bytes of an answer a body rule reads at most (its first ones). */
export const RULE_BODY_LIMIT = 1024 * 1024;
/** Bytes as sent read at most for it (a body that decodes to less than it sends). */
const RAW_LIMIT = 4 * RULE_BODY_LIMIT;

const decoders: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * The first `RULE_BODY_LIMIT` bytes of `body` decoded as `encoding` says, as text (undefined when they do
 * not decode: the rule then does not run, as before), and the answer's body to hand on whole.
 */
export async function readForRule(body: Readable, encoding: string | undefined): Promise<{ text: string | undefined; body: Readable }> {
  const source = body[Symbol.asyncIterator]();
  const held: Buffer[] = [];
  let raw = 0;
  let ended = false;
  const make = decoders[(encoding ?? '').trim().toLowerCase()];
  const decoder = make?.();
  const decoded: Buffer[] = [];
  let size = 0;
  let failed = false;
  let full: () => void = () => undefined;
  const enough = new Promise<void>((resolve) => {
    full = resolve;
  });
  decoder?.on('data', (c: Buffer) => {
    if (size >= RULE_BODY_LIMIT) return;
    decoded.push(c);
    size += c.length;
    if (size >= RULE_BODY_LIMIT) {
      full();
      decoder.destroy();
    }
  });
  decoder?.once('error', () => {
    failed = true;
    full();
  });
  decoder?.once('end', () => full());
  while (raw < RAW_LIMIT && size < RULE_BODY_LIMIT && !failed) {
    const next = await source.next();
    if (next.done) {
      ended = true;
      break;
    }
    const chunk = Buffer.from(next.value as Buffer);
    held.push(chunk);
    raw += chunk.length;
    if (!decoder) {
      decoded.push(chunk);
      size += chunk.length;
    } else if (!decoder.destroyed) {
      // Waits for the piece to be decoded (or for the text to be long enough), so that a bomb's output
      // is cut at the bound rather than held.
      await Promise.race([new Promise<void>((resolve) => decoder.write(chunk, () => resolve())), enough]);
    }
  }
  if (decoder && !decoder.destroyed && !failed && size < RULE_BODY_LIMIT) {
    decoder.end();
    await enough;
  }
  decoder?.destroy();
  const text = failed ? undefined : Buffer.concat(decoded).subarray(0, RULE_BODY_LIMIT).toString('utf8');
  const rest = async function* () {
    yield* held;
    if (ended) return;
    for (;;) {
      const next = await source.next();
      if (next.done) return;
      yield next.value as Buffer;
    }
  };
  const out = Readable.from(rest(), { objectMode: false });
  out.once('close', () => {
    if (!body.readableEnded) body.destroy();
  });
  return { text, body: out };
}
