import type { Response } from 'express';

/**
 * Writes a 200 response body piece by piece, waiting for the client to take each piece (backpressure), so
 * memory holds one piece at a time whatever the body's size. An error before the first piece is thrown (the
 * exception filter answers it normally); after it, the connection is cut, which the client sees as a truncated
 * response. A client that goes away stops the iteration.
 */
export async function writeStream(
  res: Response,
  contentType: string,
  body: AsyncIterable<Buffer | string>,
): Promise<void> {
  const closed = new Promise<'closed'>((resolve) => res.once('close', () => resolve('closed')));
  let started = false;
  try {
    for await (const piece of body) {
      if (res.destroyed) return;
      if (!started) {
        started = true;
        res.status(200);
        res.setHeader('Content-Type', contentType);
        res.setHeader('Cache-Control', 'private, no-store');
      }
      if (!res.write(piece)) {
        const drained = new Promise<'drained'>((resolve) => res.once('drain', () => resolve('drained')));
        if ((await Promise.race([drained, closed])) === 'closed') return;
      }
    }
    if (!started) {
      res.status(200);
      res.setHeader('Content-Type', contentType);
    }
    res.end();
  } catch (error) {
    if (!started) throw error;
    res.destroy(error as Error);
  }
}
