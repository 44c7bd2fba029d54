import { createServer, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countsBetween, NO_REQUESTS, requestKind, StoreProxy } from './store-proxy.js';

describe('requestKind', () => {
  it('tells object PUTs and GETs from lists, deletes and bucket configuration', () => {
    expect(requestKind('PUT', '/bucket/rec/packed/r30/2026-11-21/a?x-id=PutObject', false)).toBe('put');
    expect(requestKind('GET', '/bucket/rec/packed/r30/2026-11-21/a?x-id=GetObject', true)).toBe('rangedGet');
    expect(requestKind('GET', '/bucket/rec/chunk-1', false)).toBe('get');
    expect(requestKind('GET', '/bucket?list-type=2&prefix=rec%2F', false)).toBe('other');
    expect(requestKind('GET', '/bucket/', false)).toBe('other');
    expect(requestKind('POST', '/bucket?delete', false)).toBe('delete');
    expect(requestKind('DELETE', '/bucket/rec/chunk-1', false)).toBe('delete');
    expect(requestKind('PUT', '/bucket?lifecycle', false)).toBe('other');
  });

  it('subtracts counts kind by kind', () => {
    expect(
      countsBetween(
        { ...NO_REQUESTS, put: 2, get: 1 },
        { put: 5, get: 4, rangedGet: 3, delete: 1, other: 0 },
      ),
    ).toEqual({ put: 3, get: 3, rangedGet: 3, delete: 1, other: 0 });
  });
});

describe('StoreProxy', () => {
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(`${req.method} ${req.url} ${req.headers.range ?? ''}`));
  });
  let proxy: StoreProxy;

  beforeAll(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    proxy = new StoreProxy(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`);
    await proxy.start();
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  const send = (method: string, path: string, headers: Record<string, string> = {}) =>
    new Promise<string>((resolve, reject) => {
      const req = request(`${proxy.endpoint}${path}`, { method, headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end(method === 'PUT' ? 'bytes' : undefined);
    });

  it('forwards every request and counts it by kind', async () => {
    expect(await send('PUT', '/b/k1')).toBe('PUT /b/k1 ');
    expect(await send('GET', '/b/k1', { range: 'bytes=0-9' })).toBe('GET /b/k1 bytes=0-9');
    await send('GET', '/b/k1');
    await send('POST', '/b?delete');
    expect(proxy.counts).toEqual({ put: 1, get: 2, rangedGet: 1, delete: 1, other: 0 });
  });
});
