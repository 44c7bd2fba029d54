import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { closeAfterAnswer, LINGER, type LingerLimits } from './lingering-close.js';

const MiB = 1024 * 1024;

/**
 * A real HTTP server on loopback whose handler answers 413 at once, without reading the body, the connection closed
 * with `closeAfterAnswer`. Reports, per connection, the bytes the server had read and when it closed.
 */
async function refusingServer(limits: LingerLimits) {
  const closes: { bytesRead: number; at: number }[] = [];
  let answeredAt = 0;
  const server: Server = createServer((req, res) => {
    closeAfterAnswer(req, res, limits);
    res.statusCode = 413;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ type: 'invalid_request', code: 'payload_too_large' }));
    answeredAt = Date.now();
  });
  server.on('connection', (socket: Socket) =>
    socket.once('close', () => closes.push({ bytesRead: socket.bytesRead, at: Date.now() })),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    closes,
    answeredAt: () => answeredAt,
    closed: () =>
      new Promise<{ bytesRead: number; at: number }>((resolve) => {
        const check = () => (closes.length ? resolve(closes[0]) : setTimeout(check, 10));
        check();
      }),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A raw connection that keeps its own write side open after the server's FIN, as a client still uploading. */
function openHalfOpen(
  port: number,
  head: string,
): Promise<{ socket: Socket; received: () => string; events: string[] }> {
  return new Promise((resolve) => {
    let text = '';
    const events: string[] = [];
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      socket.write(head);
      resolve({ socket, received: () => text, events });
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => events.push('end'));
    socket.on('error', (error: NodeJS.ErrnoException) => events.push(`error ${error.code ?? error.message}`));
  });
}

describe('closeAfterAnswer', () => {
  let stop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await stop?.();
    stop = null;
  });

  it('a client writing its whole body before reading gets the answer, and the server read all of it first', async () => {
    const server = await refusingServer({ ...LINGER, ms: 10_000, bytes: 64 * MiB });
    stop = server.stop;
    const body = Buffer.alloc(24 * MiB, 0x61);
    const answer = await new Promise<{ status: number; connection?: string; text: string }>(
      (resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port: server.port,
          path: '/',
          method: 'POST',
          agent: false,
          headers: { 'Content-Length': String(body.length) },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text }),
          );
        });
        req.end(body);
      },
    );
    expect(answer).toEqual({
      status: 413,
      connection: 'close',
      text: JSON.stringify({ type: 'invalid_request', code: 'payload_too_large' }),
    });
    // The server closed only once the declared body was in: nothing left unread, so no reset.
    const closed = await server.closed();
    expect(closed.bytesRead).toBeGreaterThan(body.length);
  });

  it('a client that keeps sending is read no further than the byte bound, after the answer and a FIN', async () => {
    const server = await refusingServer({ ...LINGER, ms: 30_000, bytes: 2 * MiB });
    stop = server.stop;
    const client = await openHalfOpen(
      server.port,
      'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const piece = 'x'.repeat(64 * 1024);
    const chunk = `${piece.length.toString(16)}\r\n${piece}\r\n`;
    let writing = true;
    const pump = async () => {
      while (writing && client.socket.writable) {
        if (!client.socket.write(chunk)) {
          await new Promise((r) => {
            client.socket.once('drain', r);
            client.socket.once('close', r);
          });
        }
      }
    };
    const pumped = pump().catch(() => undefined);
    const closed = await server.closed();
    writing = false;
    await pumped;
    client.socket.destroy();
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 .*\r\n/);
    expect(client.received()).toMatch(/\r\nConnection: close\r\n/i);
    // The server's FIN came first (the answer ended), then the close once the bound was passed.
    expect(client.events[0]).toBe('end');
    expect(closed.bytesRead).toBeGreaterThan(2 * MiB);
    expect(closed.bytesRead).toBeLessThan(2 * MiB + 1 * MiB);
    expect(closed.at - server.answeredAt()).toBeLessThan(20_000);
  });

  it('a client that stops sending without closing is let go after the time bound', async () => {
    const server = await refusingServer({ ...LINGER, ms: 400, bytes: 64 * MiB });
    stop = server.stop;
    const client = await openHalfOpen(
      server.port,
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n' + 'y'.repeat(10_000),
    );
    const closed = await server.closed();
    client.socket.destroy();
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
    const after = closed.at - server.answeredAt();
    expect(after).toBeGreaterThanOrEqual(350);
    expect(after).toBeLessThan(5_000);
  });

  it("the client's own FIN ends the linger at once", async () => {
    const server = await refusingServer({ ...LINGER, ms: 30_000, bytes: 64 * MiB });
    stop = server.stop;
    const client = await openHalfOpen(
      server.port,
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n' + 'y'.repeat(10_000),
    );
    await new Promise((resolve) => client.socket.once('end', resolve));
    client.socket.end();
    const closed = await server.closed();
    expect(closed.at - server.answeredAt()).toBeLessThan(10_000);
    expect(client.events).toEqual(['end']);
  });

  it('past the bound on lingering connections, one more is closed once its answer is written', async () => {
    const server = await refusingServer({ ms: 30_000, bytes: 64 * MiB, sockets: 1 });
    stop = server.stop;
    const head = 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n' + 'y'.repeat(10_000);
    const first = await openHalfOpen(server.port, head);
    await new Promise((resolve) => first.socket.once('end', resolve));
    const second = await openHalfOpen(server.port, head);
    // The second is closed without lingering; the first still lingers (its bound is 30 s).
    const closed = await server.closed();
    expect(second.received()).toMatch(/^HTTP\/1\.1 413 .*\r\n/);
    expect(closed.at - server.answeredAt()).toBeLessThan(5_000);
    expect(server.closes).toHaveLength(1);
    expect(first.socket.destroyed).toBe(false);
    // Once the first has gone, lingering is open again: a third lingers until its client's FIN.
    first.socket.destroy();
    second.socket.destroy();
    while (server.closes.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const third = await openHalfOpen(server.port, head);
    await new Promise((resolve) => third.socket.once('end', resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.closes).toHaveLength(2);
    third.socket.end();
    while (server.closes.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
  });
});
