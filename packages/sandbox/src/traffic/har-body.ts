import type { Transform } from 'node:stream';
import { constants, createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import { HAR_LIMITS } from '../domain/har.js';

// The HAR log's text of an answer sent gzip, br or deflate encoded, made as the real manager makes it
// (@luminati-io/luminati-proxy 1.570.247, lib/util.js 253-290, decode_body, which lib/server.js 444-448
// calls with the bytes it kept, har_limit and the answer's size): the first har_limit bytes as they
// came, decoded — gzip as far as they go (Z_SYNC_FLUSH), br not at all when the answer was longer than
// what was kept (its text is then empty), deflate as zlib and, failing that, as raw deflate — read as
// UTF-8, trimmed, and cut to har_limit characters. Unlike the real manager, which decodes whole in one
// synchronous call, decoding here runs off the event loop and stops at DECODED_CAP bytes: one megabyte
// of gzip can be a gibibyte of text.

/** The most bytes an answer is decoded to for the log (HAR_LIMITS.body, 16 MiB). */
export const DECODED_CAP = HAR_LIMITS.body;

const DECODERS: Record<string, (() => Transform)[]> = {
  gzip: [() => createGunzip({ finishFlush: constants.Z_SYNC_FLUSH })],
  br: [() => createBrotliDecompress()],
  deflate: [() => createInflate(), () => createInflateRaw()],
};

/** `input` through a new decoder, to `cap` bytes of output at most (the decoder is let go of there). */
function decode(make: () => Transform, input: Buffer, cap: number): Promise<{ out: Buffer; capped: boolean }> {
  return new Promise((resolve, reject) => {
    const z = make();
    const parts: Buffer[] = [];
    let n = 0;
    z.on('data', (chunk: Buffer) => {
      if (n >= cap) return;
      const part = chunk.subarray(0, cap - n);
      parts.push(part);
      n += part.length;
      if (n < cap) return;
      z.destroy();
      resolve({ out: Buffer.concat(parts), capped: true });
    });
    z.on('error', reject);
    z.on('end', () => resolve({ out: Buffer.concat(parts), capped: false }));
    z.end(input);
  });
}

/**
 * The log's text of an answer with `Content-Encoding: encoding` of which `kept` (its first `size`
 * bytes at most) were kept, and what the log says of it; undefined for an encoding the real manager
 * does not decode (any other value, as its `switch` compares it).
 */
export async function harText(
  kept: Buffer,
  encoding: string | undefined,
  harLimit: number,
  size: number,
): Promise<{ text: string; comment?: string } | undefined> {
  const decoders = DECODERS[encoding ?? ''];
  if (!decoders || !kept.length) return undefined;
  const chars = harLimit > 0 ? Math.min(harLimit, HAR_LIMITS.body) : HAR_LIMITS.body;
  // The real manager writes no comment on an entry's content (lib/manager.js 476-484): one is written only
  // where the sandbox's own bound acted (decoding stopped at its cap) or decoding failed (where the real
  // manager's decode_body throws, lib/util.js 280-283, and logs nothing of the answer).
  const done = (text: string, more: (string | undefined)[] = []) => {
    const comment = more.filter(Boolean).join('; ');
    return comment ? { text, comment: `decoded from ${encoding}; ${comment}` } : { text };
  };
  if (encoding === 'br' && size > kept.length) return done('');
  // UTF-8 takes at most 4 bytes a character: `chars` characters are in the first 4 × chars bytes.
  const cap = Math.min(DECODED_CAP, 4 * chars);
  let failure: Error | undefined;
  for (const make of decoders) {
    try {
      const { out, capped } = await decode(make, kept, cap);
      const text = out.toString('utf8').trim();
      return done(text.slice(0, chars), [capped ? `decoding stopped at ${cap} bytes` : undefined]);
    } catch (err) {
      failure = err as Error;
    }
  }
  return done('', [`decoding body failed with encoding ${encoding}: ${failure?.message}`]);
}
