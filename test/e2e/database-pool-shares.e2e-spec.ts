/**
 * One API key cannot hold the database pool: with a pool of 4 (1 kept from the API), one key fires six recordings
 * lists filtered by events while the `events` table is locked (so each such statement waits, as a runaway scan
 * would). Two run (API_EXPENSIVE_READS_PER_KEY), four are refused 429 at once, another key of the same
 * organization is refused by the organization's cap; another organization's API read is answered while they
 * wait, and once a third organization's expensive list fills the API's share of the pool, a capture still goes
 * through on the reserved connection. The waiting lists end with 503 `timeout` when PostgreSQL cancels them at
 * API_READ_STATEMENT_TIMEOUT_MS, while the lock is still held.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Response } from 'supertest';
import { DatabaseProbe } from '../../src/database/database-probe.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

/** Long enough for the steps in between on a busy machine; the lists wait this long behind the lock. */
const READ_TIMEOUT_MS = 15_000;

describe('database pool: one key cannot hold it', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let third: TestUser;
  let projectA: number;
  let tokenA: string;
  let projectB: number;
  let tokenB: string;
  let projectC: number;
  let tokenC: string;
  let locker: pg.Client;

  const record = async (token: string) => {
    const now = Date.now() - 60_000;
    await t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token,
          sessionId: newSessionId('pool'),
          events: [rr.meta(now, 'https://shop.example/'), rr.click(now + 1000)],
        }),
      ])
      .expect(200);
  };
  const expensiveList = (projectId: number, auth: { Authorization: string }) =>
    t.http
      .get(`/api/projects/${projectId}/session_recordings`)
      .query({ events: JSON.stringify([{ id: '$pageview', type: 'events' }]) })
      .set(auth)
      .then((res) => res);
  /** Backends of this database waiting for a lock (the lists' statements behind the lock on `events`). */
  const lockWaits = async () => {
    // The locker is in the locking transaction, whose view of pg_stat_activity is cached until cleared.
    await locker.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await locker.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    return rows[0].n;
  };
  const waitFor = async (what: string, check: () => Promise<boolean> | boolean) => {
    for (let i = 0; i < 400; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    const { rows } = await locker.query(
      `SELECT a.pid, a.state, a.wait_event_type, a.wait_event, left(a.query, 60) AS query, now() - a.query_start AS age,
        (SELECT json_agg(json_build_object('rel', l.relation::regclass::text, 'mode', l.mode, 'granted', l.granted)) FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'relation' AND l.relation::regclass::text LIKE 'events%') AS locks
        FROM pg_stat_activity a WHERE datname = current_database()`,
    );
    throw new Error(`timed out waiting for ${what}: ${JSON.stringify(rows)}`);
  };

  beforeAll(async () => {
    t = await createTestApp({
      DATABASE_POOL_SIZE: '4',
      DATABASE_POOL_RESERVE: '1',
      API_EXPENSIVE_READS_PER_KEY: '2',
      API_EXPENSIVE_READS_PER_ORGANIZATION: '2',
      API_READ_STATEMENT_TIMEOUT_MS: String(READ_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: '60000',
      PUBLIC_MAX_CONCURRENT_PER_IP: '0',
    });
    owner = await t.factories.user();
    other = await t.factories.user();
    third = await t.factories.user();
    const orgA = await t.factories.organization(owner, 'Heavy reader');
    const orgB = await t.factories.organization(other, 'Other tenant');
    const orgC = await t.factories.organization(third, 'Third tenant');
    [projectA, tokenA] = [orgA.teams[0].id, orgA.teams[0].api_token];
    [projectB, tokenB] = [orgB.teams[0].id, orgB.teams[0].api_token];
    [projectC, tokenC] = [orgC.teams[0].id, orgC.teams[0].api_token];
    await record(tokenA);
    await record(tokenC);
    locker = new pg.Client({ connectionString: t.databaseUrl });
    await locker.connect();
  });

  afterAll(async () => {
    await locker?.end().catch(() => undefined);
    await t?.close();
  });

  it('caps the expensive reads per key and per organization, keeps capture and other tenants served', async () => {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    try {
      const settled: Response[] = [];
      const heavy = Array.from({ length: 6 }, () =>
        expensiveList(projectA, owner.auth).then((res) => {
          settled.push(res);
          return res;
        }),
      );
      // Four are refused at once; two reach PostgreSQL and wait behind the lock.
      await waitFor('the refusals', () => settled.length >= 4);
      await waitFor('two statements behind the lock', async () => (await lockWaits()) >= 2);
      expect(settled.map((r) => r.status)).toEqual([429, 429, 429, 429]);
      for (const res of settled) {
        expect(res.headers['retry-after']).toBe('5');
        expect(res.body).toMatchObject({ type: 'throttled_error', code: 'throttled', attr: null });
        expect((res.body as { detail: string }).detail).toContain('this API key may run at most 2');
      }
      // Another key of the same organization: the organization's cap (2) is reached.
      const secondKey = await t.factories.keyFor(owner, '*');
      const sameOrg = await expensiveList(projectA, secondKey);
      expect(sameOrg.status).toBe(429);
      expect((sameOrg.body as { detail: string }).detail).toContain('this organization may run at most 2');

      // Another organization's API read is answered while the two wait.
      const otherRead = await t.http.get(`/api/projects/${projectB}/session_recordings`).set(other.auth);
      expect(otherRead.status).toBe(200);
      expect(settled).toHaveLength(4);

      // A third organization's expensive list takes the API's last connection (3 of 4) ...
      const thirdHeavy = expensiveList(projectC, third.auth);
      await waitFor('three statements behind the lock', async () => (await lockWaits()) >= 3);
      // ... and a capture still goes through, on the connection the API cannot take.
      await record(tokenB);
      expect(settled).toHaveLength(4);
      expect(await lockWaits()).toBe(3);
      expect(t.app.get(DatabaseProbe).apiShareCounts()).toEqual({ inUse: 3, waiting: 0, size: 3 });

      // PostgreSQL cancels the waiting statements at API_READ_STATEMENT_TIMEOUT_MS, the lock still held.
      const ended = [...(await Promise.all(heavy)).filter((r) => r.status !== 429), await thirdHeavy];
      // The lock is still held (released below): PostgreSQL cancelled them, nothing is waiting any more.
      expect(await lockWaits()).toBe(0);
      expect(ended.map((r) => r.status)).toEqual([503, 503, 503]);
      for (const res of ended) {
        expect(res.body).toMatchObject({ type: 'server_error', code: 'timeout', attr: null });
        expect((res.body as { detail: string }).detail).toContain(
          `ran past its statement timeout (${READ_TIMEOUT_MS} ms)`,
        );
      }
    } finally {
      await locker.query('ROLLBACK');
    }
    // The caps are free again: the same key's list is answered.
    const again = await expensiveList(projectA, owner.auth);
    expect(again.status).toBe(200);
  }, 120_000);
});
