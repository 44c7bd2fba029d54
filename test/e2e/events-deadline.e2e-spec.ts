import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

/**
 * Analytics capture keeps REQUEST_TIMEOUT_MS: a request answered 503 `timeout` ("Nothing of it was stored") has
 * stored nothing — persons, distinct ids, events, recordings — also later; its transaction ends at the deadline
 * rather than when its work would have ended; a request answered 200 stored all of it. The persons work of one
 * request is bounded: EVENTS_MAX_PERSON_LINKS_PER_REQUEST links, EVENTS_MAX_PERSONS_PER_REQUEST distinct ids.
 */
describe('events capture keeps its deadline', () => {
  let t: TestApp;
  let token: string;
  let projectId: number;

  const counts = async () => {
    const [row] = await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM events WHERE team_id = $1) AS events,
              (SELECT count(*)::int FROM persons WHERE team_id = $1) AS persons,
              (SELECT count(*)::int FROM person_distinct_ids WHERE team_id = $1) AS distinct_ids,
              (SELECT count(*)::int FROM session_recordings WHERE team_id = $1) AS recordings`,
      [projectId],
    );
    return row as { events: number; persons: number; distinct_ids: number; recordings: number };
  };
  /** Backends of the test database, other than this query's, inside a transaction or running a statement. */
  const busyBackends = async () => {
    const [row] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
          AND state <> 'idle'`,
    );
    return (row as { n: number }).n;
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** `pairs` anonymous and known persons (one event each), then the batch of `$identify` merging each pair. */
  const mergeChain = (prefix: string, pairs: number) => {
    const seed = [];
    const identify = [];
    for (let i = 0; i < pairs; i++) {
      seed.push({ event: 'seen', uuid: randomUUID(), distinct_id: `${prefix}-anon-${i}`, properties: {} });
      seed.push({ event: 'seen', uuid: randomUUID(), distinct_id: `${prefix}-user-${i}`, properties: {} });
      identify.push({
        event: '$identify',
        uuid: randomUUID(),
        distinct_id: `${prefix}-user-${i}`,
        properties: {
          $anon_distinct_id: `${prefix}-anon-${i}`,
          $set: { email: `${prefix}-${i}@example.com` },
        },
      });
    }
    return { seed: { api_key: token, batch: seed }, identify: { api_key: token, batch: identify } };
  };

  beforeAll(async () => {
    t = await createTestApp({
      PUBLIC_MAX_CONCURRENT_PER_IP: '0',
      EVENTS_MAX_PERSON_LINKS_PER_REQUEST: '100000',
      REQUEST_TIMEOUT_MS: '120000',
    });
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Deadlines');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  // 120 s: the chain within the deadline (3,000 merges in one request) takes 15-30 s on a busy two-core machine.
  it('a merge chain past REQUEST_TIMEOUT_MS: 503 timeout, nothing of it stored, its transaction ended at the deadline; within it: 200, all stored', async () => {
    const pairs = 3000;
    // Within the deadline: every merge, event and property stored.
    const full = mergeChain('full', pairs);
    await t.http.post('/batch/').send(full.seed).expect(200, { status: 1 });
    const seeded = await counts();
    const started = Date.now();
    await t.http.post('/batch/').send(full.identify).expect(200, { status: 1 });
    const fullMs = Date.now() - started;
    expect(await counts()).toEqual({
      events: seeded.events + pairs,
      persons: seeded.persons - pairs,
      distinct_ids: seeded.distinct_ids,
      recordings: 0,
    });
    const [merged] = await t.dataSource.query(
      `SELECT count(DISTINCT d.person_id)::int AS persons, count(*) FILTER (WHERE p.is_identified)::int AS identified,
              count(*) FILTER (WHERE p.properties->>'email' LIKE 'full-%')::int AS emails
         FROM person_distinct_ids d JOIN persons p ON p.team_id = d.team_id AND p.id = d.person_id
        WHERE d.team_id = $1 AND d.distinct_id LIKE 'full-%'`,
      [projectId],
    );
    expect(merged).toEqual({ persons: pairs, identified: 2 * pairs, emails: 2 * pairs });

    // The same work with a deadline of a tenth of the time it took: answered 503 at the deadline, nothing kept.
    const timeoutMs = Math.max(300, Math.floor(fullMs / 10));
    const short = await createTestApp(
      {
        REQUEST_TIMEOUT_MS: String(timeoutMs),
        PUBLIC_MAX_CONCURRENT_PER_IP: '0',
        EVENTS_MAX_PERSON_LINKS_PER_REQUEST: '100000',
      },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const cut = mergeChain('cut', pairs);
      await t.http.post('/batch/').send(cut.seed).expect(200, { status: 1 });
      const before = await counts();
      const res = await short.http.post('/batch/').send(cut.identify);
      const answeredAt = Date.now();
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 503,
        body: {
          type: 'server_error',
          code: 'timeout',
          detail: `The request did not complete within ${timeoutMs} ms. Nothing of it was stored; it may be retried.`,
          attr: null,
        },
      });
      // The work stops at the deadline: its transaction has ended well before the whole chain would have.
      let busy = await busyBackends();
      while (busy > 0 && Date.now() - answeredAt < fullMs) {
        await sleep(50);
        busy = await busyBackends();
      }
      const endedAfterMs = Date.now() - answeredAt;
      expect({ busy, endedWithinHalfTheWork: endedAfterMs < fullMs / 2 }).toEqual({
        busy: 0,
        endedWithinHalfTheWork: true,
      });
      // Nothing of the request, then or later.
      await sleep(Math.min(2000, fullMs));
      expect(await counts()).toEqual(before);
      const [unmerged] = await t.dataSource.query(
        `SELECT count(DISTINCT person_id)::int AS persons FROM person_distinct_ids
          WHERE team_id = $1 AND distinct_id LIKE 'cut-%'`,
        [projectId],
      );
      expect(unmerged).toEqual({ persons: 2 * pairs });
    } finally {
      await short.close();
    }
  }, 120_000);

  it('/e/ with events and a recording whose row is held: 503 within the deadline, neither the events nor the persons stored', async () => {
    const sessionId = `held-${randomUUID()}`;
    const snapshot = (distinctId: string) => ({
      event: '$snapshot',
      distinct_id: distinctId,
      properties: {
        token,
        $session_id: sessionId,
        $window_id: 'w1',
        $snapshot_data: [{ type: 4, timestamp: Date.now(), data: { href: 'https://x.example/' } }],
      },
    });
    await t.http
      .post('/e/')
      .send([snapshot('viewer')])
      .expect(200);
    const short = await createTestApp(
      {
        REQUEST_TIMEOUT_MS: '1500',
        DATABASE_STATEMENT_TIMEOUT_MS: '10000',
        PUBLIC_MAX_CONCURRENT_PER_IP: '0',
      },
      { databaseUrl: t.databaseUrl },
    );
    const client = new pg.Client({ connectionString: t.databaseUrl });
    await client.connect();
    try {
      const before = await counts();
      await client.query('BEGIN');
      await client.query(
        `SELECT 1 FROM session_recordings WHERE team_id = $1 AND session_id = $2 FOR UPDATE`,
        [projectId, sessionId],
      );
      const body = [
        {
          event: '$pageview',
          uuid: randomUUID(),
          distinct_id: 'newcomer',
          properties: { token, $set: { a: 1 } },
        },
        snapshot('viewer'),
      ];
      const started = Date.now();
      const res = await short.http.post('/e/').send(body);
      const elapsed = Date.now() - started;
      await client.query('COMMIT');
      expect({ status: res.status, code: (res.body as { code?: string }).code }).toEqual({
        status: 503,
        code: expect.stringMatching(/^(timeout|unavailable)$/),
      });
      // Neither then nor once the recording is free.
      await sleep(1000);
      expect(await counts()).toEqual(before);
      expect(res.headers['retry-after']).toBe('5');
      // Answered at the deadline, not when DATABASE_STATEMENT_TIMEOUT_MS ended the wait.
      expect(elapsed).toBeLessThan(8000);
      // Sent again with the recording free, the request is stored whole.
      await short.http.post('/e/').send(body).expect(200);
      expect(await counts()).toEqual({
        ...before,
        events: before.events + 1,
        persons: before.persons + 1,
        distinct_ids: before.distinct_ids + 1,
      });
    } finally {
      await client.end();
      await short.close();
    }
  });

  it('/s/ behind a held recording: 503 at the deadline, and its lock wait ends then too, not at DATABASE_STATEMENT_TIMEOUT_MS', async () => {
    const sessionId = `held-s-${randomUUID()}`;
    const snapshot = {
      event: '$snapshot',
      distinct_id: 'viewer-s',
      properties: {
        token,
        $session_id: sessionId,
        $window_id: 'w1',
        $snapshot_data: [{ type: 4, timestamp: Date.now(), data: { href: 'https://x.example/' } }],
      },
    };
    await t.http.post('/s/').send([snapshot]).expect(200);
    const short = await createTestApp(
      {
        REQUEST_TIMEOUT_MS: '1500',
        DATABASE_STATEMENT_TIMEOUT_MS: '60000',
        PUBLIC_MAX_CONCURRENT_PER_IP: '0',
      },
      { databaseUrl: t.databaseUrl },
    );
    const client = new pg.Client({ connectionString: t.databaseUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `SELECT 1 FROM session_recordings WHERE team_id = $1 AND session_id = $2 FOR UPDATE`,
        [projectId, sessionId],
      );
      const res = await short.http.post('/s/').send([{ ...snapshot, uuid: randomUUID() }]);
      expect(res.status).toBe(503);
      // Still holding the recording: the request's statement has stopped waiting for it.
      const answeredAt = Date.now();
      let waiting = 1;
      while (waiting > 0 && Date.now() - answeredAt < 10_000) {
        const [row] = await t.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        waiting = (row as { n: number }).n;
        if (waiting) await sleep(100);
      }
      expect({ waiting, within: Date.now() - answeredAt < 10_000 }).toEqual({ waiting: 0, within: true });
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
      await short.close();
    }
  });

  describe('persons work per request is bounded', () => {
    let capped: TestApp;
    beforeAll(async () => {
      capped = await createTestApp(
        {
          PUBLIC_MAX_CONCURRENT_PER_IP: '0',
          EVENTS_MAX_PERSON_LINKS_PER_REQUEST: '5',
          EVENTS_MAX_PERSONS_PER_REQUEST: '20',
        },
        { databaseUrl: t.databaseUrl },
      );
    });
    afterAll(async () => {
      await capped?.close();
    });

    const links = (prefix: string, n: number, event = '$identify') =>
      Array.from({ length: n }, (_, i) => ({
        event,
        uuid: randomUUID(),
        distinct_id: `${prefix}-user-${i}`,
        properties:
          event === '$identify'
            ? { $anon_distinct_id: `${prefix}-anon-${i}` }
            : { alias: `${prefix}-anon-${i}` },
      }));

    it('refuses more links than EVENTS_MAX_PERSON_LINKS_PER_REQUEST with 400 (attr event), storing nothing; at the limit stores all', async () => {
      const before = await counts();
      const over = [
        ...links('l', 3),
        ...links('m', 2, '$create_alias'),
        ...links('n', 1, '$merge_dangerously'),
      ];
      const res = await capped.http.post('/batch/').send({ api_key: token, batch: over });
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 400,
        body: {
          type: 'validation_error',
          code: 'invalid_input',
          detail: expect.stringContaining('EVENTS_MAX_PERSON_LINKS_PER_REQUEST') as unknown,
          attr: 'event',
        },
      });
      expect((res.body as { detail: string }).detail).toContain(
        'more than 5 events that link two distinct ids',
      );
      expect(await counts()).toEqual(before);
      await capped.http
        .post('/batch/')
        .send({ api_key: token, batch: [...links('l', 3), ...links('n', 2, '$merge_dangerously')] })
        .expect(200, { status: 1 });
      expect(await counts()).toEqual({
        ...before,
        events: before.events + 5,
        persons: before.persons + 5,
        distinct_ids: before.distinct_ids + 10,
      });
      const [row] = await t.dataSource.query(
        `SELECT count(DISTINCT person_id)::int AS persons FROM person_distinct_ids
          WHERE team_id = $1 AND distinct_id IN ('n-user-1', 'n-anon-1')`,
        [projectId],
      );
      expect(row).toEqual({ persons: 1 });
    });

    it('refuses more distinct ids than EVENTS_MAX_PERSONS_PER_REQUEST with 400 (attr distinct_id), storing nothing; events without persons are not counted', async () => {
      const before = await counts();
      const events = (n: number, extra: Record<string, unknown> = {}) =>
        Array.from({ length: n }, (_, i) => ({
          event: 'seen',
          uuid: randomUUID(),
          distinct_id: `p-${i}`,
          properties: { ...extra },
        }));
      const res = await capped.http.post('/batch/').send({ api_key: token, batch: events(21) });
      expect({ status: res.status, attr: (res.body as { attr?: string }).attr }).toEqual({
        status: 400,
        attr: 'distinct_id',
      });
      expect((res.body as { detail: string }).detail).toContain(
        'more than 20 distinct ids whose persons would be found or created (EVENTS_MAX_PERSONS_PER_REQUEST)',
      );
      expect(await counts()).toEqual(before);
      // Events that process no person touch none: not counted.
      await capped.http
        .post('/batch/')
        .send({ api_key: token, batch: events(30, { $process_person_profile: false }) })
        .expect(200, { status: 1 });
      await capped.http
        .post('/batch/')
        .send({ api_key: token, batch: events(20) })
        .expect(200, { status: 1 });
      expect(await counts()).toEqual({
        ...before,
        events: before.events + 50,
        persons: before.persons + 20,
        distinct_ids: before.distinct_ids + 20,
      });
    });
  });
});
