import type { ServerResponse } from 'node:http';
import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/errors/api-error.js';

/**
 * The drain state of the process. Set when shutdown starts, so readiness fails at once and load balancers stop
 * routing; it also knows the requests in flight, so that during the drain every answer closes its connection
 * (keep-alive clients reconnect to another replica) and, when the drain runs out of time, the requests still
 * running get a 503 instead of a reset connection.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  draining = false;
  private readonly inFlight = new Set<ServerResponse>();

  /** Express middleware, installed first: tracks each request until its response is finished or aborted. */
  readonly track = (_req: Request, res: Response, next: NextFunction): void => {
    this.inFlight.add(res);
    res.once('close', () => this.inFlight.delete(res));
    if (this.draining) res.setHeader('Connection', 'close');
    next();
  };

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Readiness fails from now on, and no answer keeps its connection open. */
  startDraining(): void {
    this.draining = true;
    for (const res of this.inFlight) {
      if (!res.headersSent) res.setHeader('Connection', 'close');
    }
  }

  beforeApplicationShutdown(): void {
    this.startDraining();
  }

  /**
   * Answers 503 `unavailable` to every request still in flight (connections of half-sent answers are closed)
   * and resolves once those answers are written, or after `maxWaitMs`. Returns how many requests were cut.
   */
  async abortInFlight(maxWaitMs = 1000): Promise<number> {
    const pending = [...this.inFlight];
    const body = JSON.stringify(
      ApiError.unavailable('The server is shutting down and could not finish this request. Try again.').body,
    );
    const written = pending.map((res) => {
      if (res.headersSent) {
        res.destroy();
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        res.once('close', resolve);
        res.writeHead(503, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          Connection: 'close',
        });
        res.end(body);
      });
    });
    await Promise.race([
      Promise.all(written),
      new Promise((resolve) => setTimeout(resolve, maxWaitMs).unref()),
    ]);
    return pending.length;
  }
}
