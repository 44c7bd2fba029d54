import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  bootstrapKey,
  rawRequest,
  type RawResponse,
  type ServiceProcess,
  startService,
  waitFor,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase, lockWaits, onCitus } from '../support/test-database.js';
import { margin } from '../support/shared-machine.js';

/**
 * Graceful drain of the built service (`node dist/main.js`): requests are held in flight by a row lock the test
 * takes on the organization a PATCH updates, so the requests are genuinely slow without any test-only route.
 *
 * @serial: times the built service's drain (test/support/test-runner.js).
 */

interface Held {
  /** Whether the lock is still held. */
  held: boolean;
  release(): Promise<void>;
}

/** Locks the organization's row in an open transaction: every PATCH of it waits until `release()`. */
async function lockOrganization(url: string, organizationId: string): Promise<Held> {
  const db = new pg.Client({ connectionString: url });
  db.on('error', () => undefined);
  await db.connect();
  await db.query('BEGIN');
  const { rowCount } = await db.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [
    organizationId,
  ]);
  expect(rowCount).toBe(1);
  const lock: Held = {
    held: true,
    release: async () => {
      if (!lock.held) return;
      lock.held = false;
      await db.query('COMMIT');
      await db.end();
    },
  };
  return lock;
}

/**
 * How many sessions wait on a lock in the database. Asked on a connection of its own, outside any transaction
 * (pg_stat_activity is a snapshot that stays fixed within a transaction).
 */
async function lockWaiters(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    // On Citus the organization's lock is its reference table's, taken on the first worker: counted there too.
    return await lockWaits({
      query: async (sql: string, parameters?: unknown[]) => (await client.query(sql, parameters)).rows,
    });
  } finally {
    await client.end();
  }
}

