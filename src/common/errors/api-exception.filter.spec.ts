import { beforeAll, describe, expect, it } from '@jest/globals';
import { type ArgumentsHost, Logger } from '@nestjs/common';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiExceptionFilter } from './api-exception.filter.js';

/**
 * A failure after a body started (a stream: recordings' snapshots, file exports) over a real HTTP connection: the
 * client must see an incomplete response, not a shorter body that ends as if whole.
 */
describe('ApiExceptionFilter after the body started', () => {
  // The filter logs the failures these tests cause on purpose.
  beforeAll(() => Logger.overrideLogger(false));
  const serve = async (fail: (req: http.IncomingMessage, res: http.ServerResponse) => void) => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/jsonl' });
      res.write('{"line":1}\n');
      setTimeout(() => fail(req, res), 20);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const outcome = await new Promise<{ body: string; complete: boolean; error?: string }>((resolve) => {
      let body = '';
      http
        .get({ host: '127.0.0.1', port, path: '/stream' }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ body, complete: res.complete }));
          res.on('error', (err) => resolve({ body, complete: res.complete, error: err.message }));
        })
        .on('error', (err) => resolve({ body, complete: false, error: err.message }));
    });
    server.close();
    return outcome;
  };
  const hostOf = (req: http.IncomingMessage, res: http.ServerResponse) =>
    ({
      switchToHttp: () => ({
        getRequest: () => Object.assign(req, { path: '/stream', originalUrl: '/stream' }),
        getResponse: () => res,
      }),
    }) as unknown as ArgumentsHost;

  it('cuts the connection: the client gets the lines sent and an incomplete response', async () => {
    const filter = new ApiExceptionFilter();
    const outcome = await serve((req, res) => filter.catch(new Error('store went away'), hostOf(req, res)));
    expect(outcome.body).toBe('{"line":1}\n');
    expect(outcome.complete).toBe(false);
    expect(outcome.error).toMatch(/aborted|socket hang up|ECONNRESET/);
  });

  it('leaves a response that had ended alone', async () => {
    const filter = new ApiExceptionFilter();
    const outcome = await serve((req, res) => {
      res.end('{"line":2}\n');
      filter.catch(new Error('late'), hostOf(req, res));
    });
    expect(outcome).toEqual({ body: '{"line":1}\n{"line":2}\n', complete: true });
  });
});
