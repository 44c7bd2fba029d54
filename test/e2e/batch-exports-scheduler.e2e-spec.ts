import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { BatchExportsRepository } from '../../src/batch-exports/batch-exports.repository.js';
import { BatchExportsScheduler } from '../../src/batch-exports/batch-exports.scheduler.js';
import { BatchExportsService } from '../../src/batch-exports/batch-exports.service.js';
import {
  dueRuns,
  type DataInterval,
  type Interval,
  INTERVALS,
  type PauseWindow,
} from '../../src/batch-exports/schedule.js';
import { BatchExportRunsRepository } from '../../src/batch-exports/runs/batch-export-runs.repository.js';
import { RunQueue } from '../../src/batch-exports/runs/run-queue.js';
import { typeormOptions } from '../../src/database/typeorm-options.js';
import { loadServiceFeatures } from '../../src/features.js';
import { dispatchScheduledRuns } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { onCitus } from '../support/test-database.js';

const NOOP = { type: 'NoOp', config: {} };

/** A small deterministic random generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max: number) => Math.floor(next() * max),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
  };
}

/** What the test knows an export should be, kept apart from the database. */
interface Model {
  id: string;
  interval: Interval;
  createdAt: Date;
  startAt: Date | null;
  endAt: Date | null;
  paused: boolean;
  deleted: boolean;
  pauses: PauseWindow[];
  scheduledThrough: Date | null;
  runs: DataInterval[];
}

const key = (r: DataInterval) => `${r.start.toISOString()}/${r.end.toISOString()}`;

/** Scheduled runs per export, oldest first. */
async function scheduledRuns(dataSource: DataSource): Promise<Map<string, string[]>> {
  const rows: { batch_export_id: string; data_interval_start: Date; data_interval_end: Date }[] =
    await dataSource.query(
      `SELECT batch_export_id, data_interval_start, data_interval_end FROM batch_export_runs
        WHERE backfill_id IS NULL ORDER BY batch_export_id, data_interval_end`,
    );
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.batch_export_id) ?? [];
    list.push(key({ start: r.data_interval_start, end: r.data_interval_end }));
    out.set(r.batch_export_id, list);
  }
  return out;
}

async function counts(dataSource: DataSource) {
  const [row] = await dataSource.query(
    `SELECT (SELECT count(*) FROM batch_export_runs)::int AS runs,
            (SELECT count(*) FROM (SELECT 1 FROM batch_export_runs GROUP BY batch_export_id, data_interval_start,
                                    data_interval_end, backfill_id HAVING count(*) > 1) d)::int AS duplicates,
            (SELECT count(*) FROM batch_export_logs WHERE message LIKE 'Run created %')::int AS run_logs`,
  );
  return row as { runs: number; duplicates: number; run_logs: number };
}

/** Runs without a job of the run queue, and jobs without a run: both must be 0. */
async function unmatchedJobs(dataSource: DataSource) {
  const [row] = await dataSource.query(
    `SELECT (SELECT count(*) FROM batch_export_runs r
              WHERE NOT EXISTS (SELECT 1 FROM pgboss.job j WHERE j.id = r.id AND j.name = 'batch-export-runs'))::int
              AS runs_without_job,
            (SELECT count(*) FROM pgboss.job j
              WHERE j.name = 'batch-export-runs'
                AND NOT EXISTS (SELECT 1 FROM batch_export_runs r WHERE r.id = j.id))::int AS jobs_without_run,
            (SELECT count(*) FROM pgboss.job WHERE name = 'batch-export-runs')::int AS jobs`,
  );
  return row as { runs_without_job: number; jobs_without_run: number; jobs: number };
}

