import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  captureTableCounts,
  newSessionId,
  rr,
  type Rrweb,
  snapshotEvent,
  storedChunks,
} from '../support/recordings.js';
import { updateAsService } from '../support/test-database.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const OK = { status: 'Ok' };

describe('capture: POST /s/', () => {
  let t: TestApp;
  let owner: TestUser;
  let token: string;
  let projectId: number;

  /** The recording row as stored. */
  const recording = async (sessionId: string) => {
    const rows = await t.dataSource.query(
      `SELECT r.team_id, r.distinct_id, r.start_time, r.end_time, r.click_count, r.keypress_count,
              r.mouse_activity_count, r.console_log_count, r.console_warn_count, r.console_error_count,
              r.active_ms::int AS active_ms, r.event_count, r.start_url, r.snapshot_source, r.deleted_at,
              p.properties AS person_properties,
              (SELECT array_agg(d.distinct_id ORDER BY d.id) FROM person_distinct_ids d WHERE d.team_id = p.team_id AND d.person_id = p.id)
                AS person_distinct_ids
         FROM session_recordings r LEFT JOIN persons p ON p.team_id = r.team_id AND p.id = r.person_id
        WHERE r.session_id = $1`,
      [sessionId],
    );
    return rows[0] as Record<string, unknown> | undefined;
  };

  /** A page load followed by a little activity: 8 events. */
  const pageLoad = (at: number, href = 'https://shop.example.com/'): Rrweb[] => [
    rr.meta(at, href),
    rr.full(at),
    rr.move(at + 500),
    rr.click(at + 1000),
    rr.input(at + 1500),
    rr.console(at + 2000, 'log'),
    rr.console(at + 2100, 'warn'),
    rr.console(at + 2200, 'error'),
  ];

  const post = (body: unknown, path = '/s/') => t.http.post(path).send(body as object);

  beforeAll(async () => {
    // Many parallel requests from one address below: no per-address cap here (its own test covers it).
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0' });
    owner = await t.factories.user();
    const org = (
      await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Capture' }).expect(201)
    ).body as { teams: { id: number; api_token: string }[] };
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('encodings', () => {
    it('accepts a plain JSON array, stores the metadata, the person and the compressed snapshots', async () => {
      const sessionId = newSessionId();
      const events = pageLoad(T0);
      const res = await post([
        snapshotEvent({ token, sessionId, windowId: 'w-1', distinctId: 'ada', events }),
      ]).expect(200);
      expect(res.body).toEqual(OK);
      expect(await recording(sessionId)).toEqual({
        team_id: projectId,
        distinct_id: 'ada',
        start_time: new Date(T0),
        end_time: new Date(T0 + 2200),
        click_count: 1,
        keypress_count: 1,
        mouse_activity_count: 2,
        console_log_count: 1,
        console_warn_count: 1,
        console_error_count: 1,
        // Inactive [T0]; active from the move at +500 to the last console event at +2200.
        active_ms: 1700,
        event_count: 8,
        start_url: 'https://shop.example.com/',
        snapshot_source: 'web',
        deleted_at: null,
        person_properties: {},
        person_distinct_ids: ['ada'],
      });
      const chunks = await storedChunks(t.dataSource, sessionId);
      expect(chunks).toEqual([
        {
          window_id: 'w-1',
          event_count: 8,
          first: new Date(T0).toISOString(),
          last: new Date(T0 + 2200).toISOString(),
          events,
        },
      ]);
      const [{ compressed }] = await t.dataSource.query(
        `SELECT octet_length(data) AS compressed FROM session_recording_snapshots WHERE session_id = $1`,
        [sessionId],
      );
      expect(compressed).toBeLessThan(JSON.stringify(events).length);
    });

    it('accepts a single event object, on /s without the trailing slash', async () => {
      const sessionId = newSessionId();
      await post(snapshotEvent({ token, sessionId, events: pageLoad(T0) }), '/s').expect(200, OK);
      expect((await recording(sessionId))?.event_count).toBe(8);
    });

    it('accepts gzip flagged by ?compression=gzip-js as text/plain, as posthog-js sends it', async () => {
      const sessionId = newSessionId();
      const body = gzipSync(JSON.stringify([snapshotEvent({ token, sessionId, events: pageLoad(T0) })]));
      await t.http
        .post(`/s/?compression=gzip-js&ip=1&_=${T0}&ver=1.200.0`)
        .set('Content-Type', 'text/plain')
        .send(body)
        .expect(200, OK);
      expect((await recording(sessionId))?.click_count).toBe(1);
    });

    it('accepts gzip declared by Content-Encoding', async () => {
      const sessionId = newSessionId();
      const body = gzipSync(JSON.stringify([snapshotEvent({ token, sessionId, events: pageLoad(T0) })]));
      await t.http
        .post('/s/')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        // Send the bytes as they are (the client would otherwise serialise a Buffer as JSON).
        .serialize((data: unknown) => data as string)
        .send(body)
        .expect(200, OK);
      expect((await recording(sessionId))?.event_count).toBe(8);
    });

    it('recognises gzip by its magic bytes with no hint at all', async () => {
      const sessionId = newSessionId();
      const body = gzipSync(JSON.stringify([snapshotEvent({ token, sessionId, events: pageLoad(T0) })]));
      await t.http.post('/s/').set('Content-Type', 'application/octet-stream').send(body).expect(200, OK);
      expect((await recording(sessionId))?.event_count).toBe(8);
    });

    it('accepts an all-base64 body', async () => {
      const sessionId = newSessionId();
      const body = Buffer.from(
        JSON.stringify([snapshotEvent({ token, sessionId, events: pageLoad(T0) })]),
      ).toString('base64');
      await t.http.post('/s/').set('Content-Type', 'text/plain').send(body).expect(200, OK);
      expect((await recording(sessionId))?.event_count).toBe(8);
    });

    it('accepts a form body with data=JSON and data=base64 (compression=base64)', async () => {
      const plain = newSessionId();
      const json = JSON.stringify([snapshotEvent({ token, sessionId: plain, events: pageLoad(T0) })]);
      await t.http
        .post('/s/')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`data=${encodeURIComponent(json)}`)
        .expect(200, OK);
      expect((await recording(plain))?.event_count).toBe(8);

      const b64 = newSessionId();
      const data = Buffer.from(
        JSON.stringify([snapshotEvent({ token, sessionId: b64, events: pageLoad(T0) })]),
      ).toString('base64');
      await t.http
        .post('/s/?compression=base64')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`data=${encodeURIComponent(data)}`)
        .expect(200, OK);
      expect((await recording(b64))?.event_count).toBe(8);
    });

    it('accepts a body far above BODY_LIMIT (1mb) on the capture path', async () => {
      const sessionId = newSessionId();
      const events: Rrweb[] = [rr.meta(T0, 'https://big.example.com/')];
      for (let i = 0; i < 6000; i++) events.push({ ...rr.input(T0 + i, 'x'.repeat(200)) });
      const body = JSON.stringify([snapshotEvent({ token, sessionId, events })]);
      expect(body.length).toBeGreaterThan(1024 * 1024);
      await t.http.post('/s/').set('Content-Type', 'application/json').send(body).expect(200, OK);
      expect((await recording(sessionId))?.keypress_count).toBe(6000);
    });

    it('ignores the other events of a mixed batch', async () => {
      const sessionId = newSessionId();
      await post([
        { event: '$pageview', properties: { token, $current_url: 'https://x/' }, distinct_id: 'ada' },
        snapshotEvent({ token, sessionId, events: pageLoad(T0) }),
        { event: '$autocapture', properties: { token }, distinct_id: 'ada' },
      ]).expect(200, OK);
      expect((await recording(sessionId))?.event_count).toBe(8);
      const before = await captureTableCounts(t.dataSource);
      await post([{ event: '$pageview', properties: { token }, distinct_id: 'nobody-new' }]).expect(200, OK);
      expect(await captureTableCounts(t.dataSource)).toEqual(before);
    });

    it('finds the token at the top level too ($token, api_key)', async () => {
      const a = newSessionId();
      await post({ ...snapshotEvent({ sessionId: a, events: pageLoad(T0) }), $token: token }).expect(200, OK);
      const b = newSessionId();
      await post({ api_key: token, batch: [snapshotEvent({ sessionId: b, events: pageLoad(T0) })] }).expect(
        200,
        OK,
      );
      expect((await recording(a))?.team_id).toBe(projectId);
      expect((await recording(b))?.team_id).toBe(projectId);
    });
  });

  describe('rejections store nothing', () => {
    const good = () => snapshotEvent({ token, sessionId: newSessionId(), events: pageLoad(T0) });

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

    it('unknown token: 401 authentication_failed', async () => {
      await expectRejected(
        () => post([{ ...good(), properties: { ...(good().properties as object), token: 'phc_nope' } }]),
        401,
        {
          type: 'authentication_error',
          code: 'authentication_failed',
          detail: 'Project API key invalid. You can find your project API key in your project settings.',
          attr: 'token',
        },
      );
    });

    it('missing token: 401 not_authenticated', async () => {
      await expectRejected(
        () => post([snapshotEvent({ sessionId: newSessionId(), events: pageLoad(T0) })]),
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

    it.each([
      [
        'missing session id',
        { $session_id: undefined },
        'required',
        '$session_id is required.',
        '1__properties__$session_id',
      ],
      [
        'bad session id',
        { $session_id: 'not allowed!' },
        'invalid_input',
        "$session_id may contain only letters, digits and '-'.",
        '1__properties__$session_id',
      ],
      [
        'too long session id',
        { $session_id: 'a'.repeat(71) },
        'max_length',
        '$session_id must have at most 70 characters.',
        '1__properties__$session_id',
      ],
      [
        'missing snapshot data',
        { $snapshot_data: undefined },
        'required',
        '$snapshot_data is required.',
        '1__properties__$snapshot_data',
      ],
      [
        'snapshot data that is not rrweb events',
        { $snapshot_data: [{ type: 3 }] },
        'invalid_input',
        'An rrweb event needs a timestamp in milliseconds since the epoch.',
        '1__properties__$snapshot_data__0__timestamp',
      ],
    ])('%s: 400 for the whole batch', async (_name, properties, code, detail, attr) => {
      const bad = good();
      bad.properties = { ...(bad.properties as object), ...properties };
      await expectRejected(() => post([good(), bad]), 400, { type: 'validation_error', code, detail, attr });
    });

    it('missing distinct_id: 400', async () => {
      const bad = good();
      delete bad.distinct_id;
      await expectRejected(() => post([bad]), 400, {
        type: 'validation_error',
        code: 'required',
        detail: 'distinct_id is required.',
        attr: '0__distinct_id',
      });
    });

    it('too long distinct_id: 400 max_length', async () => {
      await expectRejected(() => post({ ...good(), distinct_id: 'd'.repeat(201) }), 400, {
        type: 'validation_error',
        code: 'max_length',
        detail: 'distinct_id must have at most 200 characters.',
        attr: 'distinct_id',
      });
    });

    it('invalid JSON: 400 parse_error', async () => {
      await expectRejected(
        () => t.http.post('/s/').set('Content-Type', 'application/json').send('[{"event": "$snapshot",'),
        400,
        {
          type: 'validation_error',
          code: 'parse_error',
          detail: 'Malformed request body: not valid JSON.',
          attr: null,
        },
      );
    });

    it('bad gzip: 400', async () => {
      const truncated = gzipSync(JSON.stringify([good()])).subarray(0, 30);
      await expectRejected(
        () => t.http.post('/s/?compression=gzip-js').set('Content-Type', 'text/plain').send(truncated),
        400,
        {
          type: 'validation_error',
          code: 'invalid_input',
          detail: 'The request body is not valid gzip data.',
          attr: null,
        },
      );
    });

    it('an empty batch and a body that is not events: 400', async () => {
      await expectRejected(() => post([]), 400, {
        type: 'validation_error',
        code: 'required',
        detail: 'The request contains no events.',
        attr: null,
      });
      await expectRejected(() => t.http.post('/s/').set('Content-Type', 'application/json').send('42'), 400, {
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Expected a JSON array of events or one event object.',
        attr: null,
      });
    });
  });

  describe('metadata across requests', () => {
    it('widens the time range, sums counts and active time, and keeps the earliest start_url', async () => {
      const sessionId = newSessionId();
      const send = (events: Rrweb[], windowId = 'w-1') =>
        post([snapshotEvent({ token, sessionId, windowId, distinctId: 'grace', events })]).expect(200, OK);
      await send([
        rr.meta(T0 + 60_000, 'https://shop.example.com/cart'),
        rr.click(T0 + 61_000),
        rr.click(T0 + 62_000),
      ]);
      // An earlier page, arriving later (another tab), with a 4999 ms gap (one segment) ...
      await send([rr.meta(T0, 'https://shop.example.com/'), rr.move(T0 + 1000), rr.move(T0 + 5999)], 'w-2');
      // ... and a 5001 ms gap (two segments of 1 ms each).
      await send([rr.scroll(T0 + 100_000), rr.scroll(T0 + 105_001)]);
      const row = await recording(sessionId);
      expect(row).toMatchObject({
        start_time: new Date(T0),
        end_time: new Date(T0 + 105_001),
        click_count: 2,
        mouse_activity_count: 4,
        active_ms: 1000 + 4999 + 2,
        event_count: 8,
        start_url: 'https://shop.example.com/',
      });
      const chunks = await storedChunks(t.dataSource, sessionId);
      expect(chunks.map((c) => [c.window_id, c.event_count])).toEqual([
        ['w-2', 3],
        ['w-1', 3],
        ['w-1', 2],
      ]);
    });

    it('applies $set and $set_once to the person', async () => {
      const sessionId = newSessionId();
      const distinctId = `set-${sessionId}`;
      await post([
        snapshotEvent({
          token,
          sessionId,
          distinctId,
          events: pageLoad(T0),
          properties: { $set: { email: 'set@example.com', plan: 'free' }, $set_once: { first_seen: 'a' } },
        }),
      ]).expect(200);
      await post([
        snapshotEvent({
          token,
          sessionId,
          distinctId,
          events: pageLoad(T0 + 10_000),
          properties: { $set: { plan: 'pro' }, $set_once: { first_seen: 'b', referrer: 'x' } },
        }),
      ]).expect(200);
      expect((await recording(sessionId))?.person_properties).toEqual({
        email: 'set@example.com',
        plan: 'pro',
        first_seen: 'a',
        referrer: 'x',
      });
    });

    it('keeps web unless $snapshot_source is mobile', async () => {
      const sessionId = newSessionId();
      await post([
        snapshotEvent({ token, sessionId, events: pageLoad(T0), properties: { $snapshot_source: 'mobile' } }),
      ]).expect(200);
      expect((await recording(sessionId))?.snapshot_source).toBe('mobile');
    });
  });

  describe('idempotency', () => {
    it('re-sending the same request (same uuids) changes nothing', async () => {
      const sessionId = newSessionId();
      const body = [
        snapshotEvent({ token, sessionId, events: pageLoad(T0) }),
        snapshotEvent({ token, sessionId, events: pageLoad(T0 + 30_000, 'https://shop.example.com/b') }),
      ];
      await post(body).expect(200, OK);
      const first = await recording(sessionId);
      const tables = await captureTableCounts(t.dataSource);
      await post(body).expect(200, OK);
      await post(gzipSync(JSON.stringify(body))).expect(200, OK);
      expect(await recording(sessionId)).toEqual(first);
      expect(await captureTableCounts(t.dataSource)).toEqual(tables);
      expect(first?.click_count).toBe(2);
    });

    it('counts only the new events of a partly re-sent request', async () => {
      const sessionId = newSessionId();
      const a = snapshotEvent({ token, sessionId, events: [rr.click(T0)] });
      const b = snapshotEvent({ token, sessionId, events: [rr.click(T0 + 1000)] });
      await post([a]).expect(200);
      await post([a, b]).expect(200);
      expect((await recording(sessionId))?.click_count).toBe(2);
      expect((await storedChunks(t.dataSource, sessionId)).map((c) => c.event_count)).toEqual([1, 1]);
    });

    it('without uuids, the same window and snapshot data is the same event', async () => {
      const sessionId = newSessionId();
      const event = snapshotEvent({
        token,
        sessionId,
        uuid: null,
        events: [rr.click(T0), rr.click(T0 + 10)],
      });
      await post([event, event]).expect(200);
      await post([event]).expect(200);
      expect((await recording(sessionId))?.click_count).toBe(2);
      const other = snapshotEvent({ token, sessionId, uuid: null, events: [rr.click(T0 + 20)] });
      await post([other]).expect(200);
      expect((await recording(sessionId))?.click_count).toBe(3);
    });
  });

  describe('concurrency', () => {
    it('parallel requests for one session lose no update', async () => {
      const sessionId = newSessionId();
      const n = 40;
      const responses = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          post([
            snapshotEvent({
              token,
              sessionId,
              distinctId: `parallel-${sessionId}`,
              windowId: `w-${i % 3}`,
              events: [
                rr.click(T0 + i * 10_000),
                rr.input(T0 + i * 10_000 + 100),
                rr.console(T0 + i * 10_000 + 200, i % 2 ? 'warn' : 'error'),
                rr.move(T0 + i * 10_000 + 1000),
              ],
            }),
          ]),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(n).fill(200));
      expect(await recording(sessionId)).toMatchObject({
        start_time: new Date(T0),
        end_time: new Date(T0 + (n - 1) * 10_000 + 1000),
        click_count: n,
        keypress_count: n,
        mouse_activity_count: 2 * n,
        console_warn_count: n / 2,
        console_error_count: n / 2,
        active_ms: 1000 * n,
        event_count: 4 * n,
        person_distinct_ids: [`parallel-${sessionId}`],
      });
      const chunks = await storedChunks(t.dataSource, sessionId);
      expect(chunks).toHaveLength(n);
      expect(chunks.reduce((sum, c) => sum + c.event_count, 0)).toBe(4 * n);
      const [{ count }] = await t.dataSource.query(
        `SELECT count(*)::int AS count FROM session_recordings WHERE session_id = $1`,
        [sessionId],
      );
      expect(count).toBe(1);
    });

    it('concurrent first requests of one distinct id create one person', async () => {
      const distinctId = `first-${newSessionId()}`;
      const sessions = Array.from({ length: 12 }, () => newSessionId());
      await Promise.all(
        sessions.map((sessionId) =>
          post([snapshotEvent({ token, sessionId, distinctId, events: pageLoad(T0) })]).expect(200),
        ),
      );
      const persons = await t.dataSource.query(
        `SELECT person_id FROM person_distinct_ids WHERE distinct_id = $1 AND team_id = $2`,
        [distinctId, projectId],
      );
      expect(persons).toHaveLength(1);
      const linked = await t.dataSource.query(
        `SELECT DISTINCT person_id FROM session_recordings WHERE session_id = ANY($1)`,
        [sessions],
      );
      expect(linked).toEqual([{ person_id: persons[0].person_id }]);
      const [{ n }] = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM persons p WHERE NOT EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.team_id = p.team_id AND d.person_id = p.id)`,
      );
      expect(n).toBe(0);
    });

    it('keeps the project counter exact under concurrent new sessions and mixed requests', async () => {
      const sessions = Array.from({ length: 15 }, () => newSessionId());
      await Promise.all(
        sessions.flatMap((sessionId, i) => [
          post([
            snapshotEvent({ token, sessionId, distinctId: `mix-${i % 4}`, events: pageLoad(T0) }),
            snapshotEvent({
              token,
              sessionId: sessions[(i + 1) % sessions.length],
              distinctId: `mix-${i % 3}`,
              events: [rr.click(T0 + i)],
            }),
          ]).expect(200),
        ]),
      );
      const [{ counted, actual }] = await t.dataSource.query(
        `SELECT (SELECT recordings::int FROM session_recording_counts WHERE team_id = $1) AS counted,
                (SELECT count(*)::int FROM session_recordings WHERE team_id = $1 AND deleted_at IS NULL) AS actual`,
        [projectId],
      );
      expect(counted).toBe(actual);
    });
  });

  describe('deleted recordings', () => {
    it('drops later snapshots of a deleted session (still 200)', async () => {
      const sessionId = newSessionId();
      await post([snapshotEvent({ token, sessionId, events: pageLoad(T0) })]).expect(200);
      await updateAsService(
        t.dataSource,
        `UPDATE session_recordings SET deleted_at = now() WHERE session_id = $1`,
        [sessionId],
      );
      const row = await recording(sessionId);
      const tables = await captureTableCounts(t.dataSource);
      await post([
        snapshotEvent({ token, sessionId, distinctId: `new-${sessionId}`, events: pageLoad(T0 + 50_000) }),
      ]).expect(200, OK);
      expect(await recording(sessionId)).toEqual(row);
      expect(await captureTableCounts(t.dataSource)).toEqual(tables);
    });
  });
});

describe('capture: organization deletion', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('deleting an organization removes its persons, recordings, snapshots and counter', async () => {
    const owner = await t.factories.user();
    const org = (await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Doomed' }).expect(201))
      .body as {
      id: string;
      teams: { id: number; api_token: string }[];
    };
    const token = org.teams[0].api_token;
    for (let i = 0; i < 3; i++) {
      await t.http
        .post('/s/')
        .send([
          snapshotEvent({
            token,
            sessionId: newSessionId(),
            distinctId: `d${i}`,
            events: [rr.click(T0 + i)],
          }),
        ])
        .expect(200);
    }
    const [{ counted }] = await t.dataSource.query(
      'SELECT recordings::int AS counted FROM session_recording_counts WHERE team_id = $1',
      [org.teams[0].id],
    );
    expect(counted).toBe(3);
    await t.http.delete(`/api/organizations/${org.id}`).set(owner.auth).expect(204);
    expect(await captureTableCounts(t.dataSource)).toEqual({
      recordings: 0,
      persons: 0,
      distinct_ids: 0,
      snapshots: 0,
      event_keys: 0,
    });
    const counters = await t.dataSource.query('SELECT * FROM session_recording_counts');
    expect(counters).toEqual([]);
  });
});

describe('capture: RECORDING_BODY_LIMIT', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ RECORDING_BODY_LIMIT: '32kb' });
    const owner = await t.factories.user();
    const org = (await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Limits' }).expect(201))
      .body as {
      teams: { api_token: string }[];
    };
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  const TOO_LARGE = {
    type: 'invalid_request',
    code: 'payload_too_large',
    detail: 'Request body is too large: at most 32768 bytes.',
    attr: null,
  };

  it('answers a body over the limit with 413 and stores nothing', async () => {
    const before = await captureTableCounts(t.dataSource);
    const events = Array.from({ length: 400 }, (_, i) => rr.input(T0 + i, 'x'.repeat(100)));
    const body = JSON.stringify([snapshotEvent({ token, sessionId: newSessionId(), events })]);
    expect(body.length).toBeGreaterThan(32 * 1024);
    const res = await t.http.post('/s/').set('Content-Type', 'text/plain').send(body);
    expect({ status: res.status, body: res.body }).toEqual({ status: 413, body: TOO_LARGE });
    expect(await captureTableCounts(t.dataSource)).toEqual(before);
  });

  it('answers a gzip bomb with 413 (the decompressed size is bounded too)', async () => {
    const events = [rr.input(T0, ' '.repeat(5 * 1024 * 1024))];
    const body = gzipSync(JSON.stringify([snapshotEvent({ token, sessionId: newSessionId(), events })]));
    expect(body.length).toBeLessThan(32 * 1024);
    const res = await t.http.post('/s/?compression=gzip-js').set('Content-Type', 'text/plain').send(body);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      ...TOO_LARGE,
      detail: 'Request body is too large: at most 32768 bytes (decompressed).',
    });
  });

  it('accepts a compressed body whose JSON fits', async () => {
    const sessionId = newSessionId();
    const events = Array.from({ length: 100 }, (_, i) => rr.click(T0 + i));
    const body = gzipSync(JSON.stringify([snapshotEvent({ token, sessionId, events })]));
    await t.http.post('/s/?compression=gzip-js').set('Content-Type', 'text/plain').send(body).expect(200, OK);
    // 200 alone would not tell stored from dropped: the recording holds all 100 clicks.
    const rows = await t.dataSource.query(
      'SELECT click_count, event_count FROM session_recordings WHERE session_id = $1',
      [sessionId],
    );
    expect(rows).toEqual([{ click_count: 100, event_count: 100 }]);
  });
});
