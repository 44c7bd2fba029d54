import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PgBoss } from 'pg-boss';
import {
  DISPATCH_QUEUE,
  PARKED_UNTIL,
  RunQueue,
  RUNS_QUEUE,
} from '../../src/batch-exports/runs/run-queue.js';
import { JOB_QUEUE_SCHEMA, poolExecutor, transactionExecutor } from '../../src/database/job-queue.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

/**
 * RunQueue.enqueue writes the runs' jobs with a statement of its own rather than pg-boss's `insert`: the rows must be
 * the ones `insert` writes for the same job (so a pg-boss upgrade that changes them fails here).
 */
describe('batch export run jobs', () => {
  let t: TestApp;
  let boss: PgBoss;

  beforeAll(async () => {
    t = await createTestApp();
    boss = new PgBoss({
      db: poolExecutor(t.dataSource),
      schema: JOB_QUEUE_SCHEMA,
      migrate: false,
      supervise: false,
      schedule: false,
      registerInstance: false,
    });
    await boss.start();
  });
  afterAll(async () => {
    await boss?.stop({ graceful: false, close: false });
    await t?.close();
  });

  it.each([false, true])(
    "are the rows pg-boss's insert writes for the same job (parked: %s)",
    async (parked) => {
      const batchExportId = randomUUID();
      const ours = [randomUUID(), randomUUID()];
      const theirs = randomUUID();
      // One transaction: pg-boss's clock (job_now(), the transaction's start) is the same for both.
      await t.dataSource.transaction(async (manager) => {
        const db = await transactionExecutor(manager);
        await t.app.get(RunQueue).enqueue(
          db,
          ours.map((id) => ({ id, batchExportId, organizationId: randomUUID() })),
          parked,
        );
        await boss.insert(
          RUNS_QUEUE,
          [
            {
              id: theirs,
              data: { batch_export_id: batchExportId },
              singletonKey: batchExportId,
              group: { id: batchExportId },
              ...(parked ? { startAfter: PARKED_UNTIL } : {}),
            },
          ],
          { db },
        );
      });
      const rows: { id: string; job: Record<string, unknown>; start_after: Date }[] =
        await t.dataSource.query(
          `SELECT id::text, to_jsonb(j) - 'id' AS job, start_after FROM ${JOB_QUEUE_SCHEMA}.job j
          WHERE name = $1 AND id = ANY($2::uuid[]) ORDER BY id = $3, id`,
          [RUNS_QUEUE, [...ours, theirs], theirs],
        );
      expect(rows.map((r) => r.id)).toEqual([...ours.sort(), theirs]);
      const [first, second, reference] = rows.map((r) => r.job);
      expect(first).toEqual(reference);
      expect(second).toEqual(reference);
      expect(reference).toMatchObject({
        state: 'created',
        singleton_key: batchExportId,
        group_id: batchExportId,
        data: { batch_export_id: batchExportId },
        policy: 'key_strict_fifo',
      });
      if (parked) expect(rows[0].start_after).toEqual(PARKED_UNTIL);
      else expect(rows[0].start_after.getTime()).toBeLessThan(PARKED_UNTIL.getTime());
    },
  );

  it("writes a dispatch job as pg-boss's send writes it", async () => {
    const runIds = [randomUUID(), randomUUID()];
    const theirs = randomUUID();
    await t.dataSource.transaction(async (manager) => {
      const db = await transactionExecutor(manager);
      await t.app.get(RunQueue).enqueueDispatch(db, runIds);
      await boss.send(DISPATCH_QUEUE, { run_ids: runIds }, { id: theirs, db });
    });
    const rows: { id: string; job: Record<string, unknown> }[] = await t.dataSource.query(
      `SELECT id::text, to_jsonb(j) - 'id' AS job FROM ${JOB_QUEUE_SCHEMA}.job j
        WHERE name = $1 AND data->'run_ids' = $2::jsonb ORDER BY id = $3`,
      [DISPATCH_QUEUE, JSON.stringify(runIds), theirs],
    );
    expect(rows.map((r) => r.id === theirs)).toEqual([false, true]);
    const [ours, reference] = rows.map((r) => r.job);
    expect(ours).toEqual(reference);
    expect(reference).toMatchObject({
      state: 'created',
      singleton_key: null,
      group_id: null,
      data: { run_ids: runIds },
      retry_limit: 100,
    });
  });

  it('counts the runs of the dispatches not carried out yet in the queue depth (undispatched)', async () => {
    const queue = t.app.get(RunQueue);
    // Carries out every waiting dispatch as a worker's dispatch loop does (the runs' jobs, then the dispatch
    // completed, in one transaction); the number of runs dispatched.
    const carryOut = () =>
      t.dataSource.transaction(async (manager) => {
        const db = await transactionExecutor(manager);
        let runs = 0;
        for (let job = await queue.fetchDispatch(db); job; job = await queue.fetchDispatch(db)) {
          await queue.enqueueDispatched(
            db,
            job.data.run_ids.map((id) => ({ id, batchExportId: id })),
          );
          await queue.completeDispatch(db, job.id);
          runs += job.data.run_ids.length;
        }
        return runs;
      });
    await carryOut(); // the dispatches the tests before left
    const before = await queue.depth();
    expect(before.undispatched).toBe(0);
    const runIds = [randomUUID(), randomUUID(), randomUUID()];
    await t.dataSource.transaction(async (manager) =>
      queue.enqueueDispatch(await transactionExecutor(manager), runIds),
    );
    const waiting = await queue.depth();
    expect(waiting.undispatched).toBe(3);
    // The runs' jobs are not written yet: the run jobs' counts are what they were.
    expect([waiting.ready, waiting.deferred, waiting.active]).toEqual([
      before.ready,
      before.deferred,
      before.active,
    ]);
    expect(waiting.oldestReadySeconds).toBeGreaterThanOrEqual(0);
    expect(await carryOut()).toBe(3);
    const done = await queue.depth();
    expect(done.undispatched).toBe(0);
    expect(done.ready).toBe(before.ready + 3);
  });

  it('a dispatched run whose job exists keeps that one job (a replayed dispatch writes nothing twice)', async () => {
    const batchExportId = randomUUID();
    const [old, fresh] = [randomUUID(), randomUUID()];
    const queue = t.app.get(RunQueue);
    await t.dataSource.transaction(async (manager) =>
      queue.enqueue(await transactionExecutor(manager), [
        { id: old, batchExportId, organizationId: batchExportId },
      ]),
    );
    const created = await t.dataSource.transaction(async (manager) =>
      queue.enqueueDispatched(await transactionExecutor(manager), [
        { id: old, batchExportId },
        { id: fresh, batchExportId },
      ]),
    );
    expect(created).toEqual([fresh]);
    const [{ jobs }] = await t.dataSource.query(
      `SELECT count(*)::int AS jobs FROM ${JOB_QUEUE_SCHEMA}.job WHERE name = $1 AND id = ANY($2::uuid[])`,
      [RUNS_QUEUE, [old, fresh]],
    );
    expect(jobs).toBe(2);
  });

  it('refuses a run whose job exists (the transaction fails rather than losing a job)', async () => {
    const run = { id: randomUUID(), batchExportId: randomUUID(), organizationId: randomUUID() };
    const queue = t.app.get(RunQueue);
    await t.dataSource.transaction(async (manager) =>
      queue.enqueue(await transactionExecutor(manager), [run]),
    );
    await expect(
      t.dataSource.transaction(async (manager) => queue.enqueue(await transactionExecutor(manager), [run])),
    ).rejects.toThrow(/duplicate key/);
  });
});
