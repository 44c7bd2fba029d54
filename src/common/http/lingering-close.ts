import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long after its answer, and how many more bytes, a connection closed after an early answer still reads and
 * drops of what its client sends: enough for a client that writes its whole body before reading (most HTTP
 * clients, a browser posting a recording) to finish its writes and read the answer, bounded so that no client
 * holds the connection, or the service's reads, longer than that. Dropping costs no memory (nothing is kept) and
 * little CPU (the HTTP parser's framing only).
 */
export const LINGER = { ms: 5_000, bytes: 64 * 1024 * 1024, sockets: 256 };

export type LingerLimits = typeof LINGER;

const lingering = new WeakSet<Socket>();
/** Connections lingering now, in this process. Past `LINGER.sockets` a connection is closed at once, as Node does. */
let lingeringNow = 0;

/**
 * Closes the request's connection after its answer, without losing that answer to a client still sending its body
 * (the service read only part of it: past its limit, refused while memory is short, throttled before reading).
 *
 * Closing a socket with unread bytes in its receive buffer makes the kernel send a reset, and a client that is
 * still writing loses the answer it has not read yet (EPIPE or ECONNRESET instead of the 413). So the answer goes
 * out with `Connection: close`, then the connection's write side is closed (FIN: the client sees the answer end),
 * and what the client still sends is read and dropped until it stops (its own FIN, or the declared body's end),
 * for at most `LINGER.ms` and `LINGER.bytes`; only then is the socket closed. At most `LINGER.sockets`
 * connections linger at once (many clients refused at the same moment, the per-address cap's 429 to a flood): past
 * that, a connection is closed as soon as its answer is written, as before. A connection already marked is left
 * as it is. Call it before the answer is sent; on a request whose answer has gone out, it only closes the
 * connection once the client's rest has been dropped within the same bounds.
 */
export function closeAfterAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  limits: LingerLimits = LINGER,
): void {
  const socket = req.socket as Socket | null;
  if (!socket || socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  if (!res.headersSent) res.setHeader('Connection', 'close');
  // A request whose body nobody has read is dumped once answered: the parser then drops the rest without handing
  // it to the request, and nothing here could count it. A read of nothing marks it as read (at most the stream's
  // buffer, 16 KiB, is taken off the wire before the answer).
  if (!req.readableEnded) req.read(0);
  let started = false;
  const closeNow = socket.destroySoon.bind(socket);
  const linger = () => {
    lingeringNow++;
    let dropped = 0;
    let timer: NodeJS.Timeout | undefined = undefined;
    const stop = () => {
      clearTimeout(timer);
      req.off('data', onData);
      socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > limits.bytes) stop();
    };
    timer = setTimeout(stop, limits.ms);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      lingeringNow--;
    });
    // The client's FIN: nothing more will come. The declared body's end: nothing more is owed.
    socket.once('end', stop);
    req.once('end', stop);
    req.once('close', () => (req.complete ? stop() : undefined));
    // The HTTP parser still reads the socket and hands the rest of the body to the request: read in flowing mode
    // without a consumer, it is dropped as it comes.
    req.on('data', onData);
    req.resume();
    socket.resume();
    if (req.readableEnded) stop();
  };
  // Node calls `destroySoon` once an answer marked `Connection: close` is written: it would close the socket
  // at once. It ends the write side instead, then lingers.
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (started || this.destroyed) return;
    started = true;
    if (lingeringNow >= limits.sockets) {
      closeNow();
      return;
    }
    if (this.writable) this.end();
    linger();
  };
  if (res.writableFinished) socket.destroySoon();
}
