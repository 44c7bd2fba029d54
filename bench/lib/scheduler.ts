import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import type pg from 'pg';
import { DataSource, type DataSourceOptions, type Logger } from 'typeorm';
import { readCpuMs } from './processes.js';
import type { SchedulerResult } from './report.js';

/** The parts of the built service the scheduler scenario calls (imported from dist/ at run time). */
interface RunQueueLike {
  onModuleInit(): Promise<void>;
  beforeApplicationShutdown(): Promise<void>;
}
interface ServiceModules {
  typeormOptions(settings: { url: string; poolSize?: number; applicationName?: string }): DataSourceOptions;
  BatchExportsRepository: new (
    dataSource: DataSource,
    queue: RunQueueLike,
  ) => {
    createDueRuns(
      now: Date,
      maxCatchup: number,
      connections?: number,
    ): Promise<{ created: number; exports: number }>;
  };
  /** The job queue the repository sends each transaction's dispatch to (started on the DataSource). */
  runQueue(dataSource: DataSource): Promise<RunQueueLike>;
  /** The workers' repository, whose `dispatchNext` writes the dispatched runs' jobs and log lines. */
  runsRepository(dataSource: DataSource, queue: RunQueueLike): { dispatchNext(): Promise<number | null> };
}

async function loadService(root: string): Promise<ServiceModules> {
  const load = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href);
  const [options, features, repository, queue, config, runs] = await Promise.all([
    load('database/typeorm-options.js'),
    load('features.js').then((m: { loadServiceFeatures(): Promise<unknown[]> }) => m.loadServiceFeatures()),
    load('batch-exports/batch-exports.repository.js'),
    load('batch-exports/runs/run-queue.js'),
    load('config/config.js'),
    load('batch-exports/runs/batch-export-runs.repository.js'),
    // Registers the features' settings (BATCH_EXPORT_*), parsed by AppConfig.fromEnv.
    load('features.js'),
  ]);
  return {
    // The service's features (their entities and migrations), as the service builds its data source.
    typeormOptions: (settings) => options.typeormOptions({ ...settings, features }),
    BatchExportsRepository: repository.BatchExportsRepository,
    runQueue: async (dataSource) => {
      const runQueue = new queue.RunQueue(
        dataSource,
        config.AppConfig.fromEnv({ BATCH_EXPORT_WORKERS: 'false' }),
      ) as RunQueueLike;
      await runQueue.onModuleInit();
      return runQueue;
    },
    runsRepository: (dataSource, runQueue) =>
      new runs.BatchExportRunsRepository(
        dataSource,
        runQueue,
        new repository.BatchExportsRepository(dataSource, runQueue),
      ),
  };
}

