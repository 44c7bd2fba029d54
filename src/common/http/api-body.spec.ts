import { describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import { isApiRequest, isLargeBody, LargeBodyGate } from './api-body.js';

const req = (headers: Record<string, string>, originalUrl = '/api/organizations') =>
  ({ headers, originalUrl, url: originalUrl }) as unknown as Request;

describe('isApiRequest', () => {
  it.each([
    ['/api', true],
    ['/api/organizations', true],
    ['/api/shared/x?y=1', true],
    ['/api?x', true],
    ['/apis', false],
    ['/s/', false],
    ['/docs', false],
    ['/flags?api=1', false],
  ])('%s → %s', (url, expected) => {
    expect(isApiRequest(req({}, url))).toBe(expected);
  });
});

describe('isLargeBody', () => {
  it('counts a body declared over the threshold, or of unknown size', () => {
    expect(isLargeBody(req({ 'content-length': '1024' }), 1024)).toBe(false);
    expect(isLargeBody(req({ 'content-length': '1025' }), 1024)).toBe(true);
    expect(isLargeBody(req({ 'transfer-encoding': 'chunked' }), 1024)).toBe(true);
    expect(isLargeBody(req({ 'content-length': '10', 'content-encoding': 'gzip' }), 1024)).toBe(true);
    expect(isLargeBody(req({ 'content-length': '10', 'content-encoding': 'identity' }), 1024)).toBe(false);
  });

  it('does not count a request without a body', () => {
    expect(isLargeBody(req({}), 1024)).toBe(false);
    expect(isLargeBody(req({ 'content-length': '0' }), 1024)).toBe(false);
  });
});

describe('LargeBodyGate', () => {
  it('gives at most `limit` slots, and a released one again', () => {
    const gate = new LargeBodyGate(2);
    expect([gate.tryAcquire(), gate.tryAcquire(), gate.tryAcquire()]).toEqual([true, true, false]);
    expect(gate.active).toBe(2);
    gate.release();
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(false);
  });

  it('never goes below zero, and 0 means no cap', () => {
    const gate = new LargeBodyGate(1);
    gate.release();
    expect(gate.active).toBe(0);
    expect([gate.tryAcquire(), gate.tryAcquire()]).toEqual([true, false]);
    const open = new LargeBodyGate(0);
    expect(Array.from({ length: 100 }, () => open.tryAcquire()).every(Boolean)).toBe(true);
  });
});