describe('batch export scheduler', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let service: BatchExportsService;

  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const createExport = async (fields: Record<string, unknown>) =>
    (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({ name: 'e', destination: NOOP, ...fields })
        .expect(201)
    ).body as { id: string; interval: Interval };

  beforeAll(async () => {
    t = await createTestApp({ SCHEDULER_MAX_CATCHUP: '3' });
    service = t.app.get(BatchExportsService);
    owner = await t.factories.user();
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  describe('createDueRuns agrees with the rules of schedule.ts', () => {
    it.each([1, 2, 3])(
      'over random creates, pauses, unpauses, interval changes, deletes and late ticks (seed %i)',
      async (seed) => {
        orgId = (await t.factories.organization(owner, `Random ${seed}`)).id;
        await t.dataSource.query('UPDATE batch_exports SET deleted_at = now() WHERE deleted_at IS NULL');
        const rnd = random(seed);
        const models: Model[] = [];
        let time = new Date('2026-11-01T00:00:00Z').getTime() + rnd.int(3600_000);
        const live = () => models.filter((m) => !m.deleted);

        for (let step = 0; step < 70; step++) {
          time += rnd.int(150) * 60_000 + rnd.int(60_000);
          const now = new Date(time);
          t.clock.set(now);
          const roll = rnd.next();
          if (models.length < 4 || (roll < 0.15 && models.length < 14)) {
            const interval = rnd.pick(INTERVALS);
            const paused = rnd.next() < 0.2;
            const startAt = rnd.next() < 0.3 ? new Date(time + rnd.int(10) * 3600_000 - 3 * 3600_000) : null;
            const endAt =
              rnd.next() < 0.3 ? new Date((startAt?.getTime() ?? time) + (1 + rnd.int(30)) * 3600_000) : null;
            const created = await createExport({
              interval,
              paused,
              start_at: startAt?.toISOString() ?? null,
              end_at: endAt?.toISOString() ?? null,
            });
            models.push({
              id: created.id,
              interval,
              createdAt: now,
              startAt,
              endAt,
              paused,
              deleted: false,
              pauses: paused ? [{ pausedAt: now, unpausedAt: null }] : [],
              scheduledThrough: null,
              runs: [],
            });
          } else if (roll < 0.35 && live().length) {
            const m = rnd.pick(live());
            await t.http
              .post(path(`/${m.id}/pause`))
              .set(owner.auth)
              .expect(200);
            if (!m.paused) m.pauses.push({ pausedAt: now, unpausedAt: null });
            m.paused = true;
          } else if (roll < 0.55 && live().length) {
            const m = rnd.pick(live());
            // Unpause through the action or through PATCH: the same effect.
            if (rnd.next() < 0.5) {
              await t.http
                .post(path(`/${m.id}/unpause`))
                .set(owner.auth)
                .expect(200);
            } else {
              await t.http
                .patch(path(`/${m.id}`))
                .set(owner.auth)
                .send({ paused: false })
                .expect(200);
            }
            if (m.paused) m.pauses[m.pauses.length - 1].unpausedAt = now;
            m.paused = false;
          } else if (roll < 0.6 && live().length) {
            const m = rnd.pick(live());
            m.interval = rnd.pick(INTERVALS);
            await t.http
              .patch(path(`/${m.id}`))
              .set(owner.auth)
              .send({ interval: m.interval })
              .expect(200);
          } else if (roll < 0.63 && live().length > 4) {
            const m = rnd.pick(live());
            await t.http
              .delete(path(`/${m.id}`))
              .set(owner.auth)
              .expect(204);
            m.deleted = true;
          } else {
            // A tick, late by however long the steps since the last one took (catch-up, capped at 3).
            for (const m of live().filter((x) => !x.paused)) {
              const due = dueRuns(m, now, 3);
              m.runs.push(...due.runs);
              if (due.scheduledThrough) m.scheduledThrough = due.scheduledThrough;
            }
            await service.createDueRuns(now);
            const actual = await scheduledRuns(t.dataSource);
            const watermarks = new Map<string, Date | null>(
              (
                await t.dataSource.query(
                  'SELECT id, scheduled_through FROM batch_exports WHERE id = ANY($1)',
                  [models.map((m) => m.id)],
                )
              ).map((r: { id: string; scheduled_through: Date | null }) => [r.id, r.scheduled_through]),
            );
            for (const m of models) {
              expect({ step, id: m.id, runs: actual.get(m.id) ?? [] }).toEqual({
                step,
                id: m.id,
                runs: m.runs.map(key),
              });
              expect({ step, id: m.id, through: watermarks.get(m.id) }).toEqual({
                step,
                id: m.id,
                through: m.scheduledThrough,
              });
            }
          }
        }
        // The scenario did exercise the rules.
        const all = models.flatMap((m) => m.runs);
        expect(all.length).toBeGreaterThan(20);
        expect(models.some((m) => m.pauses.some((p) => p.unpausedAt))).toBe(true);
        await dispatchScheduledRuns(t.app);
        const { duplicates, runs, run_logs } = await counts(t.dataSource);
        expect(duplicates).toBe(0);
        expect(run_logs).toBe(runs);
        t.clock.set(new Date());
      },
    );
  });

  describe('exactly once', () => {
    const NOW = new Date('2026-11-20T00:00:00.000Z');
    let expected: number;
    /** Exports with at least one due run (weekly ones have none yet). */
    let dueExports: number;
    let dataSources: DataSource[] = [];

    beforeAll(async () => {
      orgId = (await t.factories.organization(owner, 'Concurrent')).id;
      await t.dataSource.query('UPDATE batch_exports SET deleted_at = now() WHERE deleted_at IS NULL');
      await t.dataSource.query('DELETE FROM batch_export_logs');
      await t.dataSource.query('DELETE FROM batch_export_runs');
      await t.dataSource.query(
        "DELETE FROM pgboss.job WHERE name IN ('batch-export-runs', 'batch-export-run-dispatch')",
      );
      expected = 0;
      dueExports = 0;
      const created = new Date('2026-11-18T00:00:30.000Z');
      t.clock.set(created);
      for (let i = 0; i < 40; i++) {
        const interval = INTERVALS[i % INTERVALS.length];
        await createExport({ interval });
        const due = dueRuns(
          { interval, createdAt: created, startAt: null, endAt: null, scheduledThrough: null, pauses: [] },
          NOW,
          100000,
        ).runs.length;
        expected += due;
        if (due) dueExports++;
      }
      t.clock.set(new Date());
      // Separate pools, one connection each: each call below runs on its own PostgreSQL session.
      const features = await loadServiceFeatures();
      dataSources = await Promise.all(
        Array.from({ length: 8 }, () =>
          new DataSource(typeormOptions({ url: t.databaseUrl, poolSize: 1, features })).initialize(),
        ),
      );
    });
    afterAll(async () => {
      await Promise.all(dataSources.map((ds) => ds.destroy()));
    });

    it('several createDueRuns at once on separate connections create every due run once', async () => {
      expect(expected).toBeGreaterThan(2000);
      const results = await Promise.all(
        dataSources.map((ds) =>
          new BatchExportsRepository(ds, t.app.get(RunQueue)).createDueRuns(NOW, 100000),
        ),
      );
      // The runs, each transaction's dispatch queued with them; no job or log line yet.
      expect(await counts(t.dataSource)).toEqual({ runs: expected, duplicates: 0, run_logs: 0 });
      expect(results.reduce((sum, r) => sum + r.created, 0)).toBe(expected);
      expect(await unmatchedJobs(t.dataSource)).toEqual({
        runs_without_job: expected,
        jobs_without_run: 0,
        jobs: 0,
      });
      const [{ dispatches }] = await t.dataSource.query(
        `SELECT count(*)::int AS dispatches FROM pgboss.job WHERE name = 'batch-export-run-dispatch' AND state = 'created'`,
      );
      expect(dispatches).toBeGreaterThanOrEqual(results.filter((r) => r.created > 0).length);
      // As many workers at once carry the dispatches out: each run gets exactly one job and one log line.
      const dispatched = await Promise.all(
        dataSources.map(async (ds) => {
          const queue = t.app.get(RunQueue);
          const runs = new BatchExportRunsRepository(ds, queue, new BatchExportsRepository(ds, queue));
          let jobs = 0;
          for (let n = await runs.dispatchNext(); n !== null; n = await runs.dispatchNext()) jobs += n;
          return jobs;
        }),
      );
      expect(dispatched.reduce((sum, n) => sum + n, 0)).toBe(expected);
      expect(await counts(t.dataSource)).toEqual({ runs: expected, duplicates: 0, run_logs: expected });
      expect(await unmatchedJobs(t.dataSource)).toEqual({
        runs_without_job: 0,
        jobs_without_run: 0,
        jobs: expected,
      });
    });

    it('the unique key holds even when every watermark is lost (a replayed tick)', async () => {
      await t.dataSource.query('UPDATE batch_exports SET scheduled_through = NULL');
      const results = await Promise.all(
        dataSources.map((ds) =>
          new BatchExportsRepository(ds, t.app.get(RunQueue)).createDueRuns(NOW, 100000),
        ),
      );
      expect(results.map((r) => r.created)).toEqual(results.map(() => 0));
      // Each due export was taken by exactly one of the sessions.
      expect(dueExports).toBe(32);
      expect(results.reduce((sum, r) => sum + r.exports, 0)).toBe(dueExports);
      expect(await counts(t.dataSource)).toEqual({ runs: expected, duplicates: 0, run_logs: expected });
    });

    it('concurrent capped ticks at different times catch up exactly once', async () => {
      const later = new Date(NOW.getTime() + 6 * 3600_000);
      const more = (
        await t.dataSource.query(
          `SELECT id, interval, created_at, scheduled_through FROM batch_exports WHERE deleted_at IS NULL`,
        )
      ).reduce(
        (sum: number, r: { interval: Interval; created_at: Date; scheduled_through: Date }) =>
          sum +
          dueRuns(
            {
              interval: r.interval,
              createdAt: r.created_at,
              startAt: null,
              endAt: null,
              scheduledThrough: r.scheduled_through,
              pauses: [],
            },
            later,
            100000,
          ).runs.length,
        0,
      );
      expect(more).toBeGreaterThan(100);
      for (let round = 0; round < 40; round++) {
        const results = await Promise.all(
          dataSources.map((ds, i) =>
            new BatchExportsRepository(ds, t.app.get(RunQueue)).createDueRuns(
              new Date(later.getTime() - (i % 3) * 600_000),
              7,
            ),
          ),
        );
        if (results.every((r) => r.created === 0) && round > 3) break;
      }
      await new BatchExportsRepository(t.dataSource, t.app.get(RunQueue)).createDueRuns(later, 100000);
      expect(await dispatchScheduledRuns(t.app)).toBe(more);
      expect(await counts(t.dataSource)).toEqual({
        runs: expected + more,
        duplicates: 0,
        run_logs: expected + more,
      });
    });

    it("issues the horizon's statement, the lock of the due exports, one statement for their runs and one for their dispatch job (in a transaction with JIT off), whatever the number of exports", async () => {
      const spy = jest.spyOn(pg.Client.prototype, 'query');
      const sent = () =>
        spy.mock.calls
          .map(([sql]) => (typeof sql === 'string' ? sql.trim().slice(0, 40) : sql))
          // On Citus, only when a transaction is prepared on a worker at that moment.
          .filter((sql) => !(typeof sql === 'string' && sql.startsWith('SELECT min(outer_xid')));
      const expected = [
        'START TRANSACTION',
        ...(onCitus() ? [expect.stringMatching(/^DO \$\$ BEGIN/)] : []), // Citus: its id (citus-write-xid.ts)
        // The export horizon first (on Citus, two more: the workers' prepared transactions, their ids).
        expect.stringMatching(/^SELECT \(/),
        ...(onCitus() ? [expect.stringMatching(/^SELECT nodename/)] : []),
        'SET LOCAL jit = off',
        // The due exports locked, then the runs created.
        expect.stringMatching(/^WITH iv\(name/),
        expect.stringMatching(/^WITH due_exports AS/),
        expect.stringMatching(/^INSERT INTO pgboss\.job\s/),
        'COMMIT',
      ];
      spy.mockClear();
      const forForty = await service.createDueRuns(new Date('2026-11-21T00:00:00.000Z'));
      expect(forForty.exports).toBeGreaterThan(1);
      expect(forForty.created).toBeGreaterThan(1);
      expect(sent()).toEqual(expected);
      await t.dataSource.query(
        // Keep one hourly export, so the second tick has due runs (and therefore jobs) whatever the random ids.
        `UPDATE batch_exports SET deleted_at = now() WHERE id <> (SELECT id FROM batch_exports WHERE deleted_at IS NULL AND interval = 'hour' ORDER BY id LIMIT 1)`,
      );
      spy.mockClear();
      const forOne = await service.createDueRuns(new Date('2026-11-22T00:00:00.000Z'));
      expect(forOne.exports).toBe(1);
      expect(forOne.created).toBeGreaterThan(0);
      expect(sent()).toEqual(expected);
    });
  });

  describe('the tick', () => {
    it('is not registered when SCHEDULER_ENABLED is false (the tests’ default)', () => {
      expect(t.app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    });

    it('never throws: a failed tick is logged and the next one runs', async () => {
      const scheduler = t.app.get(BatchExportsScheduler);
      const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const spy = jest.spyOn(service, 'createDueRuns').mockRejectedValueOnce(new Error('database away'));
      await expect(scheduler.tick()).resolves.toBeUndefined();
      expect(error).toHaveBeenCalledWith(
        expect.objectContaining({ err: expect.any(Error) }),
        'batch export scheduler tick failed; the next tick retries',
      );
      await scheduler.tick();
      expect(spy).toHaveBeenCalledTimes(2);
    });

    it('does not overlap: a tick while one is in flight joins it', async () => {
      const scheduler = t.app.get(BatchExportsScheduler);
      let release!: () => void;
      const spy = jest
        .spyOn(service, 'createDueRuns')
        .mockImplementation(
          () => new Promise((resolve) => (release = () => resolve({ created: 0, exports: 0 }))),
        );
      const first = scheduler.tick();
      const second = scheduler.tick();
      expect(second).toBe(first);
      release();
      await first;
      expect(spy).toHaveBeenCalledTimes(1);
    });
  });
  describe('the dispatch', () => {
    it('writes the jobs and log lines of runs cancelled or paused since the tick; the claim settles or parks them', async () => {
      orgId = (await t.factories.organization(owner, 'Dispatch')).id;
      await t.dataSource.query('UPDATE batch_exports SET deleted_at = now() WHERE deleted_at IS NULL');
      await dispatchScheduledRuns(t.app);
      // Only this test's jobs in the queue, so the claims below meet them.
      await t.dataSource.query("DELETE FROM pgboss.job WHERE name = 'batch-export-runs'");
      t.clock.set(new Date('2026-11-25T09:30:00.000Z'));
      const { id } = await createExport({ interval: 'hour' });
      await service.createDueRuns(new Date('2026-11-25T11:00:00.000Z'));
      const runs: { id: string }[] = await t.dataSource.query(
        'SELECT id FROM batch_export_runs WHERE batch_export_id = $1 ORDER BY data_interval_end',
        [id],
      );
      expect(runs).toHaveLength(2);
      // Before the dispatch: the first run cancelled, then the export paused.
      t.clock.set(new Date('2026-11-25T11:05:00.000Z'));
      await t.http
        .post(path(`/${id}/runs/${runs[0].id}/cancel`))
        .set(owner.auth)
        .expect(200);
      t.clock.set(new Date('2026-11-25T11:06:00.000Z'));
      await t.http
        .post(path(`/${id}/pause`))
        .set(owner.auth)
        .expect(200);
      expect(await dispatchScheduledRuns(t.app)).toBe(2);
      // A dispatch done leaves nothing to do again.
      expect(await dispatchScheduledRuns(t.app)).toBe(0);

      const logs = await t.http
        .get(path(`/${id}/logs`))
        .set(owner.auth)
        .expect(200);
      expect(
        (logs.body.results as { timestamp: string; message: string; run_id: string | null }[]).map((l) => [
          l.timestamp,
          l.message,
          l.run_id,
        ]),
      ).toEqual([
        ['2026-11-25T11:06:00.000Z', 'Batch export paused.', null],
        ['2026-11-25T11:05:00.000Z', expect.stringMatching(/^Run cancelled/), runs[0].id],
        [
          '2026-11-25T11:00:00.000Z',
          'Run created for 2026-11-25T10:00:00.000Z to 2026-11-25T11:00:00.000Z (scheduled).',
          runs[1].id,
        ],
        [
          '2026-11-25T11:00:00.000Z',
          'Run created for 2026-11-25T09:00:00.000Z to 2026-11-25T10:00:00.000Z (scheduled).',
          runs[0].id,
        ],
        ['2026-11-25T09:30:00.000Z', expect.stringMatching(/^Batch export created/), null],
      ]);

      // The cancelled run's job is settled by the claim that meets it; the next one is parked with its export.
      const claims = t.app.get(BatchExportRunsRepository);
      const caps = { organization: 0, project: 0, user: 0 };
      expect(await claims.claimNext(new Date('2026-11-25T11:07:00.000Z'), 3, caps)).toEqual({
        kind: 'settled',
      });
      expect(await claims.claimNext(new Date('2026-11-25T11:07:00.000Z'), 3, caps)).toEqual({
        kind: 'paused',
        batchExportId: id,
      });
      const jobs: { id: string; state: string; parked: boolean }[] = await t.dataSource.query(
        `SELECT r.id, j.state, j.start_after > now() + interval '1000 years' AS parked
           FROM batch_export_runs r JOIN pgboss.job j ON j.id = r.id AND j.name = 'batch-export-runs'
          WHERE r.batch_export_id = $1 ORDER BY r.data_interval_end`,
        [id],
      );
      expect(jobs).toEqual([
        { id: runs[0].id, state: 'completed', parked: false },
        { id: runs[1].id, state: 'created', parked: true },
      ]);
      const statuses: { status: string }[] = await t.dataSource.query(
        'SELECT status FROM batch_export_runs WHERE batch_export_id = $1 ORDER BY data_interval_end',
        [id],
      );
      expect(statuses.map((r) => r.status)).toEqual(['Cancelled', 'Starting']);
      t.clock.set(new Date());
    });
  });
});

describe('two app instances ticking on one database', () => {
  const ENV = { SCHEDULER_ENABLED: 'true', SCHEDULER_TICK_SECONDS: '1', SCHEDULER_MAX_CATCHUP: '1000' };
  const CREATED = new Date('2026-11-19T00:00:30.000Z');
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await createTestApp(ENV);
    b = await createTestApp(ENV, { databaseUrl: a.databaseUrl });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** Resolves once both apps' interval ticks have called createDueRuns `times` more times. */
  async function bothTicked(spies: { mock: { calls: unknown[] } }[], times: number): Promise<void> {
    const start = spies.map((s) => s.mock.calls.length);
    const deadline = Date.now() + 10_000;
    while (spies.some((s, i) => s.mock.calls.length < start[i] + times)) {
      if (Date.now() > deadline) throw new Error('the schedulers did not tick');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Let the last ticks finish their statement.
    await Promise.all([a.app.get(BatchExportsScheduler).tick(), b.app.get(BatchExportsScheduler).tick()]);
  }

  it('register their tick and together create every due run exactly once', async () => {
    expect(a.app.get(SchedulerRegistry).getIntervals()).toEqual([BatchExportsScheduler.INTERVAL_NAME]);
    expect(b.app.get(SchedulerRegistry).getIntervals()).toEqual([BatchExportsScheduler.INTERVAL_NAME]);
    a.clock.set(CREATED);
    b.clock.set(CREATED);
    const owner = await a.factories.user();
    const org = await a.factories.organization(owner, 'Replicas');
    const intervals: Interval[] = [];
    for (let i = 0; i < 15; i++) {
      const interval = INTERVALS[i % INTERVALS.length];
      intervals.push(interval);
      await a.http
        .post(`/api/organizations/${org.id}/batch_exports`)
        .set(owner.auth)
        .send({ name: `Replica ${i}`, destination: NOOP, interval })
        .expect(201);
    }
    const expectedAt = (now: Date) =>
      intervals.reduce(
        (sum, interval) =>
          sum +
          dueRuns(
            { interval, createdAt: CREATED, startAt: null, endAt: null, scheduledThrough: null, pauses: [] },
            now,
            100000,
          ).runs.length,
        0,
      );
    const spies = [
      jest.spyOn(a.app.get(BatchExportsService), 'createDueRuns'),
      jest.spyOn(b.app.get(BatchExportsService), 'createDueRuns'),
    ];

    const day = new Date('2026-11-20T00:00:00.000Z');
    a.clock.set(day);
    b.clock.set(day);
    // One pair of ticks started at the same moment, then the apps' own intervals for a while.
    await Promise.all([a.app.get(BatchExportsScheduler).tick(), b.app.get(BatchExportsScheduler).tick()]);
    await bothTicked(spies, 2);
    await dispatchScheduledRuns(a.app);
    expect(await counts(a.dataSource)).toEqual({
      runs: expectedAt(day),
      duplicates: 0,
      run_logs: expectedAt(day),
    });
    expect(expectedAt(day)).toBeGreaterThan(1000);

    const later = new Date(day.getTime() + 3 * 3600_000 + 60_000);
    a.clock.set(later);
    b.clock.set(later);
    await bothTicked(spies, 2);
    await dispatchScheduledRuns(b.app);
    expect(await counts(b.dataSource)).toEqual({
      runs: expectedAt(later),
      duplicates: 0,
      run_logs: expectedAt(later),
    });
    for (const spy of spies) expect(spy.mock.calls.length).toBeGreaterThanOrEqual(4);
  });
});
