import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import { closeAfterAnswer } from './lingering-close.js';

/** The raw body a `rawBody` middleware read (a Buffer, possibly empty). */
export type RequestWithRawBody = Request & { body?: unknown; _body?: boolean };

/**
 * Reads the request body as raw bytes, at most `limit` of them (413 otherwise: at once when Content-Length says
 * so, else as soon as the stream passes the limit), and leaves it in `req.body` as a Buffer. Marks the body as
 * read, so the global JSON parser leaves it alone. `configureApp` mounts it before that parser on the routes
 * marked `@RawBody` (recording capture, the SDK's flags paths), whose bodies are gzip, form or text as often as
 * JSON.
 */
export function rawBody(limit: number) {
  return (req: RequestWithRawBody, res: Response, next: NextFunction): void => {
    if (req._body || req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
      next();
      return;
    }
    const tooLarge = () => ApiError.payloadTooLarge(limit);
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      // The answer goes out now and closes the connection; what the client still sends is dropped meanwhile.
      closeAfterAnswer(req, res);
      next(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      if (error) {
        if (received > limit) {
          req.pause();
          closeAfterAnswer(req, res);
        } else req.resume();
        next(error);
        return;
      }
      req.body = Buffer.concat(chunks, received);
      req._body = true;
      next();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) finish(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) =>
      finish(
        ApiError.validation(`The request body could not be read: ${error.message}`, null, 'invalid_input'),
      );
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  };
}

/**
 * The body of a request whose handler reads it as it arrives (`@RawBody(..., { stream: true })`): its chunks,
 * at most `limit` bytes in all (413 `payload_too_large` past it, thrown by the iteration), a read error as 400.
 * A handler that stops reading early calls `discard()` (the rest is then read and dropped, so the answer can
 * still go out on the connection).
 */
export class RequestBodyStream implements AsyncIterable<Buffer> {
  private started = false;
  private finished = false;
  /** Bytes of the body received so far (read, or dropped by `discard`). */
  private received = 0;
  private detach: (() => void) | null = null;
  /** Set by `discard`: a reader still waiting for the body stops (its iteration throws). */
  private discarded = false;
  private wakeReader: (() => void) | null = null;
  private discarding: Promise<void> | null = null;

  constructor(
    private readonly req: Request,
    readonly limit: number,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    if (this.started) throw new Error('A request body can be read only once.');
    this.started = true;
    const { req } = this;
    // Chunks are taken one at a time: the request is paused while the reader works on one.
    const queue: Buffer[] = [];
    let ended = false;
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    const onData = (chunk: Buffer) => {
      queue.push(chunk);
      req.pause();
      wake?.();
    };
    this.wakeReader = () => wake?.();
    const onEnd = () => {
      ended = true;
      wake?.();
    };
    const onError = (error: Error) => {
      failure = error;
      wake?.();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    this.detach = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    try {
      for (;;) {
        if (this.discarded) {
          throw ApiError.validation('The request body was not read to its end.', null, 'invalid_input');
        }
        if (!queue.length && !ended && !failure) {
          req.resume();
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
          continue;
        }
        const chunk = queue.shift();
        if (chunk) {
          this.received += chunk.length;
          if (this.received > this.limit) throw ApiError.payloadTooLarge(this.limit);
          yield chunk;
          continue;
        }
        if (failure) {
          throw ApiError.validation(
            `The request body could not be read: ${(failure as Error).message}`,
            null,
            'invalid_input',
          );
        }
        if (ended) {
          this.finished = true;
          return;
        }
      }
    } finally {
      this.detach();
      this.wakeReader = null;
    }
  }

  /**
   * Drops whatever the client still sends (after an early answer), also when no reader has started. Resolves
   * once the body has ended, the request is gone, or the body has passed `limit` bytes in all (a client sending
   * that much is not waited for): a handler that awaits it before answering an error lets a client that writes
   * its whole body before reading the answer read it, instead of a connection reset. A reader still waiting for
   * the body stops at once: its iteration throws (a request abandoned at its deadline lets go of its decoder).
   */
  discard(): Promise<void> {
    this.discarding ??= this.startDiscarding();
    return this.discarding;
  }

  /**
   * Reads no more of the body before the answer: the answer closes the connection (`Connection: close`), and
   * what the client still sends after it is only dropped, within the lingering close's bounds
   * (`closeAfterAnswer`). A reader still waiting stops (its iteration throws). For a request refused while memory
   * is short, whose client may keep sending for a long time.
   */
  refuse(): void {
    // A body read to its end has nothing left to refuse: its connection stays open.
    if (this.finished || this.req.readableEnded) return;
    this.detach?.();
    this.discarded = true;
    this.wakeReader?.();
    this.req.pause();
    this.closeAfterAnswer();
  }

  /** The answer closes the connection; what the client still sends then is dropped, within `LINGER`'s bounds. */
  private closeAfterAnswer(): void {
    if (this.req.res) closeAfterAnswer(this.req, this.req.res);
  }

  private startDiscarding(): Promise<void> {
    this.detach?.();
    this.discarded = true;
    this.wakeReader?.();
    const { req } = this;
    if (this.finished || req.destroyed || req.readableEnded) return Promise.resolve();
    if (this.received > this.limit) {
      this.closeAfterAnswer();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        req.off('data', onData);
        req.off('end', done);
        req.off('close', done);
        req.off('error', done);
        resolve();
      };
      const onData = (chunk: Buffer) => {
        this.received += chunk.length;
        if (this.received > this.limit) {
          req.pause();
          this.closeAfterAnswer();
          done();
        }
      };
      req.on('data', onData);
      req.on('end', done);
      req.on('close', done);
      req.on('error', done);
      req.resume();
    });
  }
}

export type RequestWithBodyStream = Request & { bodyStream?: RequestBodyStream; _body?: boolean };

/**
 * Leaves the request body to the handler, which reads it as it arrives (`req.bodyStream`): 413 at once when
 * `Content-Length` says it is over `limit`, else while it is read. Marks the body as read, so the global JSON
 * parser leaves it alone.
 */
export function streamedBody(limit: number) {
  return (req: RequestWithBodyStream, res: Response, next: NextFunction): void => {
    if (req._body || req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
      next();
      return;
    }
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      closeAfterAnswer(req, res);
      next(ApiError.payloadTooLarge(limit));
      return;
    }
    req._body = true;
    req.bodyStream = new RequestBodyStream(req, limit);
    next();
  };
}
