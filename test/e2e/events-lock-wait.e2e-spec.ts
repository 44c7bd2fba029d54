import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { waitFor } from '../support/service-process.js';

/**
 * An analytics capture that waits behind a person row another transaction holds answers 503 with Retry-After
 * within the request's deadline (REQUEST_TIMEOUT_MS, or a shorter DATABASE_STATEMENT_TIMEOUT_MS), never a 500,
 * and stores nothing of the request, also once the lock is gone.
 */
describe('events capture behind a locked person', () => {
  let t: TestApp;
  let token: string;
  let projectId: number;

  const counts = async () => {
    const [row] = await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM events WHERE team_id = $1) AS events,
              (SELECT count(*)::int FROM person_distinct_ids WHERE team_id = $1) AS distinct_ids`,
      [projectId],
    );
    return row as { events: number; distinct_ids: number };
  };
  const personOf = async (distinctId: string) => {
    const [row] = await t.dataSource.query(
      `SELECT p.id, p.properties FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
        WHERE d.team_id = $1 AND d.distinct_id = $2`,
      [projectId, distinctId],
    );
    return row as { id: number; properties: Record<string, unknown> };
  };
  /** Holds the person's row lock in a transaction of its own, as a slow writer would. */
  const lockPerson = async (personId: number) => {
    const client = new pg.Client({ connectionString: t.databaseUrl });
    await client.connect();
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM persons WHERE team_id = $1 AND id = $2 FOR UPDATE', [
      projectId,
      personId,
    ]);
    return {
      release: async () => {
        await client.query('COMMIT');
        await client.end();
      },
    };
  };
  const batch = (distinctId: string) => ({
    api_key: token,
    batch: [
      { event: 'signed up', uuid: randomUUID(), distinct_id: `newcomer-${distinctId}`, properties: {} },
      {
        event: 'upgraded',
        uuid: randomUUID(),
        distinct_id: distinctId,
        properties: { $set: { late: true } },
      },
    ],
  });

  beforeAll(async () => {
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0' });
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Lock wait');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The person of `distinctId`, created by a first capture. */
  const existingPerson = async (distinctId: string) => {
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: [{ event: 'seen', distinct_id: distinctId, properties: { $set: { a: 1 } } }],
      })
      .expect(200, { status: 1 });
    return personOf(distinctId);
  };

  /** Sends the batch while the person is locked; returns the answer once the lock is released and work has settled. */
  const captureWhileLocked = async (app: TestApp, distinctId: string) => {
    const person = await existingPerson(distinctId);
    const before = await counts();
    const lock = await lockPerson(person.id);
    let res;
    const started = Date.now();
    try {
      res = await app.http.post('/batch/').send(batch(distinctId));
    } finally {
      await lock.release();
    }
    const elapsed = Date.now() - started;
    // Work abandoned at the answer must have rolled back, also once the lock is gone: watch it for a while.
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await counts()).toEqual(before);
    }
    expect((await personOf(distinctId)).properties).toEqual({ a: 1 });
    expect(await personOf(`newcomer-${distinctId}`)).toBeUndefined();
    return { res, elapsed };
  };

  it('answers 503 timeout with Retry-After at REQUEST_TIMEOUT_MS and stores nothing, also after the lock is gone', async () => {
    const short = await createTestApp(
      { REQUEST_TIMEOUT_MS: '1500', PUBLIC_MAX_CONCURRENT_PER_IP: '0' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const { res, elapsed } = await captureWhileLocked(short, 'locked-1');
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 503,
        body: {
          type: 'server_error',
          code: expect.stringMatching(/^(timeout|unavailable)$/),
          detail: expect.any(String),
          attr: null,
        },
      });
      expect(res.headers['retry-after']).toBe('5');
      expect(elapsed).toBeLessThan(15_000);
      // The connection that waited is free again: the lock wait ended with the deadline, not 30 s later.
      await waitFor('no statement of the test database waiting on a lock', async () => {
        const [row] = await t.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return row.n === 0;
      });
      // Sent again once the person is free, the same request is stored.
      await short.http.post('/batch/').send(batch('locked-1')).expect(200, { status: 1 });
      expect((await personOf('locked-1')).properties).toEqual({ a: 1, late: true });
    } finally {
      await short.close();
    }
  });

  it('answers 503 unavailable with Retry-After, not 500, when DATABASE_STATEMENT_TIMEOUT_MS ends the wait first', async () => {
    const strict = await createTestApp(
      {
        REQUEST_TIMEOUT_MS: '60000',
        DATABASE_STATEMENT_TIMEOUT_MS: '1000',
        PUBLIC_MAX_CONCURRENT_PER_IP: '0',
      },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const { res, elapsed } = await captureWhileLocked(strict, 'locked-2');
      expect({ status: res.status, body: res.body as unknown }).toEqual({
        status: 503,
        body: {
          type: 'server_error',
          code: 'unavailable',
          detail:
            'The request waited too long for rows another request holds (a lock or statement timeout) and was rolled back. Try again shortly.',
          attr: null,
        },
      });
      expect(res.headers['retry-after']).toBe('5');
      expect(elapsed).toBeLessThan(30_000);
    } finally {
      await strict.close();
    }
  });
});
