import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/database/embedded-postgres.js';
import {
  bootstrapKey,
  onSomePort,
  rawRequest,
  type ServiceProcess,
  startService,
  waitFor,
} from '../support/service-process.js';
import { margin } from '../support/shared-machine.js';

/**
 * A database outage, for real: the test owns a PostgreSQL server, starts the built service against it, stops
 * the server, and starts it again on the same port and data directory, without touching the service.
 *
 * @serial: times the built service's answers against its connect timeout (test/support/test-runner.js).
 */
const CONNECT_TIMEOUT_MS = 1000;

describe('database outage and recovery', () => {
  let dataDir: string;
  let port: number;
  let postgres: EmbeddedDatabase | undefined;
  let service: ServiceProcess;
  let key: string;

  const startPostgres = async () =>
    (postgres = await startEmbeddedPostgres({ dataDir, port, database: 'app' }));

  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'outage-pg-')), 'data');
    // PostgreSQL cannot bind port 0 and report it: some port, another one if it was taken before the bind.
    const db = await onSomePort((p) => {
      port = p;
      return startPostgres();
    });
    service = await startService({
      DATABASE_URL: db.url,
      MIGRATIONS_RUN: 'true',
      LOG_LEVEL: 'info',
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      SCHEDULER_ENABLED: 'true',
      SCHEDULER_TICK_SECONDS: '1',
    });
    key = await bootstrapKey(service);
  }, 90000);

  afterAll(async () => {
    // A service that died under the test (every later request refused) says why in CI's output; the last test
    // stops it, which exits with 0.
    const { exitCode, signalCode } = service?.child ?? { exitCode: null, signalCode: null };
    if ((exitCode !== null && exitCode !== 0) || signalCode !== null) {
      process.stderr.write(
        `outage: the service exited (code ${exitCode}, signal ${signalCode}); ` +
          `the end of its stderr:\n${service.stderr().slice(-4000)}\nand of its stdout:\n${service.stdout().slice(-4000)}\n`,
      );
    }
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    await postgres?.stop();
    if (dataDir) await rm(dirname(dataDir), { recursive: true, force: true });
  });

  const list = (requestId?: string) =>
    rawRequest(service.base, '/api/organizations', {
      headers: { Authorization: `Bearer ${key}`, ...(requestId ? { 'X-Request-Id': requestId } : {}) },
    });

  it('serves normally while the database is up', async () => {
    expect((await list()).status).toBe(200);
    expect((await rawRequest(service.base, '/readyz')).status).toBe(200);
  });

  /**
   * Runs `request` while the test holds an exclusive lock on table `locked`, waits until a service connection
   * waits on that lock (mid-request; with `written` set, after that table got a row in the same transaction),
   * then terminates that connection with pg_terminate_backend, as an operator or a failover would.
   *
   * `between: true` terminates it between two statements instead: the service process is frozen (SIGSTOP),
   * the lock released so the waiting statement completes, and the connection, now idle in its transaction, is
   * terminated before the service resumes (SIGCONT). The service then finds its transaction's connection gone
   * when it sends its next statement, which TypeORM reports as a released query runner.
   */
  async function terminateDuring<T>(
    locked: string,
    written: string | null,
    request: () => Promise<T>,
    between = false,
  ): Promise<T> {
    const admin = new pg.Client({ connectionString: postgres!.url });
    await admin.connect();
    let frozen = false;
    try {
      await admin.query('BEGIN');
      await admin.query(`LOCK TABLE ${locked} IN ACCESS EXCLUSIVE MODE`);
      const pending = request();
      let pid = 0;
      await waitFor('a service connection to wait on the lock', async () => {
        await admin.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await admin.query<{ pid: number }>(
          // Only a client connection (an autovacuum worker may wait on the same lock) other than this one.
          `SELECT w.pid FROM pg_locks w JOIN pg_class c ON c.oid = w.relation
             JOIN pg_stat_activity a ON a.pid = w.pid AND a.backend_type = 'client backend'
            WHERE c.relname = $1 AND NOT w.granted AND w.pid <> pg_backend_pid()
              AND ($2::text IS NULL OR EXISTS (
                    SELECT 1 FROM pg_locks h JOIN pg_class hc ON hc.oid = h.relation
                     WHERE h.pid = w.pid AND hc.relname = $2 AND h.mode = 'RowExclusiveLock' AND h.granted))`,
          [locked, written],
        );
        pid = rows[0]?.pid ?? 0;
        return pid !== 0;
      });
      if (between) {
        frozen = service.child.kill('SIGSTOP');
        await admin.query('ROLLBACK');
        await waitFor('the connection to be idle in its transaction', async () => {
          await admin.query('SELECT pg_stat_clear_snapshot()');
          const { rows } = await admin.query<{ state: string }>(
            'SELECT state FROM pg_stat_activity WHERE pid = $1',
            [pid],
          );
          return rows[0]?.state === 'idle in transaction';
        });
      }
      const { rows } = await admin.query<{ done: boolean }>('SELECT pg_terminate_backend($1) AS done', [pid]);
      expect(rows).toEqual([{ done: true }]);
      // The backend has sent its goodbye and gone before the service reads anything.
      await waitFor('the terminated backend to exit', async () => {
        // Statistics views are read once per transaction unless the snapshot is cleared (this one is open).
        await admin.query('SELECT pg_stat_clear_snapshot()');
        const { rows: left } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
        return left.length === 0;
      });
      if (frozen) {
        service.child.kill('SIGCONT');
        frozen = false;
      }
      const result = await pending;
      if (!between) await admin.query('ROLLBACK');
      return result;
    } finally {
      if (frozen) service.child.kill('SIGCONT');
      await admin.end();
    }
  }

  const UNAVAILABLE = {
    type: 'server_error',
    code: 'unavailable',
    detail: 'The service is temporarily unavailable. Try again shortly.',
    attr: null,
  };

  const createOrganization = (name: string) => () =>
    rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: { name },
    });
  const organizationNames = async () =>
    (await list()).json<{ results: { name: string }[] }>().results.map((o) => o.name);

  // Creating an organization inserts the organization, then the owner's membership, then the default project
  // (one transaction): a lock on the membership or project table holds it after its first writes.
  it.each([
    ['while a statement runs', 'projects', false],
    ['between two statements', 'organization_memberships', true],
    ['between the last statement and the commit', 'projects', true],
  ])(
    'answers 503 when its connection is terminated in a transaction %s, and stores nothing',
    async (label, locked, between) => {
      const name = `Terminated ${label}`;
      const logsBefore = service.logs().length;
      const res = await terminateDuring(locked, 'organizations', createOrganization(name), between);
      expect(res.status).toBe(503);
      expect(res.json()).toEqual(UNAVAILABLE);
      // The pool replaces the dead connection; nothing of the request was kept.
      await waitFor('the API to answer again', async () => (await list()).status === 200);
      expect(await organizationNames()).not.toContain(name);
      const find = () =>
        service
          .logs()
          .slice(logsBefore)
          .find((l) => l.msg === 'database unavailable');
      // Log lines reach standard output in batches, within LOG_FLUSH_MS.
      await waitFor('the error line', () => find() !== undefined);
      const logged = find();
      // The error as the driver reported it, logged in full: the statement failed, or the runner was released
      // (TypeORM names that from its query runner or from its entity manager, depending on which sent the next
      // statement).
      expect((logged?.err as { type?: string } | undefined)?.type).toMatch(
        between ? /^QueryRunner(Provider)?AlreadyReleasedError$/ : /^QueryFailedError$/,
      );
      expect(service.child.exitCode).toBeNull();
    },
  );

  it('answers 503 when its connection is terminated during a plain read', async () => {
    const res = await terminateDuring('organizations', null, () => list('terminated-read'));
    expect(res.status).toBe(503);
    expect(res.json()).toEqual(UNAVAILABLE);
    await waitFor('the API to answer again', async () => (await list()).status === 200);
  });

  it('answers 503 unavailable within the connect timeout while the database is down', async () => {
    const logsBefore = service.logs().length;
    await postgres!.stop();
    postgres = undefined;

    // Pooled connections the server closed must not take the process down.
    const started = Date.now();
    const res = await list('outage-probe-1');
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({
      type: 'server_error',
      code: 'unavailable',
      detail: 'The service is temporarily unavailable. Try again shortly.',
      attr: null,
    });
    expect(res.headers['x-request-id']).toBe('outage-probe-1');
    expect(elapsed).toBeLessThan(CONNECT_TIMEOUT_MS + margin(1500));

    // A write fails the same way.
    const write = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: { name: 'During the outage' },
    });
    expect(write.status).toBe(503);
    expect(write.json<{ code: string }>().code).toBe('unavailable');

    const ready = await rawRequest(service.base, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json()).toEqual({
      type: 'server_error',
      code: 'unavailable',
      detail: 'The database is unreachable.',
      attr: null,
    });
    const live = await rawRequest(service.base, '/healthz');
    expect(live.status).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });

    // The scheduler skips its ticks with one warning each, no error stack.
    await waitFor(
      'two skipped scheduler ticks',
      () =>
        service
          .logs()
          .slice(logsBefore)
          .filter((l) => l.msg === 'database unavailable: batch export scheduler tick skipped').length >= 2,
    );
    const recent = service.logs().slice(logsBefore);
    const skip = recent.find((l) => l.msg === 'database unavailable: batch export scheduler tick skipped')!;
    expect(skip.level).toBe('warn');
    expect(skip.context).toBe('BatchExportsScheduler');
    expect(recent.filter((l) => String(l.msg).startsWith('batch export scheduler tick failed'))).toEqual([]);

    // The failed request is logged with its request id: the line may reach standard output up to LOG_FLUSH_MS after
    // the answer (the log is written in batches), after the ticks' warnings when the answer came late on a loaded
    // machine, so it is waited for.
    await waitFor('the failed request logged with its request id', () =>
      service
        .logs()
        .slice(logsBefore)
        .some((l) => l.msg === 'database unavailable' && l.reqId === 'outage-probe-1'),
    );
    // The pooled connections the server closed were reported once each and dropped; the process lives on.
    expect(recent.some((l) => l.msg === 'idle database connection lost; it will be replaced')).toBe(true);
    expect(service.child.exitCode).toBeNull();
  });

  it('recovers by itself when the database is back, without a restart', async () => {
    await startPostgres();
    await waitFor('the API to answer again', async () => (await list()).status === 200, 15000);
    expect((await rawRequest(service.base, '/readyz')).json()).toEqual({ status: 'ok', database: 'up' });
    const created = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: { name: 'After the outage' },
    });
    expect(created.status).toBe(201);
    const names = (await list()).json<{ results: { name: string }[] }>().results.map((o) => o.name);
    expect(names).toEqual(['After the outage']);
    // The same process throughout: it was never restarted.
    expect(service.child.exitCode).toBeNull();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
