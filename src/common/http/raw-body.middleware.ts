import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';

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
  return (req: RequestWithRawBody, _res: Response, next: NextFunction): void => {
    if (req._body || req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
      next();
      return;
    }
    const tooLarge = () => ApiError.payloadTooLarge(limit);
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      // Discard what the client still sends; the response goes out now.
      req.resume();
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
        req.resume();
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
