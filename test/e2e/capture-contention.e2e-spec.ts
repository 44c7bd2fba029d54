import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { captureTableCounts, newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import { waitFor } from '../support/service-process.js';
import { margin } from '../support/shared-machine.js';
import { lockWaits } from '../support/test-database.js';

const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const NOW = new Date('2026-11-21T12:00:00.000Z');
const OK = { status: 'Ok' };

/**
 * One capture request cannot stall its project's capture: at most CAPTURE_MAX_SESSIONS recordings per request,
 * the project's recording counter taken only as the commit's last statement, and nothing committed after a
 * request was answered with the timeout.
 *
 * @serial: compares answer times under contention with the usual ones (test/support/test-runner.js).
 */
describe('capture: one request cannot stall a project', () => {
  let t: TestApp;
  let token: string;
  let projectId: number;

  const counted = async () => {
    const [row] = await t.dataSource.query(
      `SELECT (SELECT recordings::int FROM session_recording_counts WHERE team_id = $1) AS counted,
              (SELECT count(*)::int FROM session_recordings WHERE team_id = $1 AND deleted_at IS NULL) AS live`,
      [projectId],
    );
    return row as { counted: number; live: number };
  };
  /** Holds the row lock of a recording in a transaction of its own, as a slow writer would. */
  const lockRecording = async (sessionId: string) => {
    const client = new pg.Client({ connectionString: t.databaseUrl });
    await client.connect();
    await client.query('BEGIN');
    // Named by its project too: on Citus the lock is then taken on the one shard holding it.
    await client.query('SELECT 1 FROM session_recordings WHERE team_id = $1 AND session_id = $2 FOR UPDATE', [
      projectId,
      sessionId,
    ]);
    return {
      release: async () => {
        await client.query('COMMIT');
        await client.end();
      },
    };
  };
  /** Resolves once PostgreSQL shows a statement of this database waiting for a lock (on a Citus worker too). */
  const waitForLockWait = () =>
    waitFor('a capture waiting for the recording lock', async () => (await lockWaits(t.dataSource)) > 0);

  beforeAll(async () => {
    t = await createTestApp({ CAPTURE_MAX_SESSIONS: '100', REQUEST_TIMEOUT_MS: '60000' });
    t.clock.set(NOW);
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Contention');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 413 past CAPTURE_MAX_SESSIONS recordings in one request, and stores nothing of it', async () => {
    const events = Array.from({ length: 101 }, () =>
      snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] }),
    );
    const before = await captureTableCounts(t.dataSource);
    const res = await t.http.post('/s/').send(events);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 413,
      body: {
        type: 'invalid_request',
        code: 'payload_too_large',
        detail: 'Too many recordings in one request: at most 100 distinct $session_id values.',
        attr: null,
      },
    });
    expect(await captureTableCounts(t.dataSource)).toEqual(before);
    // Many events of few sessions are fine: the limit counts recordings, not events.
    const sessionId = newSessionId();
    await t.http
      .post('/s/')
      .send(
        Array.from({ length: 150 }, (_, i) =>
          snapshotEvent({ token, sessionId, events: [rr.click(T0 + i)] }),
        ),
      )
      .expect(200, OK);
    await t.http.post('/s/').send(events.slice(0, 100)).expect(200, OK);
    expect(await counted()).toEqual({ counted: before.recordings + 101, live: before.recordings + 101 });
  });

  it('ordinary captures of the project answer at their usual latency while a large one is held up', async () => {
    const held = newSessionId('held');
    await t.http
      .post('/s/')
      .send([snapshotEvent({ token, sessionId: held, events: [rr.click(T0)] })])
      .expect(200);
    // The usual latency of a capture creating one recording.
    const usual: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await t.http
        .post('/s/')
        .send([snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] })])
        .expect(200, OK);
      usual.push(performance.now() - started);
    }
    const lock = await lockRecording(held);
    let bigAnswered = false;
    let big: Promise<{ status: number }>;
    try {
      // 99 new recordings and one more event of the held one: the large request inserts its new recordings,
      // then waits for the held recording (as it would for seconds of work on a large body).
      const bigSessions = Array.from({ length: 99 }, () => newSessionId('big'));
      big = t.http
        .post('/s/')
        .send([
          ...bigSessions.map((sessionId) => snapshotEvent({ token, sessionId, events: [rr.click(T0)] })),
          snapshotEvent({ token, sessionId: held, events: [rr.click(T0 + 1)] }),
        ])
        .then((res) => {
          bigAnswered = true;
          return res;
        });
      await waitForLockWait();
      const during: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        await t.http
          .post('/s/')
          .send([snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] })])
          .expect(200, OK);
        during.push(performance.now() - started);
      }
      expect(bigAnswered).toBe(false);
      // Before, each waited for the large request's commit (here: forever). A loaded machine's margin.
      expect(Math.max(...during)).toBeLessThan(Math.max(2000, 10 * Math.max(...usual)));
    } finally {
      await lock.release();
    }
    expect((await big).status).toBe(200);
    const row = await counted();
    expect(row.counted).toBe(row.live);
  });

  describe('a capture answered with the timeout', () => {
    let short: TestApp;

    beforeAll(async () => {
      // A second instance on the same database with a short REQUEST_TIMEOUT_MS.
      short = await createTestApp({ REQUEST_TIMEOUT_MS: '1000' }, { databaseUrl: t.databaseUrl });
      short.clock.set(NOW);
    });
    afterAll(async () => {
      await short?.close();
    });

    it('commits nothing, also once what held it up is gone', async () => {
      const held = newSessionId('held');
      await t.http
        .post('/s/')
        .send([snapshotEvent({ token, sessionId: held, events: [rr.click(T0)] })])
        .expect(200);
      const before = await captureTableCounts(t.dataSource);
      const counterBefore = await counted();
      const lock = await lockRecording(held);
      try {
        const started = Date.now();
        const res = await short.http.post('/s/').send([
          snapshotEvent({
            token,
            sessionId: newSessionId('late'),
            distinctId: 'late-visitor',
            events: [rr.click(T0)],
          }),
          snapshotEvent({
            token,
            sessionId: held,
            events: [rr.click(T0 + 5)],
            properties: { $set: { late: true } },
          }),
        ]);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 503,
          body: {
            type: 'server_error',
            code: 'timeout',
            detail:
              'The request did not complete within 1000 ms. Nothing of it was stored; it may be retried.',
            attr: null,
          },
        });
        expect(Date.now() - started).toBeLessThan(1000 + margin(4000));
      } finally {
        await lock.release();
      }
      // The abandoned work resumes once the lock is gone, and must roll back: watch it for a while.
      for (let i = 0; i < 10; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await captureTableCounts(t.dataSource)).toEqual(before);
      }
      expect(await counted()).toEqual(counterBefore);
      const [person] = await t.dataSource.query(
        `SELECT p.properties FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
          WHERE d.distinct_id = 'visitor-1' AND d.team_id = $1`,
        [projectId],
      );
      expect(person.properties.late).toBeUndefined();
      // The same capture again, unhindered, is stored.
      await short.http
        .post('/s/')
        .send([snapshotEvent({ token, sessionId: held, events: [rr.click(T0 + 6)] })])
        .expect(200, OK);
      const [row] = await t.dataSource.query(
        'SELECT event_count FROM session_recordings WHERE session_id = $1',
        [held],
      );
      expect(row.event_count).toBe(2);
    });
  });
});