/** Counts the statements a DataSource sends (TypeORM's query log hook). */
export class CountingLogger implements Logger {
  count = 0;
  logQuery(): void {
    this.count++;
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

const MAX_CATCHUP = 100; // SCHEDULER_MAX_CATCHUP's default
/** SCHEDULER_TICK_CONNECTIONS (its default; BENCH_TICK_CONNECTIONS to compare): a tick's pool has as many. */
const TICK_CONNECTIONS = Number(process.env.BENCH_TICK_CONNECTIONS ?? 2);

/** Carries out every waiting dispatch, as a worker's dispatch loop does; the number of jobs created. */
async function dispatchAll(runs: { dispatchNext(): Promise<number | null> }): Promise<number> {
  let jobs = 0;
  for (let n = await runs.dispatchNext(); n !== null; n = await runs.dispatchNext()) jobs += n;
  return jobs;
}

/**
 * Makes every export of the scheduler organization due exactly once at `now` (its watermark one interval
 * behind) and removes the runs and logs earlier ticks created there.
 */
async function resetDueExports(db: pg.Client, organizationId: string, now: Date): Promise<void> {
  await db.query(
    `DELETE FROM batch_export_logs l USING batch_exports e WHERE l.batch_export_id = e.id AND e.organization_id = $1`,
    [organizationId],
  );
  await db.query(
    `DELETE FROM batch_export_runs r USING batch_exports e WHERE r.batch_export_id = e.id AND e.organization_id = $1`,
    [organizationId],
  );
  // Their jobs too (the bench has no workers: they were never run), and the ticks' dispatches.
  await db.query(
    `DELETE FROM pgboss.job j WHERE j.name = 'batch-export-runs' AND NOT EXISTS (SELECT 1 FROM batch_export_runs r WHERE r.id = j.id)`,
  );
  await db.query(`DELETE FROM pgboss.job WHERE name = 'batch-export-run-dispatch'`);
  await db.query(
    `UPDATE batch_exports
        SET scheduled_through = (date_trunc('hour', $2::timestamptz AT TIME ZONE 'UTC') - interval '1 hour') AT TIME ZONE 'UTC'
      WHERE organization_id = $1`,
    [organizationId, now],
  );
  await db.query('VACUUM ANALYZE batch_exports, batch_export_runs, batch_export_logs');
}

/** Puts the scheduler organization back as seeded: no runs, nothing due. */
async function restore(db: pg.Client, organizationId: string): Promise<void> {
  await resetDueExports(db, organizationId, new Date());
  await db.query(
    `UPDATE batch_exports SET scheduled_through = timestamptz '2100-01-01T00:00:00Z' WHERE organization_id = $1`,
    [organizationId],
  );
  await db.query('VACUUM ANALYZE batch_exports');
}

/**
 * The scheduler scenario: `createDueRuns` of the built service against the seeded database with every one of
 * the organization's exports due. Single ticks are timed (wall time, statements sent); then `concurrent` ticks
 * run at once, each on its own DataSource and connection, and the scheduled runs are checked for duplicates.
 */
export async function benchScheduler(options: {
  root: string;
  url: string;
  db: pg.Client;
  organizationId: string;
  ticks: number;
  concurrent: number;
  log: (m: string) => void;
}): Promise<SchedulerResult> {
  const { db, organizationId, log } = options;
  const service = await loadService(options.root);
  const exports = (
    await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM batch_exports WHERE organization_id = $1 AND NOT paused AND deleted_at IS NULL',
      [organizationId],
    )
  ).rows[0].n;
  const open = async (logger?: Logger) => {
    const ds = new DataSource({
      ...service.typeormOptions({
        url: options.url,
        poolSize: TICK_CONNECTIONS,
        applicationName: 'bench-scheduler',
      }),
      ...(logger ? { logging: ['query'], logger } : {}),
    } as DataSourceOptions);
    return ds.initialize();
  };

  const tickMs: number[] = [];
  let tickPostgresCpuMs: number[] | null = [];
  const dispatchMs: number[] = [];
  let dispatchPostgresCpuMs: number[] | null = [];
  let runsPerTick = 0;
  let statementsPerTick = 0;
  try {
    for (let i = 0; i < options.ticks; i++) {
      const now = new Date();
      await resetDueExports(db, organizationId, now);
      const logger = new CountingLogger();
      const ds = await open(logger);
      try {
        const queue = await service.runQueue(ds);
        const repository = new service.BatchExportsRepository(ds, queue);
        // The pool's connections, opened at once (each query holds one while the other starts): their backends
        // run the tick. Their CPU time is readable when the server is local.
        const pids = [
          ...new Set(
            (
              await Promise.all(
                Array.from({ length: TICK_CONNECTIONS }, () =>
                  ds.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)'),
                ),
              )
            ).map(([row]) => row.pid),
          ),
        ];
        const cpu = () => {
          try {
            return pids.reduce((sum, pid) => sum + readCpuMs(pid), 0);
          } catch {
            return null;
          }
        };
        const cpuBefore = cpu();
        logger.count = 0;
        const started = performance.now();
        const { created } = await repository.createDueRuns(now, MAX_CATCHUP, TICK_CONNECTIONS);
        tickMs.push(performance.now() - started);
        const cpuAfter = cpu();
        if (cpuBefore === null || cpuAfter === null) tickPostgresCpuMs = null;
        else tickPostgresCpuMs?.push(cpuAfter - cpuBefore);
        runsPerTick = created;
        statementsPerTick = logger.count;
        // What the tick leaves to the workers, timed on the same connection: its runs' jobs and log lines.
        const dispatchStarted = performance.now();
        const jobs = await dispatchAll(service.runsRepository(ds, queue));
        dispatchMs.push(performance.now() - dispatchStarted);
        const cpuDispatched = cpu();
        if (cpuAfter === null || cpuDispatched === null) dispatchPostgresCpuMs = null;
        else dispatchPostgresCpuMs?.push(cpuDispatched - cpuAfter);
        await queue.beforeApplicationShutdown();
        log(
          `scheduler: tick ${i + 1}: ${created} runs in ${Math.round(tickMs[i])} ms, ${statementsPerTick} statement(s); ` +
            `their ${jobs} jobs and log lines dispatched in ${Math.round(dispatchMs[i])} ms`,
        );
      } finally {
        await ds.destroy();
      }
    }

    const now = new Date();
    await resetDueExports(db, organizationId, now);
    const sources = await Promise.all(Array.from({ length: options.concurrent }, () => open()));
    const queues = await Promise.all(sources.map((ds) => service.runQueue(ds)));
    let created = 0;
    let wall = 0;
    try {
      const started = performance.now();
      const results = await Promise.all(
        sources.map((ds, i) =>
          new service.BatchExportsRepository(ds, queues[i]).createDueRuns(now, MAX_CATCHUP, TICK_CONNECTIONS),
        ),
      );
      wall = performance.now() - started;
      created = results.reduce((sum, r) => sum + r.created, 0);
      log(
        `scheduler: ${options.concurrent} concurrent ticks: ${results.map((r) => r.created).join(' + ')} runs in ${Math.round(wall)} ms`,
      );
      // The dispatches, by as many workers at once.
      await Promise.all(sources.map((ds, i) => dispatchAll(service.runsRepository(ds, queues[i]))));
    } finally {
      await Promise.all(queues.map((q) => q.beforeApplicationShutdown()));
      await Promise.all(sources.map((ds) => ds.destroy()));
    }
    const { duplicates, runs } = (
      await db.query<{ duplicates: number; runs: number }>(
        `SELECT count(*) FILTER (WHERE n > 1)::int AS duplicates, coalesce(sum(n), 0)::int AS runs
           FROM (SELECT count(*) AS n
                   FROM batch_export_runs r JOIN batch_exports e ON e.id = r.batch_export_id
                  WHERE e.organization_id = $1 AND r.backfill_id IS NULL
                  GROUP BY r.batch_export_id, r.data_interval_start, r.data_interval_end) d`,
        [organizationId],
      )
    ).rows[0];
    if (runs !== created) log(`scheduler: WARNING ${runs} run rows but the ticks reported ${created}`);
    const unmatched = (
      await db.query<{ without_job: number; without_log: number }>(
        `SELECT count(*) FILTER (WHERE coalesce(j.n, 0) <> 1)::int AS without_job,
                count(*) FILTER (WHERE coalesce(l.n, 0) <> 1)::int AS without_log
           FROM batch_export_runs r
           JOIN batch_exports e ON e.id = r.batch_export_id
           LEFT JOIN (SELECT id, count(*) AS n FROM pgboss.job WHERE name = 'batch-export-runs' GROUP BY id) j
             ON j.id = r.id
           LEFT JOIN (SELECT run_id, count(*) AS n FROM batch_export_logs
                       WHERE message LIKE 'Run created %' GROUP BY run_id) l ON l.run_id = r.id
          WHERE e.organization_id = $1`,
        [organizationId],
      )
    ).rows[0];
    return {
      exports,
      tickMs,
      tickPostgresCpuMs,
      runsPerTick,
      statementsPerTick,
      concurrentTicks: options.concurrent,
      concurrentWallMs: wall,
      concurrentRunsCreated: runs,
      duplicateRuns: duplicates,
      dispatchMs,
      dispatchPostgresCpuMs,
      runsWithoutJob: unmatched.without_job,
      runsWithoutLog: unmatched.without_log,
    };
  } finally {
    await restore(db, organizationId);
  }
}
