import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable, Transform } from 'node:stream';
import { RequestError } from 'proxy-chain';
import { PORT_ERROR_HEADER } from '../shared/brand.js';

// A client's request body, streamed to where it goes instead of read whole (a body over 64 MB once
// ended the process, and every body was held in memory until sent). As the real manager (1.570.247,
// lib/context.js 165-167, lib/mixins/server_send.js 133-135) it is passed on as it arrives; unlike it,
// only its first bytes are kept: `keep` of them for the HAR log, and all of them while they fit the
// replay window, so that a request a port sends again (its upstream could not be reached, or named a
// banned peer) sends the same body. The real manager keeps the whole body as a string for that; a
// body larger than the window cannot be sent twice here, and such a retry is a 502 saying so.

/** What of a body a port keeps to send it again on a retry: bodies up to this size can be retried. */
export const REPLAY_LIMIT = 1024 * 1024;
/** What is read before sending: a body that ends within it goes as one buffer with its length, as before. */
export const PREREAD = 64 * 1024;

const gone = () => Object.assign(new Error('the client went away before its body ended'), { code: 'ECONNRESET' });

export class StreamedBody {
  /** Bytes read from the client so far (all of them once `complete`). */
  bytes = 0;
  private readonly keptParts: Buffer[] = [];
  private keptBytes = 0;
  /** Every byte read so far, while they fit the replay window; undefined past it. */
  private replay: Buffer[] | undefined = [];
  /** Where the bytes read go now: the stream of the current attempt. */
  private sink: PassThrough | undefined;
  private ended = false;
  private failed: Error | undefined;
  private detached = false;
  private wake: (() => void) | undefined;

  /**
   * @param keep bytes to keep for the log
   * @param replayLimit bytes kept to send the body again (at least PREREAD are read before sending)
   */
  constructor(
    private readonly src: IncomingMessage,
    private readonly keep: number,
    private readonly replayLimit = REPLAY_LIMIT,
  ) {
    src.on('data', (c: Buffer) => this.take(c));
    src.once('end', () => {
      this.ended = true;
      this.sink?.end();
      this.wake?.();
    });
    src.once('error', (err) => this.fail(err));
    src.once('close', () => {
      if (!this.ended) this.fail(gone());
    });
  }

  /** Whether the client sent its body whole. */
  get complete(): boolean {
    return this.ended;
  }

  /** The first bytes of the body, as many as the log keeps. */
  get kept(): Buffer {
    return Buffer.concat(this.keptParts);
  }

  /** Reads the body's first PREREAD bytes (all of a small body); a client that went away fails it. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.failed) reject(this.failed);
        else if (this.ended || this.bytes >= PREREAD) {
          this.src.pause();
          resolve();
        } else return false;
        this.wake = undefined;
        return true;
      };
      if (!check()) this.wake = check;
    });
  }

  /**
   * The body from its start, for one attempt to send it: a buffer when the client sent it whole and it
   * fits the window, else a stream of it that goes on with what the client sends, no faster than it is
   * taken. The previous attempt's stream is let go of. Throws a 502 when the body cannot be sent again.
   */
  open(): Buffer | Readable {
    this.sink?.destroy();
    this.sink = undefined;
    this.src.pause();
    if (this.failed) throw this.failed;
    if (!this.replay)
      throw new RequestError(
        `The request body (${this.bytes} bytes so far) cannot be sent again: a port keeps ${this.replayLimit} bytes of a body to retry it`,
        502,
        { [PORT_ERROR_HEADER]: 'body_too_large_to_retry' },
      );
    if (this.ended) return Buffer.concat(this.replay);
    const out = new PassThrough();
    for (const c of this.replay) out.write(c);
    this.sink = out;
    out.once('close', () => {
      if (this.sink === out) {
        this.sink = undefined;
        this.src.pause();
      }
    });
    this.src.resume();
    return out;
  }

  /**
   * Done with the body (its answer was passed on): what the client still sends is read and dropped,
   * so that its connection stays usable, and no longer counted or kept.
   */
  finish(): void {
    this.detached = true;
    this.replay = undefined;
    this.sink = undefined;
    if (!this.ended && !this.failed) this.src.resume();
  }

  private take(c: Buffer): void {
    if (this.detached) return;
    this.bytes += c.length;
    if (this.keptBytes < this.keep) {
      // A copy: a slice would hold the whole chunk for the log.
      const part = Buffer.from(c.subarray(0, this.keep - this.keptBytes));
      this.keptParts.push(part);
      this.keptBytes += part.length;
    }
    const sink = this.sink;
    // Before the first attempt (the pre-read, one chunk past PREREAD at most) every byte is kept.
    if (this.replay) {
      if (!sink || this.bytes <= this.replayLimit) this.replay.push(c);
      else this.replay = undefined;
    }
    if (!sink) {
      if (this.bytes >= PREREAD) this.src.pause();
      this.wake?.();
      return;
    }
    if (sink.destroyed) return;
    if (!sink.write(c)) {
      this.src.pause();
      sink.once('drain', () => {
        if (this.sink === sink) this.src.resume();
      });
    }
  }

  private fail(err: Error): void {
    if (this.failed || this.ended) return;
    this.failed = err;
    this.sink?.destroy(err);
    this.wake?.();
  }
}

/** A body as sent, and its bytes so far (a stream counted as it passes). */
export function counted(body: Buffer | Readable): { body: Buffer | Readable; bytes: () => number } {
  if (Buffer.isBuffer(body)) return { body, bytes: () => body.length };
  let n = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      n += chunk.length;
      done(null, chunk);
    },
  });
  body.once('error', (err) => meter.destroy(err));
  meter.once('close', () => {
    if (!body.destroyed && !meter.readableEnded) body.destroy();
  });
  return { body: body.pipe(meter), bytes: () => n };
}
