import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

/**
 * Capture answers an error before the whole body is in (an unknown token seen in the first event, a body past
 * its limit): a client that writes its whole body before reading the answer, as most HTTP clients do, must still
 * read that answer rather than a reset connection, and a keep-alive connection must stay usable after it. The
 * rest of the body is read and dropped first (within the body limit), so that the answer is not followed by a
 * close while the client is still writing.
 */
describe('capture: early answers reach a client still sending its body', () => {
  let t: TestApp;
  let base: string;
  let token: string;
  let teamId: number;

  beforeAll(async () => {
    t = await createTestApp({ RECORDING_BODY_LIMIT: '8mb' });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const owner = await t.factories.user();
    const org = (
      await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Early answers' }).expect(201)
    ).body as { teams: { id: number; api_token: string }[] };
    token = org.teams[0].api_token;
    teamId = org.teams[0].id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** About `mb` MB of analytics events for `eventToken`, as one JSON array. */
  const events = (eventToken: string, mb: number) => {
    const one = (i: number) =>
      JSON.stringify({
        event: 'clicked',
        distinct_id: `early-${i % 10}`,
        properties: { token: eventToken, n: i, pad: 'x'.repeat(200) },
      });
    const count = Math.ceil((mb * 1024 * 1024) / one(0).length);
    return Buffer.from(`[${Array.from({ length: count }, (_, i) => one(i)).join(',')}]`);
  };

  /**
   * POSTs `body` in 64 KiB writes (waiting for each to be taken), ending it, and only then reads the answer.
   * Resolves with the answer, or rejects with the connection's error (a reset, a broken pipe).
   */
  const send = (
    body: Buffer,
    agent: Agent | false,
  ): Promise<{ status: number; json: Record<string, unknown> }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(`${base}/e/`, {
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      });
      const write = async () => {
        for (let at = 0; at < body.length; at += 64 * 1024) {
          if (!req.write(body.subarray(at, at + 64 * 1024))) {
            await new Promise((r) => req.once('drain', r));
          }
        }
        req.end();
      };
      write().catch(reject);
    });

  const stored = async () =>
    (
      (await t.dataSource.query(`SELECT count(*)::int AS n FROM events WHERE team_id = $1`, [teamId])) as {
        n: number;
      }[]
    )[0].n;

  it('an unknown token: the client reads the 401 after sending 6 MB, on a closing connection', async () => {
    const res = await send(events('phc_no_such_project_token', 6), false);
    expect(res).toEqual({
      status: 401,
      json: expect.objectContaining({ type: 'authentication_error' }) as unknown,
    });
  });

  it('a keep-alive connection answered early serves the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<unknown>();
      const before = await stored();
      const first = await send(events('phc_no_such_project_token', 4), agent);
      expect(first.status).toBe(401);
      for (const list of Object.values(agent.freeSockets)) for (const s of list ?? []) sockets.add(s);
      expect(sockets.size).toBe(1);
      const second = await send(
        Buffer.from(JSON.stringify([{ event: 'ok', distinct_id: 'd', properties: { token } }])),
        agent,
      );
      expect(second).toEqual({ status: 200, json: { status: 1 } });
      // The same connection carried both.
      const after = new Set<unknown>();
      for (const list of Object.values(agent.freeSockets)) for (const s of list ?? []) after.add(s);
      expect([...after]).toEqual([...sockets]);
      expect(await stored()).toBe(before + 1);
    } finally {
      agent.destroy();
    }
  });

  it('a declared body past RECORDING_BODY_LIMIT: a client writing all 12 MB before reading gets the 413', async () => {
    // Refused from its Content-Length before any of it is read; the connection closes after the answer, once the
    // rest (4 MB past the limit, within the linger's bound) has been read and dropped, so no reset loses it.
    const res = await send(events(token, 12), false);
    expect(res).toEqual({
      status: 413,
      json: expect.objectContaining({ code: 'payload_too_large' }) as unknown,
    });
  });

  it('a body past RECORDING_BODY_LIMIT without Content-Length is answered 413 without waiting for its end', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${base}/e/`, {
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      });
      let answered = false;
      req.on('error', (error) => (answered ? undefined : reject(error)));
      req.on('response', (res) => {
        answered = true;
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      // A body that never ends: only the limit can end the request.
      const one = JSON.stringify({
        event: 'e',
        distinct_id: 'd',
        properties: { token, pad: 'x'.repeat(500) },
      });
      let first = true;
      const chunk = () => {
        const text = `${first ? '[' : ''}${`${one},`.repeat(100)}`;
        first = false;
        return Buffer.from(text);
      };
      // Each chunk handed to the kernel before the next, as long as no answer has come.
      const pump = async () => {
        while (!answered) {
          await new Promise<void>((done, fail) =>
            req.write(chunk(), (error) => (error ? fail(error) : done())),
          );
          await new Promise<void>((done) => setImmediate(done));
        }
      };
      pump().catch((error: Error) => (answered ? undefined : reject(error)));
    });
    // The answer closes the connection, but what the client still sends is read and dropped for a while after it
    // (a lingering close): the client reads the 413, not a reset (EPIPE) on its next write.
    expect(status).toBe(413);
  });

  it.each(['/e/', '/s/'])(
    '%s: a client still sending after the 413 reads it, then the end of the connection, then a reset only',
    async (path) => {
      const events: string[] = [];
      let text = '';
      const socket = connect({ port: Number(new URL(base).port), host: '127.0.0.1', allowHalfOpen: true });
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        if (!text) events.push('answer');
        text += c;
      });
      socket.on('end', () => events.push('end'));
      socket.on('error', (e: NodeJS.ErrnoException) => events.push(`error ${e.code ?? e.message}`));
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      const one = JSON.stringify({
        event: 'e',
        distinct_id: 'd',
        properties: { token, pad: 'x'.repeat(500) },
      });
      const piece = Array.from({ length: 100 }, () => one).join(',');
      let first = true;
      // Writes until the service closes the connection (past the linger's bound): an endless body.
      while (!socket.destroyed && socket.writable) {
        const textChunk = `${first ? '[' : ','}${piece}`;
        first = false;
        if (!socket.write(`${Buffer.byteLength(textChunk).toString(16)}\r\n${textChunk}\r\n`)) {
          // Whichever comes first; the other listener is taken off (one left per wait would pile up).
          await new Promise<void>((resolve) => {
            const done = () => {
              socket.off('drain', done);
              socket.off('close', done);
              resolve();
            };
            socket.once('drain', done);
            socket.once('close', done);
          });
        }
      }
      await closed;
      expect(text).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
      expect(text).toMatch(/\r\nConnection: close\r\n/i);
      // The whole answer, then the service's FIN, before anything went wrong with the writes.
      expect(events.slice(0, 2)).toEqual(['answer', 'end']);
    },
  );
});
