import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CaptureMemoryBudget } from '../../src/ingest/capture-memory-budget.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

const MiB = 1024 * 1024;

/**
 * A capture upload refused early (an unknown token in its first event) is normally answered once its whole body
 * is in (docs/limits.md), so that a client writing its whole body first still reads the answer. While memory is
 * short (the capture memory budget half used, or refusing), it is answered at once instead, and its connection
 * closed: the rest of its body is not read. The real app on loopback, its real budget held by a request.
 */
describe('capture: a refused upload under memory pressure is not read to its end', () => {
  let t: TestApp;
  let base: string;
  let budget: CaptureMemoryBudget;

  beforeAll(async () => {
    t = await createTestApp({ CAPTURE_MEMORY_BUDGET: '64mb' });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    budget = t.app.get(CaptureMemoryBudget);
  });
  afterAll(async () => {
    await t?.close();
  });

  /**
   * POSTs 6 MiB of events with an unknown token to /e/, slowly (16 KiB every 50 ms: the whole body would take
   * about 20 s), and reports the answer, how many bytes were sent by then, and whether the connection closed.
   */
  function slowUnknownTokenUpload(): Promise<{
    status: number;
    connection: string | undefined;
    code: string;
    sentBefore: number;
    closed: boolean;
  }> {
    const one = JSON.stringify({
      event: 'clicked',
      distinct_id: 'u1',
      properties: { token: 'phc_not_a_known_project_token_000000000000', pad: 'x'.repeat(200) },
    });
    const count = Math.ceil((6 * MiB) / (one.length + 1));
    const body = Buffer.from(`[${Array.from({ length: count }, () => one).join(',')}]`);
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${base}/e/`, {
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
      });
      let sent = 0;
      let answered = false;
      req.on('error', () => undefined);
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error(`no answer within 8 s (${sent} of ${body.length} bytes sent)`));
      }, 8000);
      req.on('response', (res) => {
        answered = true;
        const sentBefore = sent;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          clearTimeout(timer);
          // The server's end of the connection: closed after the answer, or kept for the rest of the body.
          const closedSoon = new Promise<boolean>((r) => {
            req.socket?.once('close', () => r(true));
            setTimeout(() => r(req.socket?.destroyed ?? true), 1000);
          });
          void closedSoon.then((closed) => {
            req.destroy();
            resolve({
              status: res.statusCode ?? 0,
              connection: res.headers.connection,
              code: (JSON.parse(text) as { code: string }).code,
              sentBefore,
              closed,
            });
          });
        });
      });
      const next = () => {
        if (answered || req.destroyed || sent >= body.length) return;
        const piece = body.subarray(sent, sent + 16 * 1024);
        sent += piece.length;
        req.write(piece, () => setTimeout(next, 50));
      };
      next();
    });
  }

  it('answers 401 at once and closes the connection, the rest of the body unread', async () => {
    // Another request holds 40 of the 64 MiB.
    const holder = budget.open();
    await holder.charge(40 * MiB);
    try {
      const answer = await slowUnknownTokenUpload();
      expect(answer).toMatchObject({
        status: 401,
        code: 'authentication_failed',
        connection: 'close',
        closed: true,
      });
      expect(answer.sentBefore).toBeLessThan(2 * MiB);
    } finally {
      holder.release();
    }
    expect(budget.inUse).toBe(0);
  }, 30_000);
});
