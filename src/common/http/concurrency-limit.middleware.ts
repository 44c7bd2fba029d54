import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import { closeAfterAnswer } from './lingering-close.js';

/** The public routes the per-address cap is mounted on (path prefixes). */
export const CONCURRENCY_LIMITED_PREFIXES = [
  '/s',
  '/flags',
  '/decide',
  '/array',
  '/e',
  '/i/v0/e',
  '/batch',
  '/capture',
  '/track',
];

/**
 * Caps the requests one client address (`req.ip`, so X-Forwarded-For only when TRUST_PROXY trusts the proxy)
 * may have in flight on the routes it is mounted on: one more is answered 429 `throttled` with `Retry-After: 1`
 * before its body is read. Mounted on the public SDK routes (capture, flags, remote config), which anyone may
 * call. A limit of 0 turns the cap off.
 */
export function concurrencyLimit(limit: number) {
  const inFlight = new Map<string, number>();
  return (req: Request, res: Response, next: NextFunction): void => {
    if (limit <= 0 || req.method === 'OPTIONS') {
      next();
      return;
    }
    const client = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const current = inFlight.get(client) ?? 0;
    if (current >= limit) {
      // The body is not read: the answer goes out now and the connection is closed after it (what the client
      // still sends meanwhile is dropped, so that it reads the answer rather than a reset).
      closeAfterAnswer(req, res);
      next(
        new ApiError(
          429,
          'throttled',
          `Too many concurrent requests from this address: at most ${limit} at a time. Retry after 1 second.`,
          null,
          'throttled_error',
          { 'Retry-After': '1' },
        ),
      );
      return;
    }
    inFlight.set(client, current + 1);
    res.once('close', () => {
      const left = (inFlight.get(client) ?? 1) - 1;
      if (left > 0) inFlight.set(client, left);
      else inFlight.delete(client);
    });
    next();
  };
}
