import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { BatchExportsService } from '../../src/batch-exports/batch-exports.service.js';
import { DISPATCH_QUEUE, RUNS_QUEUE } from '../../src/batch-exports/runs/run-queue.js';
import { waitFor } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

const CREATED = new Date('2026-11-19T20:00:30.000Z');
const NOW = new Date('2026-11-20T00:00:00.000Z');

/**
 * A worker process killed (SIGKILL) in the middle of a dispatch of scheduled runs (`dispatchNext`: the runs' jobs
 * written, their log lines not yet): its transaction is rolled back whole, the dispatch goes back to the queue,
 * and another process carries it out. Counted at the far end: every run has exactly one job and one "Run created"
 * log line.
 */
describe('a worker process killed during a dispatch', () => {
  let t: TestApp;
  const processes: ServiceProcess[] = [];
  const workerEnv = () => ({
    DATABASE_URL: t.databaseUrl,
    LOG_LEVEL: 'info',
    SCHEDULER_ENABLED: 'false',
    BATCH_EXPORT_WORKERS: 'true',
    BATCH_EXPORT_POLL_INTERVAL_MS: '200',
  });
  const start = async () => {
    const p = await startService(workerEnv(), { timeoutMs: 60_000 });
    processes.push(p);
    return p;
  };

  /** Per run: its jobs in the run queue and its "Run created" log lines; and the dispatch's state. */
  const tally = async () => {
    const [row] = await t.dataSource.query(
      `SELECT count(*)::int AS runs,
              count(*) FILTER (WHERE j.n = 1)::int AS with_one_job,
              count(*) FILTER (WHERE coalesce(j.n, 0) = 0)::int AS without_job,
              count(*) FILTER (WHERE l.n = 1)::int AS with_one_log,
              count(*) FILTER (WHERE coalesce(l.n, 0) = 0)::int AS without_log,
              (SELECT string_agg(state::text, ',') FROM pgboss.job WHERE name = $2) AS dispatch
         FROM batch_export_runs r
         LEFT JOIN (SELECT id, count(*) AS n FROM pgboss.job WHERE name = $1 GROUP BY id) j ON j.id = r.id
         LEFT JOIN (SELECT run_id, count(*) AS n FROM batch_export_logs
                     WHERE message LIKE 'Run created %' GROUP BY run_id) l ON l.run_id = r.id`,
      [RUNS_QUEUE, DISPATCH_QUEUE],
    );
    return row as {
      runs: number;
      with_one_job: number;
      without_job: number;
      with_one_log: number;
      without_log: number;
      dispatch: string | null;
    };
  };

  beforeAll(async () => {
    t = await createTestApp();
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Killed dispatch');
    t.clock.set(CREATED);
    for (let i = 0; i < 3; i++) {
      await t.http
        .post(`/api/organizations/${org.id}/batch_exports`)
        .set(owner.auth)
        .send({ name: `e${i}`, destination: { type: 'NoOp', config: {} }, interval: 'hour' })
        .expect(201);
    }
    t.clock.set(new Date());
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await t?.close();
  });

  it('leaves nothing behind; a second process gives every run exactly one job and one log line', async () => {
    const { created } = await t.app.get(BatchExportsService).createDueRuns(NOW);
    expect(created).toBe(12); // 3 exports × 4 hours
    expect(await tally()).toMatchObject({ runs: 12, without_job: 12, without_log: 12, dispatch: 'created' });

    // The test holds the log lines' table: the first process's dispatch writes the jobs, then waits at the log lines.
    const blocker = new pg.Client({ connectionString: t.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE batch_export_logs IN SHARE MODE');
      const first = await start();
      const backend = await waitFor(
        async () => {
          const rows: { pid: number }[] = await t.dataSource.query(
            `SELECT pid FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO batch_export_logs%'`,
          );
          return rows[0]?.pid;
        },
        30_000,
        "the dispatch's log lines waiting for the lock",
      );
      // Its jobs are written, uncommitted.
      const [{ pending }] = await t.dataSource.query(
        `SELECT count(*)::int AS pending FROM pg_locks WHERE pid = $1 AND locktype = 'transactionid'`,
        [backend],
      );
      expect(pending).toBeGreaterThan(0);
      first.child.kill('SIGKILL');
      await first.exited;
      await blocker.query('ROLLBACK');
      // The killed process's backend finds its client gone at its next exchange and rolls the transaction back.
      await waitFor(
        async () =>
          (await t.dataSource.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [backend])).length === 0
            ? true
            : undefined,
        30_000,
        "the killed process's backend to end",
      );
    } finally {
      await blocker.end();
    }
    expect(await tally()).toMatchObject({ runs: 12, without_job: 12, without_log: 12, dispatch: 'created' });

    await start();
    const done = await waitFor(
      async () => {
        const now = await tally();
        return now.dispatch === 'completed' ? now : undefined;
      },
      30_000,
      'the second process to carry out the dispatch',
    );
    expect(done).toEqual({
      runs: 12,
      with_one_job: 12,
      without_job: 0,
      with_one_log: 12,
      without_log: 0,
      dispatch: 'completed',
    });
  });
});
