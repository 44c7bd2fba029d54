import { describe, expect, it, jest } from '@jest/globals';
import { type CanActivate, Controller, HttpCode, Post, Query, Req, UseGuards } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { NextFunction, Request, Response } from 'express';
import { Public } from '../auth/auth.decorators.js';
import { ApiError } from '../errors/api-error.js';
import { routesWith } from './controller-routes.js';
import { DirectRoute, directRouteMiddleware, directRouteViolation } from './direct-route.js';
import { deadlineOf, type RequestDeadline } from './request-deadline.js';

class AllowAll implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

let release: (value: unknown) => void = () => undefined;
let seenDeadline: RequestDeadline | null = null;

@Controller('/hot/')
class HotController {
  @Post('ok')
  @HttpCode(200)
  @Public()
  @DirectRoute()
  ok(@Req() req: Request): Promise<{ got: unknown }> {
    return Promise.resolve({ got: req.query.x });
  }

  @Post('created')
  @Public()
  @DirectRoute()
  put(@Req() _req: Request): { done: boolean } {
    return { done: true };
  }

  @Post('slow')
  @Public()
  @DirectRoute()
  slow(@Req() req: Request): Promise<unknown> {
    seenDeadline = deadlineOf(req);
    return new Promise((resolve) => (release = resolve));
  }

  @Post('committing')
  @Public()
  @DirectRoute()
  committing(@Req() req: Request): Promise<unknown> {
    // Work that has claimed its commit before the deadline: its outcome answers, however long it takes.
    deadlineOf(req)?.claimCommit();
    return new Promise((resolve) => (release = resolve));
  }

  @Post('fails')
  @Public()
  @DirectRoute()
  fails(@Req() _req: Request): Promise<unknown> {
    return Promise.reject(ApiError.validation('bad', 'x'));
  }

  @Post('private')
  @DirectRoute()
  private(@Req() _req: Request): void {}

  @Post('query')
  @Public()
  @DirectRoute()
  query(@Req() _req: Request, @Query() _q: unknown): void {}

  @Post('guarded')
  @Public()
  @UseGuards(AllowAll)
  @DirectRoute()
  guarded(@Req() _req: Request): void {}

  @Post('plain')
  @Public()
  plain(): void {}
}

@Controller('api')
class ApiController {
  @Post('hot')
  @Public()
  @DirectRoute()
  checked(@Req() _req: Request): void {}
}

async function routes() {
  const moduleRef = await Test.createTestingModule({ controllers: [HotController, ApiController] }).compile();
  const found = routesWith(moduleRef.get(ModulesContainer), 'http:directRoute');
  return new Map(found.map((r) => [r.name, r]));
}

function fakeResponse() {
  const closeListeners: (() => void)[] = [];
  const res = {
    headersSent: false,
    once(event: string, listener: () => void) {
      if (event === 'close') closeListeners.push(listener);
      return res;
    },
    /** The connection closes. */
    close() {
      for (const listener of closeListeners.splice(0)) listener();
    },
    statusCode: 0,
    body: undefined as unknown,
    status(code: number) {
      res.statusCode = code;
      return res;
    },
    json(body: unknown) {
      res.body = body;
      res.headersSent = true;
      return res;
    },
  };
  return res;
}

const next = (() => undefined) as NextFunction;

