import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { BatchExportsRepository } from '../../src/batch-exports/batch-exports.repository.js';
import { DUE_EXPORTS_PER_STATEMENT } from '../../src/batch-exports/batch-exports.scheduler-sql.js';
import { BatchExportsService } from '../../src/batch-exports/batch-exports.service.js';
import { dueRuns } from '../../src/batch-exports/schedule.js';
import { RunQueue } from '../../src/batch-exports/runs/run-queue.js';
import { typeormOptions } from '../../src/database/typeorm-options.js';
import { loadServiceFeatures } from '../../src/features.js';
import { dispatchScheduledRuns } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

const CREATED = new Date('2026-11-19T20:00:30.000Z');
const NOW = new Date('2026-11-20T00:00:00.000Z');
/** Exports in the test: more than two lock statements' worth, so that a tick's transactions can run side by side. */
const EXPORTS = DUE_EXPORTS_PER_STATEMENT * 3;

/**
 * SCHEDULER_TICK_CONNECTIONS: a tick's transactions of DUE_EXPORTS_PER_STATEMENT exports on several connections at
 * once, their locks one after the other in key order (DueExportsCursor), and still every due run exactly once, each
 * export evaluated once per tick, paused and deleted exports skipped.
 */
describe('a scheduler tick on several connections', () => {
  let t: TestApp;
  let dataSources: DataSource[] = [];
  /** Runs due at NOW (4 hourly intervals per active export) and the active exports. */
  let expected: { runs: number; exports: number };

  const counts = async () => {
    const [row] = await t.dataSource.query(
      `SELECT (SELECT count(*) FROM batch_export_runs)::int AS runs,
              (SELECT count(*) FROM (SELECT 1 FROM batch_export_runs GROUP BY batch_export_id, data_interval_start,
                                      data_interval_end HAVING count(*) > 1) d)::int AS duplicates,
              (SELECT count(*) FROM batch_export_runs r JOIN batch_exports e ON e.id = r.batch_export_id
                WHERE e.paused OR e.deleted_at IS NOT NULL)::int AS skipped_exports_runs,
              (SELECT count(*) FROM batch_export_logs WHERE message LIKE 'Run created %')::int AS run_logs`,
    );
    return row as { runs: number; duplicates: number; skipped_exports_runs: number; run_logs: number };
  };
  const reset = async () => {
    await t.dataSource.query('DELETE FROM batch_export_logs');
    await t.dataSource.query('DELETE FROM batch_export_runs');
    await t.dataSource.query('UPDATE batch_exports SET scheduled_through = NULL');
    await t.dataSource.query(
      "DELETE FROM pgboss.job WHERE name IN ('batch-export-runs', 'batch-export-run-dispatch')",
    );
  };

  beforeAll(async () => {
    t = await createTestApp();
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Connections');
    t.clock.set(CREATED);
    const { body } = await t.http
      .post(`/api/organizations/${org.id}/batch_exports`)
      .set(owner.auth)
      .send({ name: 'e', destination: { type: 'NoOp', config: {} }, interval: 'hour' })
      .expect(201);
    t.clock.set(new Date());
    // Copies of it (a tenth paused, a thirteenth deleted), as the scheduler reads them: rows of batch_exports.
    await t.dataSource.query(
      `INSERT INTO batch_exports
       SELECT (jsonb_populate_record(NULL::batch_exports, to_jsonb(e) || jsonb_build_object(
                 'id', gen_random_uuid(), 'name', 'e ' || g, 'paused', g % 10 = 0,
                 'deleted_at', CASE WHEN g % 13 = 0 THEN e.created_at END))).*
         FROM batch_exports e, generate_series(1, $2::int - 1) g
        WHERE e.id = $1`,
      [body.id, EXPORTS],
    );
    const [{ active }] = await t.dataSource.query(
      'SELECT count(*)::int AS active FROM batch_exports WHERE NOT paused AND deleted_at IS NULL',
    );
    const perExport = dueRuns(
      {
        interval: 'hour',
        createdAt: CREATED,
        startAt: null,
        endAt: null,
        scheduledThrough: null,
        pauses: [],
      },
      NOW,
      100,
    ).runs.length;
    expect(perExport).toBe(4);
    expected = { runs: active * perExport, exports: active };
    expect(active).toBeGreaterThan(DUE_EXPORTS_PER_STATEMENT * 2);
    const features = await loadServiceFeatures();
    dataSources = await Promise.all(
      Array.from({ length: 3 }, () =>
        new DataSource(typeormOptions({ url: t.databaseUrl, poolSize: 2, features })).initialize(),
      ),
    );
  }, 120_000);
  afterAll(async () => {
    await Promise.all(dataSources.map((ds) => ds.destroy()));
    await t?.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('runs its transactions on two connections at once (the default), each export once, in key order', async () => {
    await reset();
    let open = 0;
    let mostOpen = 0;
    const clients = new Set<unknown>();
    const cursors: string[] = [];
    const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    const spy = jest.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const [sql, params] = args as [unknown, unknown[] | undefined];
      if (sql === 'START TRANSACTION') {
        clients.add(this);
        mostOpen = Math.max(mostOpen, ++open);
      } else if (sql === 'COMMIT' || sql === 'ROLLBACK') open--;
      else if (typeof sql === 'string' && sql.trim().startsWith('WITH iv(name'))
        cursors.push(String(params?.[2]));
      return original.apply(this, args);
    } as never);
    const result = await t.app.get(BatchExportsService).createDueRuns(NOW);
    spy.mockRestore();
    expect(result).toEqual({ created: expected.runs, exports: expected.exports });
    expect(await counts()).toEqual({
      runs: expected.runs,
      duplicates: 0,
      skipped_exports_runs: 0,
      run_logs: 0,
    });
    // Two transactions at once, on two connections; each lock after the one before it (its cursor, the last id
    // locked before, rises), so no export is read twice.
    expect(mostOpen).toBe(2);
    expect(clients.size).toBe(2);
    expect(cursors.length).toBeGreaterThanOrEqual(Math.ceil(expected.exports / DUE_EXPORTS_PER_STATEMENT));
    expect([...cursors].sort()).toEqual(cursors);
    expect(new Set(cursors).size).toBe(cursors.length);
    expect(await dispatchScheduledRuns(t.app)).toBe(expected.runs);
    expect((await counts()).run_logs).toBe(expected.runs);
    // A second tick at the same time finds nothing due.
    expect(await t.app.get(BatchExportsService).createDueRuns(NOW)).toEqual({ created: 0, exports: 0 });
  });

  it('creates every due run once when several ticks of two connections each run at once', async () => {
    await reset();
    const results = await Promise.all(
      dataSources.map((ds) => new BatchExportsRepository(ds, t.app.get(RunQueue)).createDueRuns(NOW, 100, 2)),
    );
    expect(results.reduce((sum, r) => sum + r.created, 0)).toBe(expected.runs);
    // Each export was taken by one transaction of one tick.
    expect(results.reduce((sum, r) => sum + r.exports, 0)).toBe(expected.exports);
    expect(await counts()).toMatchObject({ runs: expected.runs, duplicates: 0, skipped_exports_runs: 0 });
    expect(await dispatchScheduledRuns(t.app)).toBe(expected.runs);
    expect((await counts()).run_logs).toBe(expected.runs);
  });

  it('runs them one after the other with one connection, as before', async () => {
    await reset();
    const result = await new BatchExportsRepository(dataSources[0], t.app.get(RunQueue)).createDueRuns(
      NOW,
      100,
      1,
    );
    expect(result).toEqual({ created: expected.runs, exports: expected.exports });
    expect(await counts()).toMatchObject({ runs: expected.runs, duplicates: 0, skipped_exports_runs: 0 });
  });
});
