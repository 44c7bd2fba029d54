import { describe, expect, it, jest } from '@jest/globals';
import type { NextFunction, Request, Response } from 'express';
import { sdkCors } from './sdk-cors.middleware.js';

function call(method: string, headers: Record<string, string> = {}, originalUrl = '/flags/') {
  const set: Record<string, string> = {};
  let status: number | undefined;
  let ended = false;
  const res = {
    setHeader: (name: string, value: string) => {
      set[name.toLowerCase()] = value;
    },
    status: (code: number) => {
      status = code;
      return res;
    },
    end: () => {
      ended = true;
    },
  } as unknown as Response;
  const next = jest.fn() as unknown as NextFunction;
  sdkCors({ method, headers, originalUrl } as unknown as Request, res, next);
  return { set, status, ended, next: next as unknown as jest.Mock };
}

describe('sdkCors', () => {
  it('allows any origin on every response, without credentials', () => {
    const r = call('POST');
    expect(r.set['access-control-allow-origin']).toBe('*');
    expect(r.set['access-control-allow-credentials']).toBeUndefined();
    expect(r.set['cross-origin-resource-policy']).toBe('cross-origin');
    expect(r.next).toHaveBeenCalled();
  });

  it('answers a preflight itself, echoing well-formed requested headers', () => {
    const r = call('OPTIONS', {
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'Content-Type, X-Trace',
    });
    expect([r.status, r.ended]).toEqual([204, true]);
    expect(r.set['access-control-allow-headers']).toBe('Content-Type, X-Trace');
    expect(r.next).not.toHaveBeenCalled();
  });

  it('falls back to Content-Type for malformed requested headers', () => {
    const r = call('OPTIONS', {
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'a b, "c"',
    });
    expect(r.set['access-control-allow-headers']).toBe('Content-Type');
  });

  it('passes a plain OPTIONS (not a preflight) on', () => {
    const r = call('OPTIONS');
    expect(r.next).toHaveBeenCalled();
    expect(r.status).toBeUndefined();
  });

  it("leaves the server SDKs' definitions poll (a personal API key route) alone", () => {
    for (const url of [
      '/flags/definitions',
      '/flags/definitions/',
      '/flags/definitions?token=phc_x&send_cohorts',
    ]) {
      const r = call('OPTIONS', { 'access-control-request-method': 'GET' }, url);
      expect([r.set['access-control-allow-origin'], r.status, r.next.mock.calls.length]).toEqual([
        undefined,
        undefined,
        1,
      ]);
    }
    expect(call('POST', {}, '/flags/?v=2').set['access-control-allow-origin']).toBe('*');
    expect(call('POST', {}, '/flags/definitionsX').set['access-control-allow-origin']).toBe('*');
  });
});