describe('direct routes', () => {
  it('finds exactly the handlers marked @DirectRoute, with their full paths', async () => {
    const found = await routes();
    expect([...found.keys()].sort()).toEqual([
      'checked',
      'committing',
      'fails',
      'guarded',
      'ok',
      'private',
      'put',
      'query',
      'slow',
    ]);
    expect(found.get('ok')?.paths).toEqual(['/hot/ok']);
  });

  it('refuses at boot a route that is not public, takes more than the request, or has its own enhancers', async () => {
    const found = await routes();
    expect(directRouteViolation(found.get('ok')!)).toBeNull();
    expect(directRouteViolation(found.get('put')!)).toBeNull();
    expect(directRouteViolation(found.get('private')!)).toMatch(/HotController\.private .*not @Public\(\)/);
    expect(directRouteViolation(found.get('query')!)).toMatch(/must take the request alone/);
    expect(directRouteViolation(found.get('guarded')!)).toMatch(/declares its own __guards__/);
    expect(directRouteViolation(found.get('checked')!)).toMatch(
      /ApiController\.checked is a direct route under \/api\/hot, whose inputs/,
    );
  });

  it('answers with the handler result as JSON, under @HttpCode or the method default', async () => {
    const found = await routes();
    const res = fakeResponse();
    await directRouteMiddleware(found.get('ok')!, 1000)(
      { query: { x: 'y' } } as unknown as Request,
      res as unknown as Response,
      next,
    );
    expect([res.statusCode, res.body]).toEqual([200, { got: 'y' }]);
    const created = fakeResponse();
    await directRouteMiddleware(found.get('put')!, 1000)({} as Request, created as unknown as Response, next);
    expect([created.statusCode, created.body]).toEqual([201, { done: true }]);
  });

  it('lets a handler error through to the exception filter, untouched', async () => {
    const found = await routes();
    const res = fakeResponse();
    await expect(
      directRouteMiddleware(found.get('fails')!, 1000)({} as Request, res as unknown as Response, next),
    ).rejects.toMatchObject({ status: 400, body: { attr: 'x', detail: 'bad' } });
    expect(res.headersSent).toBe(false);
  });

  it('times out as the global interceptor does (503 timeout), and never answers twice', async () => {
    jest.useFakeTimers();
    try {
      const found = await routes();
      const res = fakeResponse();
      const answer = directRouteMiddleware(found.get('slow')!, 1500)(
        {} as Request,
        res as unknown as Response,
        next,
      );
      const outcome = expect(answer).rejects.toMatchObject({
        status: 503,
        body: {
          code: 'timeout',
          detail: 'The request did not complete within 1500 ms. Nothing of it was stored; it may be retried.',
        },
      });
      jest.advanceTimersByTime(1499);
      await Promise.resolve();
      expect(res.headersSent).toBe(false);
      expect(seenDeadline?.passed).toBe(false);
      expect(seenDeadline?.signal.aborted).toBe(false);
      jest.advanceTimersByTime(1);
      await outcome;
      // The handler's work sees the deadline has passed: it may not commit any more, and gives back what it
      // holds (its signal is aborted with the timeout).
      expect(seenDeadline?.passed).toBe(true);
      expect(seenDeadline?.signal.aborted).toBe(true);
      expect((seenDeadline?.signal.reason as ApiError).body.code).toBe('timeout');
      expect(() => seenDeadline?.claimCommit()).toThrow(ApiError);
      // The handler finishing later writes nothing.
      release({ late: true });
      await Promise.resolve();
      expect(res.body).toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('answers with the outcome of work that claimed its commit before the deadline, not the timeout', async () => {
    jest.useFakeTimers();
    try {
      const found = await routes();
      const res = fakeResponse();
      const answer = directRouteMiddleware(found.get('committing')!, 1000)(
        {} as Request,
        res as unknown as Response,
        next,
      );
      jest.advanceTimersByTime(5000);
      await Promise.resolve();
      expect(res.headersSent).toBe(false);
      release({ committed: true });
      await answer;
      expect([res.statusCode, res.body]).toEqual([201, { committed: true }]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('abandons the handler’s work when the connection closes before the answer', async () => {
    const found = await routes();
    const res = fakeResponse();
    const answer = directRouteMiddleware(found.get('slow')!, 60_000)(
      {} as Request,
      res as unknown as Response,
      next,
    );
    await Promise.resolve();
    expect(seenDeadline?.signal.aborted).toBe(false);
    res.close();
    expect(seenDeadline?.signal.aborted).toBe(true);
    expect((seenDeadline?.signal.reason as ApiError).getStatus()).toBe(400);
    // Not answered by the timeout: the deadline has not passed.
    expect(seenDeadline?.passed).toBe(false);
    release({ late: true });
    await answer;
  });

  it('makes nothing of the close that follows the answer: the handler’s work had ended', async () => {
    const found = await routes();
    const res = fakeResponse();
    const answer = directRouteMiddleware(found.get('slow')!, 60_000)(
      {} as Request,
      res as unknown as Response,
      next,
    );
    await Promise.resolve();
    release({ done: true });
    await answer;
    expect(res.body).toEqual({ done: true });
    res.close();
    expect(seenDeadline?.signal.aborted).toBe(false);
    expect(() => seenDeadline?.throwIfPassed()).not.toThrow();
  });
});
