import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  captureTableCounts,
  newSessionId,
  readAllSnapshots,
  rr,
  type Rrweb,
  snapshotEvent,
  storedChunks,
} from '../support/recordings.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
/** The app's time: just after the recordings, which would have expired by the real date (retention). */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const OK = { status: 'Ok' };
const NUL = 'nul\u0000here';
const LONE = 'lone\ud800here';

/**
 * The public capture path with small limits, so that each is reached cheaply: events per request, rrweb events
 * per `$snapshot`, depth, values, the per-address concurrency cap, chunk bounds and the per-recording cap; and
 * text PostgreSQL cannot store (NUL, lone surrogates) and reserved object keys.
 */
describe('capture: limits of the public path', () => {
  let t: TestApp;
  let owner: TestUser;
  let token: string;
  let projectId: number;
  let base: string;

  const post = (body: unknown, path = '/s/') => t.http.post(path).send(body as object);
  const recording = async (sessionId: string) => {
    const rows = await t.dataSource.query(
      `SELECT r.event_count, r.snapshot_bytes::int AS snapshot_bytes, r.start_url, r.distinct_id,
              p.properties AS person_properties
         FROM session_recordings r LEFT JOIN persons p ON p.team_id = r.team_id AND p.id = r.person_id WHERE r.session_id = $1`,
      [sessionId],
    );
    return rows[0] as
      | {
          event_count: number;
          snapshot_bytes: number;
          start_url: string | null;
          distinct_id: string;
          person_properties: Record<string, unknown>;
        }
      | undefined;
  };
  const expectRejected = async (
    send: () => Promise<{ status: number; body: unknown }>,
    status: number,
    body: Record<string, unknown>,
  ) => {
    const before = await captureTableCounts(t.dataSource);
    const res = await send();
    expect({ status: res.status, body: res.body }).toEqual({ status, body });
    expect(await captureTableCounts(t.dataSource)).toEqual(before);
  };
  const clicks = (n: number, from = T0) => Array.from({ length: n }, (_, i) => rr.click(from + i));

  beforeAll(async () => {
    t = await createTestApp({
      CAPTURE_MAX_EVENTS: '5',
      CAPTURE_MAX_SNAPSHOT_EVENTS: '10',
      PUBLIC_JSON_MAX_DEPTH: '32',
      PUBLIC_JSON_MAX_VALUES: '2000',
      PUBLIC_MAX_CONCURRENT_PER_IP: '2',
      RECORDING_CHUNK_MAX_EVENTS: '3',
      RECORDING_CHUNK_MAX_BYTES: '2kb',
      RECORDING_SESSION_MAX_EVENTS: '8',
      RECORDING_SESSION_MAX_BYTES: '64kb',
    });
    t.clock.set(NOW);
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await t.factories.user();
    const org = (await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Limits' }).expect(201))
      .body as { teams: { id: number; api_token: string }[] };
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('sizes, found while decoding', () => {
    it('more events than CAPTURE_MAX_EVENTS: 413, nothing stored', async () => {
      const events = Array.from({ length: 6 }, () =>
        snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] }),
      );
      await expectRejected(() => post(events), 413, {
        type: 'invalid_request',
        code: 'payload_too_large',
        detail: 'Too many events in one request: at most 5.',
        attr: null,
      });
      await post(events.slice(0, 5)).expect(200, OK);
    });

    it('more rrweb events in one $snapshot than CAPTURE_MAX_SNAPSHOT_EVENTS: 413, nothing stored', async () => {
      const body = gzipSync(
        JSON.stringify([snapshotEvent({ token, sessionId: newSessionId(), events: clicks(11) })]),
      );
      await expectRejected(
        () => t.http.post('/s/?compression=gzip-js').set('Content-Type', 'text/plain').send(body),
        413,
        {
          type: 'invalid_request',
          code: 'payload_too_large',
          detail: 'Too many rrweb events in one $snapshot event: at most 10.',
          attr: null,
        },
      );
    });

    it('more JSON values than PUBLIC_JSON_MAX_VALUES: 413', async () => {
      const event = snapshotEvent({
        token,
        sessionId: newSessionId(),
        events: [rr.click(T0)],
        properties: { padding: Array.from({ length: 2000 }, (_, i) => i) },
      });
      await expectRejected(() => post([event]), 413, {
        type: 'invalid_request',
        code: 'payload_too_large',
        detail: 'Request body has too many JSON values: at most 2000.',
        attr: null,
      });
    });

    it('JSON nested deeper than PUBLIC_JSON_MAX_DEPTH: 400 on /s/, /flags and /decide, never a 500', async () => {
      const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
      const expected = {
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'The request body is nested too deeply: at most 32 levels of arrays and objects.',
        attr: null,
      };
      await expectRejected(
        () => t.http.post('/s/').set('Content-Type', 'application/json').send(deep),
        400,
        expected,
      );
      const nested = {
        token,
        properties: { $snapshot_data: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) },
      };
      await expectRejected(() => post([nested]), 400, expected);
      for (const path of ['/flags/?v=2', '/decide/?v=3']) {
        const res = await t.http.post(path).set('Content-Type', 'application/json').send(deep);
        expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: expected });
      }
    });

    it('a first event without a token: 401 at once, the rest of the body unread', async () => {
      // 2 MB of empty events after the first: over every limit, yet the answer is the missing token.
      const body = gzipSync(`[{}${',{}'.repeat(700_000)}]`);
      await expectRejected(
        () => t.http.post('/s/?compression=gzip-js').set('Content-Type', 'text/plain').send(body),
        401,
        {
          type: 'authentication_error',
          code: 'not_authenticated',
          detail:
            "No project API key found: send the project's token as the event's 'token' (or '$token', 'api_key', 'properties.token').",
          attr: 'token',
        },
      );
    });

    it('an unknown token in the first event: 401, also when the rest is over the limits', async () => {
      const first = JSON.stringify({ token: 'phc_unknown', event: '$snapshot' });
      const body = gzipSync(`[${first}${',{}'.repeat(700_000)}]`);
      const res = await t.http.post('/s/?compression=gzip-js').set('Content-Type', 'text/plain').send(body);
      // The events limit (5) may be reached before the token lookup answers: either way a 4xx, nothing stored.
      expect([401, 413]).toContain(res.status);
      const small = await post([
        { token: 'phc_unknown', event: '$snapshot' },
        snapshotEvent({ sessionId: newSessionId(), events: [rr.click(T0)] }),
      ]);
      expect(small.status).toBe(401);
      expect(small.body.code).toBe('authentication_failed');
    });
  });

  describe('text that cannot be stored', () => {
    it('drops an event whose distinct_id holds NUL or a lone surrogate and stores the rest of the batch', async () => {
      const good = newSessionId();
      const nul = newSessionId();
      const lone = newSessionId();
      await post([
        snapshotEvent({ token, sessionId: nul, distinctId: NUL, events: [rr.click(T0)] }),
        snapshotEvent({ token, sessionId: good, distinctId: `ok-${good}`, events: [rr.click(T0)] }),
        snapshotEvent({ token, sessionId: lone, distinctId: LONE, events: [rr.click(T0)] }),
      ]).expect(200, OK);
      expect((await recording(good))?.event_count).toBe(1);
      expect(await recording(nul)).toBeUndefined();
      expect(await recording(lone)).toBeUndefined();
    });

    it('drops bad uuid, $set and $set_once values and keeps the rest; the rrweb events are stored as captured', async () => {
      const sessionId = newSessionId();
      const distinctId = `set-${sessionId}`;
      const events: Rrweb[] = [
        rr.meta(T0, `https://shop.example.com/${NUL}`),
        { type: 3, timestamp: T0 + 1, data: { source: 5, id: 9, text: `${NUL} ${LONE}` } },
        rr.meta(T0 + 2, 'https://shop.example.com/clean'),
      ];
      await post([
        snapshotEvent({
          token,
          sessionId,
          distinctId,
          uuid: NUL,
          events,
          properties: {
            $set: { email: 'a@example.com', bad: NUL, [LONE]: 1, nested: { ok: true, no: LONE } },
            $set_once: { first: LONE, kept: 'yes' },
          },
        }),
      ]).expect(200, OK);
      const row = await recording(sessionId);
      expect(row?.person_properties).toEqual({ email: 'a@example.com', nested: { ok: true }, kept: 'yes' });
      // The start URL cannot hold NUL: the next address is taken.
      expect(row?.start_url).toBe('https://shop.example.com/clean');
      const read = await readAllSnapshots(
        t.http,
        `/api/projects/${projectId}/session_recordings/${sessionId}/snapshots`,
        owner.auth,
      );
      expect(read.events.map((e) => e.event)).toEqual(events);
      // Without a usable uuid the content keys the event: sending it again changes nothing.
      const tables = await captureTableCounts(t.dataSource);
      await post([snapshotEvent({ token, sessionId, distinctId, uuid: NUL, events })]).expect(200, OK);
      expect(await captureTableCounts(t.dataSource)).toEqual(tables);
    });

    it('answers a token with NUL 401 on /s/, and 4xx on /flags, /decide, /array/:token/config and /api/shared', async () => {
      const res = await post([
        snapshotEvent({ token: `phc_${NUL}`, sessionId: newSessionId(), events: [rr.click(T0)] }),
      ]);
      expect({ status: res.status, code: res.body.code }).toEqual({
        status: 401,
        code: 'authentication_failed',
      });
      const flags = await t.http.post('/flags/?v=2').send({ token: NUL, distinct_id: 'x' });
      expect({ status: flags.status, code: flags.body.code }).toEqual({
        status: 401,
        code: 'invalid_api_key',
      });
      const decide = await t.http.post('/decide/?v=3').send({ api_key: LONE });
      expect({ status: decide.status, code: decide.body.code }).toEqual({
        status: 401,
        code: 'invalid_api_key',
      });
      const flagsQuery = await t.http.post('/flags/?v=2&token=%00');
      expect(flagsQuery.status).toBe(401);
      for (const path of ['/array/%00/config', '/array/phc_%00/config.js', `/array/${token}%00/config`]) {
        const config = await t.http.get(path);
        expect({ path, status: config.status, code: config.body.code }).toEqual({
          path,
          status: 404,
          code: 'not_found',
        });
      }
      // A path that does not decode as UTF-8 at all.
      const undecodable = await t.http.get('/array/%ED%A0%80/config');
      expect(undecodable.status).toBe(400);
      const shared = await t.http.get('/api/shared/%00/snapshots');
      expect(shared.status).toBeGreaterThanOrEqual(400);
      expect(shared.status).toBeLessThan(500);
    });

    it('handles __proto__, constructor and toString as plain names everywhere', async () => {
      const sessionId = newSessionId();
      const event = JSON.parse(
        JSON.stringify(snapshotEvent({ token, sessionId, distinctId: `proto-${sessionId}`, events: [] })),
      ) as Record<string, unknown>;
      const raw = JSON.stringify(event)
        .replace(
          '"$snapshot_data":[]',
          '"$snapshot_data":[{"type":3,"timestamp":' +
            T0 +
            ',"data":{"source":2,"type":2,"__proto__":{"x":1},"constructor":"c","toString":"t"}}],' +
            '"$set":{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"polluted":1}},"toString":"s"}',
        )
        .replace('"event":"$snapshot"', '"event":"$snapshot","__proto__":{"token":"phc_nope"},"toString":1');
      await t.http.post('/s/').set('Content-Type', 'application/json').send(raw).expect(200, OK);
      const row = await recording(sessionId);
      expect(row?.person_properties).toEqual({
        ['__proto__']: { isAdmin: true },
        constructor: { prototype: { polluted: 1 } },
        toString: 's',
      });
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const [chunk] = await storedChunks(t.dataSource, sessionId);
      expect(JSON.stringify(chunk.events[0])).toBe(
        `{"type":3,"timestamp":${T0},"data":{"source":2,"type":2,"__proto__":{"x":1},"constructor":"c","toString":"t"}}`,
      );
      const recordingRow = await t.http
        .get(`/api/projects/${projectId}/session_recordings/${sessionId}`)
        .set(owner.auth)
        .expect(200);
      expect(recordingRow.body.click_count).toBe(1);
    });
  });

  describe('stored chunks and the per-recording cap', () => {
    it('splits a request into chunks of at most RECORDING_CHUNK_MAX_EVENTS events per window', async () => {
      const sessionId = newSessionId();
      await post([
        snapshotEvent({ token, sessionId, windowId: 'w-1', events: clicks(4).reverse() }),
        snapshotEvent({ token, sessionId, windowId: 'w-2', events: clicks(2, T0 + 100) }),
      ]).expect(200, OK);
      const chunks = await storedChunks(t.dataSource, sessionId);
      expect(chunks.map((c) => [c.window_id, c.event_count])).toEqual([
        ['w-1', 3],
        ['w-1', 1],
        ['w-2', 2],
      ]);
      const read = await readAllSnapshots(
        t.http,
        `/api/projects/${projectId}/session_recordings/${sessionId}/snapshots`,
        owner.auth,
      );
      expect(read.sources).toHaveLength(3);
      expect(read.events.map((e) => e.event)).toEqual([...clicks(4), ...clicks(2, T0 + 100)]);
      expect(chunks[0].events).toEqual(clicks(3));
    });

    it('splits by RECORDING_CHUNK_MAX_BYTES, a larger single event in a chunk of its own', async () => {
      const sessionId = newSessionId();
      const events = [
        rr.input(T0, 'a'.repeat(900)),
        rr.input(T0 + 1, 'b'.repeat(900)),
        rr.input(T0 + 2, 'c'.repeat(3000)),
      ];
      await post([snapshotEvent({ token, sessionId, windowId: 'w', events })]).expect(200, OK);
      const chunks = await storedChunks(t.dataSource, sessionId);
      expect(chunks.map((c) => c.events)).toEqual([[events[0], events[1]], [events[2]]]);
    });

    it('stops storing at RECORDING_SESSION_MAX_EVENTS: later snapshots are dropped, the request still 200', async () => {
      const sessionId = newSessionId();
      await post([
        snapshotEvent({ token, sessionId, events: clicks(3) }),
        snapshotEvent({ token, sessionId, events: clicks(3, T0 + 10) }),
        snapshotEvent({ token, sessionId, events: clicks(3, T0 + 20) }),
      ]).expect(200, OK);
      expect((await recording(sessionId))?.event_count).toBe(6);
      // Two more fit exactly; one more does not.
      await post([snapshotEvent({ token, sessionId, events: clicks(2, T0 + 30) })]).expect(200, OK);
      await post([snapshotEvent({ token, sessionId, events: clicks(1, T0 + 40) })]).expect(200, OK);
      const row = await recording(sessionId);
      expect(row?.event_count).toBe(8);
      const chunks = await storedChunks(t.dataSource, sessionId);
      expect(chunks.reduce((n, c) => n + c.event_count, 0)).toBe(8);
      // Bytes count the stored JSON lines, newline included.
      expect(row?.snapshot_bytes).toBe(
        chunks.reduce(
          (n, c) =>
            n + c.events.reduce((m, e) => m + Buffer.byteLength(JSON.stringify([c.window_id, e])) + 1, 0),
          0,
        ),
      );
    });

    it('stops storing at RECORDING_SESSION_MAX_BYTES', async () => {
      const sessionId = newSessionId();
      const big = (at: number) => [rr.input(at, 'x'.repeat(30_000))];
      await post([snapshotEvent({ token, sessionId, events: big(T0) })]).expect(200, OK);
      await post([snapshotEvent({ token, sessionId, events: big(T0 + 1) })]).expect(200, OK);
      await post([snapshotEvent({ token, sessionId, events: big(T0 + 2) })]).expect(200, OK);
      const row = await recording(sessionId);
      expect(row?.event_count).toBe(2);
      expect(row?.snapshot_bytes).toBeGreaterThan(60_000);
      expect(row?.snapshot_bytes).toBeLessThanOrEqual(64 * 1024);
    });
  });

  describe('per-address concurrency', () => {
    /** A capture request whose body never finishes: it stays in flight until aborted. */
    const hold = (path: string): Promise<ClientRequest> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(`${base}${path}`, {
          method: 'POST',
          agent: false,
          headers: { 'Content-Type': 'application/json', 'Content-Length': '100000' },
        });
        req.on('error', () => undefined);
        req.write('[{"token":"', () => resolve(req));
        req.on('response', () => reject(new Error('a held request was answered')));
      });

    it('answers 429 with Retry-After beyond PUBLIC_MAX_CONCURRENT_PER_IP, across the SDK routes, and frees slots', async () => {
      const held = [await hold('/s/'), await hold('/flags/?v=2')];
      // Let the server see both requests.
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        for (const send of [
          () => post([snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] })]),
          () => t.http.post('/decide/?v=3').send({ token }),
          () => t.http.get(`/array/${token}/config`),
        ]) {
          const res = await send();
          expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
            status: 429,
            retryAfter: '1',
            body: {
              type: 'throttled_error',
              code: 'throttled',
              detail:
                'Too many concurrent requests from this address: at most 2 at a time. Retry after 1 second.',
              attr: null,
            },
          });
        }
        // The API itself is not capped this way.
        await t.http.get('/api/organizations').set(owner.auth).expect(200);
      } finally {
        for (const req of held) req.destroy();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      await post([snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] })]).expect(
        200,
        OK,
      );
      await t.http.get(`/array/${token}/config`).expect(200);
    });
  });
  describe('the analytics capture endpoints', () => {
    const eventCount = async () =>
      ((await t.dataSource.query(`SELECT count(*)::int AS n FROM events`)) as { n: number }[])[0].n;
    const analytics = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ event: 'e', distinct_id: 'limits', token, properties: { i } }));

    it('have the limits of /s/: events per request 413, depth 400, JSON values 413, a gzip bomb 413, a bad gzip 400 — nothing stored', async () => {
      const before = await eventCount();
      const tooMany = await t.http.post('/batch/').send({ api_key: token, batch: analytics(6) });
      expect({ status: tooMany.status, detail: tooMany.body.detail }).toEqual({
        status: 413,
        detail: 'Too many events in one request: at most 5.',
      });
      const deep = await t.http
        .post('/e/')
        .set('Content-Type', 'application/json')
        .send(`${'['.repeat(10_000)}${']'.repeat(10_000)}`);
      expect(deep.status).toBe(400);
      const values = await t.http
        .post('/i/v0/e/')
        .send([{ ...analytics(1)[0], properties: { padding: Array.from({ length: 2000 }, (_, i) => i) } }]);
      expect(values.status).toBe(413);
      // 2 MB of events after a first one with the token, inflated from a few kilobytes.
      const bomb = gzipSync(`[${JSON.stringify(analytics(1)[0])}${',{}'.repeat(700_000)}]`);
      const bombed = await t.http
        .post('/track/?compression=gzip-js')
        .set('Content-Type', 'text/plain')
        .send(bomb);
      expect(bombed.status).toBe(413);
      const corrupt = await t.http
        .post('/capture/')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize((data: unknown) => data as string)
        .send(Buffer.from('not gzip at all'));
      expect(corrupt.status).toBe(400);
      expect(await eventCount()).toBe(before);
      await t.http
        .post('/batch/')
        .send({ api_key: token, batch: analytics(5) })
        .expect(200, { status: 1 });
      expect(await eventCount()).toBe(before + 5);
    });

    it('share the per-address cap of the SDK routes (429)', async () => {
      const held = [
        await new Promise<ClientRequest>((resolve) => {
          const req = httpRequest(`${base}/e/`, {
            method: 'POST',
            agent: false,
            headers: { 'Content-Type': 'application/json', 'Content-Length': '100000' },
          });
          req.on('error', () => undefined);
          req.write('[{"token":"', () => resolve(req));
        }),
        await new Promise<ClientRequest>((resolve) => {
          const req = httpRequest(`${base}/batch/`, {
            method: 'POST',
            agent: false,
            headers: { 'Content-Type': 'application/json', 'Content-Length': '100000' },
          });
          req.on('error', () => undefined);
          req.write('{"batch":[', () => resolve(req));
        }),
      ];
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        const res = await t.http.post('/i/v0/e/').send(analytics(1));
        expect({ status: res.status, retryAfter: res.headers['retry-after'] }).toEqual({
          status: 429,
          retryAfter: '1',
        });
      } finally {
        for (const req of held) req.destroy();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      await t.http.post('/i/v0/e/').send(analytics(1)).expect(200, { status: 1 });
    });
  });
});