describe('graceful drain of the built service on SIGTERM', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess | undefined;
  let key: string;
  let organizationId: string;
  const locks: Held[] = [];

  const auth = () => ({ Authorization: `Bearer ${key}` });

  async function start(env: Record<string, string>): Promise<ServiceProcess> {
    service = await startService({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'debug',
      SCHEDULER_TICK_SECONDS: '1',
      ...env,
    });
    return service;
  }

  beforeAll(async () => {
    database = await cloneTemplate('drain');
    const first = await start({});
    key = await bootstrapKey(first);
    const created = await rawRequest(first.base, '/api/organizations', {
      method: 'POST',
      headers: auth(),
      body: { name: 'Drained' },
    });
    expect(created.status).toBe(201);
    organizationId = created.json<{ id: string }>().id;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  });

  afterEach(async () => {
    // A failed assertion must not leave a lock (and a service waiting on it) behind.
    for (const lock of locks.splice(0)) await lock.release();
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
  });

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    await dropDatabase(database.name);
  });

  // On Citus the organization's row lock is a lock of the whole reference table (its shard), which the
  // scheduler's tick waits for too (batch_exports references organizations): the test's premise, a scheduler
  // ticking beside the held PATCHes and stopping at the drain, does not hold there (docs/citus.md).
  (onCitus() ? it.skip : it)(
    'fails readiness at once, finishes every in-flight request with 200, stops accepting, exits 0',
    async () => {
      const app = await start({ SHUTDOWN_DELAY_MS: '1000', SHUTDOWN_TIMEOUT_MS: '20000' });
      const lock = await lockOrganization(database.url, organizationId);
      locks.push(lock);
      const patches: Promise<RawResponse>[] = ['one', 'two', 'three'].map((suffix) =>
        rawRequest(app.base, `/api/organizations/${organizationId}`, {
          method: 'PATCH',
          headers: auth(),
          body: { name: `Drained ${suffix}` },
        }),
      );
      await waitFor(
        'three PATCH requests waiting on the lock',
        async () => (await lockWaiters(database.url)) === 3,
      );
      const ticks = () => app.logs().filter((l) => l.msg === 'batch export scheduler tick: no run due');
      await waitFor('a scheduler tick', () => ticks().length > 0);

      app.child.kill('SIGTERM');
      await waitFor('the drain to start', () => app.stdout().includes('SIGTERM received: draining'));
      const drainStarted = app.logs().find((l) => String(l.msg).startsWith('SIGTERM received'))!
        .time as number;
      expect(app.stdout()).toContain('draining (3 requests in flight)');

      // During SHUTDOWN_DELAY_MS the listener still accepts: readiness fails, liveness holds, and every answer
      // closes its connection so keep-alive clients move to another replica.
      const ready = await rawRequest(app.base, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json()).toEqual({
        type: 'server_error',
        code: 'unavailable',
        detail: 'Shutting down.',
        attr: null,
      });
      expect(ready.headers.connection).toBe('close');
      const live = await rawRequest(app.base, '/healthz');
      expect(live.status).toBe(200);
      expect(live.headers.connection).toBe('close');

      // After the delay the listener is closed: new connections are refused while the PATCHes still wait.
      await waitFor(
        'new connections to be refused',
        () =>
          rawRequest(app.base, '/healthz').then(
            () => false,
            (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED',
          ),
        5000,
      );
      expect(app.child.exitCode).toBeNull();
      expect(await lockWaiters(database.url)).toBe(3);

      // Held long enough that a scheduler still ticking every second would have ticked during the drain.
      await waitFor('two seconds of drain', () => Date.now() - drainStarted > 2500, 5000);
      expect(app.child.exitCode).toBeNull();
      await lock.release();
      const answers = await Promise.all(patches);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      for (const answer of answers) {
        expect(answer.json<{ id: string }>().id).toBe(organizationId);
        expect(answer.json<{ name: string }>().name).toMatch(/^Drained (one|two|three)$/);
        expect(answer.headers.connection).toBe('close');
      }
      expect(await app.exited).toBe(0);
      expect(app.stdout()).toContain('shut down cleanly');
      // The scheduler ticked every second until the signal and never after it.
      expect(ticks().filter((l) => (l.time as number) > drainStarted)).toEqual([]);
      // No error on the way out (request lines aside: the 503 of /readyz is logged as such).
      expect(app.logs().filter((l) => l.level === 'error' && !l.req)).toEqual([]);

      // The last write won and is stored.
      const check = new pg.Client({ connectionString: database.url });
      await check.connect();
      const { rows } = await check.query<{ name: string }>('SELECT name FROM organizations WHERE id = $1', [
        organizationId,
      ]);
      await check.end();
      expect(answers.map((a) => a.json<{ name: string }>().name)).toContain(rows[0].name);
    },
  );

  it('answers requests still running at SHUTDOWN_TIMEOUT_MS with 503 and exits 1 in bounded time', async () => {
    const app = await start({ SHUTDOWN_TIMEOUT_MS: '1500' });
    const lock = await lockOrganization(database.url, organizationId);
    locks.push(lock);
    try {
      const patch = rawRequest(app.base, `/api/organizations/${organizationId}`, {
        method: 'PATCH',
        headers: auth(),
        body: { name: 'Never stored' },
      });
      await waitFor('the PATCH to wait on the lock', async () => (await lockWaiters(database.url)) === 1);
      const signalled = Date.now();
      app.child.kill('SIGTERM');
      const answer = await patch;
      expect(answer.status).toBe(503);
      expect(answer.json()).toEqual({
        type: 'server_error',
        code: 'unavailable',
        detail: 'The server is shutting down and could not finish this request. Try again.',
        attr: null,
      });
      expect(await app.exited).toBe(1);
      const elapsed = Date.now() - signalled;
      expect(elapsed).toBeGreaterThanOrEqual(1400);
      expect(elapsed).toBeLessThan(1500 + margin(2500));
      expect(app.stdout()).toContain('drain not finished after 1500 ms');
    } finally {
      await lock.release();
    }
  });
});
