import { Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PgBoss, type Db as IDatabase, type Job } from 'pg-boss';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/config.js';
import { JOB_QUEUE_SCHEMA, poolExecutor } from '../../database/job-queue.js';

/** The queue of batch export runs: one job per run, the job's id is the run's id. */
export const RUNS_QUEUE = 'batch-export-runs';
/** Where a run's job lands when pg-boss gave up on it (a worker lost it on its last attempt). */
export const DEAD_RUNS_QUEUE = 'batch-export-runs-dead';
/** The `startAfter` of the jobs of a paused export: they wait until unpause sets it back to now. */
export const PARKED_UNTIL = new Date('9999-12-31T00:00:00.000Z');
/** Longest a job may stay active (pg-boss's upper bound); heartbeats, not this, detect a lost worker. */
const EXPIRE_SECONDS = 24 * 3600;

export interface RunJobData {
  batch_export_id: string;
}

/** A run whose job is to be queued: its id, its export and the export's organization (the job's group). */
export interface RunToEnqueue {
  id: string;
  batchExportId: string;
  organizationId: string;
}

/** A claimed job: its id (the run's id) and the attempt (pg-boss's retry count) that holds it. */
export interface RunAttempt {
  id: string;
  retryCount: number;
}

export interface QueueDepth {
  /** Jobs that could start now (created or waiting for a retry whose time has come). */
  ready: number;
  /** Jobs waiting for a later time: a retry's backoff, or a paused export. */
  deferred: number;
  active: number;
  /** Seconds the oldest ready job has waited since it became ready; 0 when none. */
  oldestReadySeconds: number;
}

/**
 * The job queue of batch export runs: pg-boss on the service's own PostgreSQL, in its own schema
 * (`pgboss`, created by `runMigrations`). Jobs are claimed with `FOR UPDATE SKIP LOCKED`, so any number of
 * worker processes share them. The queue's policy is `key_strict_fifo` keyed by the export: one run of an
 * export is active at a time, the others wait in creation order (run ids are time-ordered by interval, so
 * the runs created together — a tick, a backfill — run in interval order).
 *
 * Every method that changes jobs takes the transaction (`IDatabase`, see `transactionExecutor`) of the run
 * change it belongs to, so a run and its job commit together or not at all.
 */
@Injectable()
export class RunQueue implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(RunQueue.name);
  private readonly boss: PgBoss;
  private started = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {
    const supervise = config.get('BATCH_EXPORT_WORKERS');
    const superviseSeconds = config.get('BATCH_EXPORT_SUPERVISE_SECONDS');
    this.boss = new PgBoss({
      db: poolExecutor(dataSource),
      schema: JOB_QUEUE_SCHEMA,
      // The schema is created and upgraded by `runMigrations` (the migrate command), never at boot.
      migrate: false,
      // Processes running workers also watch for lost heartbeats and do the queue's upkeep.
      supervise,
      superviseIntervalSeconds: superviseSeconds,
      monitorIntervalSeconds: superviseSeconds,
      schedule: false,
      instanceName: supervise ? 'batch-export-worker' : 'batch-export-api',
    });
    this.boss.on('error', (err: Error) =>
      this.logger.warn({ reason: err.message }, 'job queue maintenance failed; it is retried'),
    );
  }

  async onModuleInit(): Promise<void> {
    try {
      await this.boss.start();
    } catch (err) {
      if (/not installed|version/i.test((err as Error).message)) {
        throw new Error(
          `The job queue schema "${JOB_QUEUE_SCHEMA}" is missing or outdated: run the migrations (npm run cli -- migrate). ${(err as Error).message}`,
          { cause: err },
        );
      }
      throw err;
    }
    this.started = true;
    const options = {
      policy: 'key_strict_fifo' as const,
      // Attempts past the last one only record the run as FailedRetryable (see BatchExportRunsRepository).
      retryLimit: this.config.get('BATCH_EXPORT_MAX_ATTEMPTS'),
      retryDelay: this.config.get('BATCH_EXPORT_RETRY_DELAY_SECONDS'),
      retryBackoff: true,
      retryDelayMax: 3600,
      expireInSeconds: EXPIRE_SECONDS,
      heartbeatSeconds: this.config.get('BATCH_EXPORT_HEARTBEAT_SECONDS'),
      // A queued job is kept as long as its run may wait (paused exports move their jobs' start far ahead).
      retentionSeconds: 10 * 365 * 24 * 3600,
      deleteAfterSeconds: 7 * 24 * 3600,
      deadLetter: DEAD_RUNS_QUEUE,
    };
    await this.boss.createQueue(DEAD_RUNS_QUEUE, { retryLimit: 10, retryDelay: 5 });
    await this.boss.createQueue(RUNS_QUEUE, options);
    // An existing queue keeps its options: apply this process's settings.
    const { policy: _policy, ...updatable } = options;
    await this.boss.updateQueue(RUNS_QUEUE, updatable);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    // The pool belongs to TypeORM: pg-boss stops its timers and leaves the connections alone.
    await this.boss.stop({ graceful: false, close: false }).catch(() => undefined);
  }

  /**
   * One job per run, inserted in `db`'s transaction; parked (not runnable before unpause) when `parked`. The
   * job's group is the export's organization: `fetch` skips the organizations at their cap of running runs.
   */
  async enqueue(db: IDatabase, runs: readonly RunToEnqueue[], parked = false): Promise<void> {
    if (!runs.length) return;
    const ids = await this.boss.insert(
      RUNS_QUEUE,
      runs.map((run) => ({
        id: run.id,
        data: { batch_export_id: run.batchExportId } satisfies RunJobData,
        singletonKey: run.batchExportId,
        group: { id: run.organizationId },
        ...(parked ? { startAfter: PARKED_UNTIL } : {}),
      })),
      { db, returnId: true },
    );
    if ((ids?.length ?? 0) !== runs.length) {
      throw new Error(`The job queue took ${ids?.length ?? 0} of ${runs.length} run jobs`);
    }
  }

  /** Cancels the jobs of these runs (queued or active: an active run notices its cancelled run itself). */
  async cancel(db: IDatabase, runIds: readonly string[]): Promise<void> {
    if (runIds.length) await this.boss.cancel(RUNS_QUEUE, [...runIds], { db });
  }

  /** Holds every queued job of the export until `release` (pause). Active jobs finish. */
  async park(db: IDatabase, batchExportId: string): Promise<void> {
    await this.boss.update(RUNS_QUEUE, undefined, {
      singletonKey: batchExportId,
      match: 'all',
      startAfter: PARKED_UNTIL,
      db,
    });
  }

  /** Makes the export's queued jobs runnable again (unpause), in their order. */
  async release(db: IDatabase, batchExportId: string): Promise<void> {
    await this.boss.update(RUNS_QUEUE, undefined, {
      singletonKey: batchExportId,
      match: 'all',
      startAfter: new Date(),
      db,
    });
  }

  /**
   * Claims the next runnable job in `db`'s transaction (rolled back: the job is back in the queue), skipping the
   * jobs of organizations that have `perOrganization` jobs active (0: no limit). The skip reads committed
   * state, so two concurrent claims may both pass it: `activeInOrganization` under `lockOrganization` is the
   * exact check.
   */
  async fetch(db: IDatabase, perOrganization = 0): Promise<Job<RunJobData> | null> {
    const [job] = await this.boss.fetch<RunJobData>(RUNS_QUEUE, {
      db,
      batchSize: 1,
      ...(perOrganization > 0 ? { groupConcurrency: perOrganization } : {}),
    });
    return job ?? null;
  }

  /** Serializes the claims of one organization's runs until `db`'s transaction ends (a transaction lock). */
  async lockOrganization(db: IDatabase, organizationId: string): Promise<void> {
    await db.executeSql(`SELECT pg_advisory_xact_lock(hashtextextended('batch-export-org:' || $1, 0))`, [
      organizationId,
    ]);
  }

  /** Jobs of the organization's runs active now, as `db` sees them (its own claim included). */
  async activeInOrganization(db: IDatabase, organizationId: string): Promise<number> {
    const { rows } = (await db.executeSql(
      `SELECT count(*)::int AS active
         FROM ${JOB_QUEUE_SCHEMA}.job j
         JOIN batch_export_runs r ON r.id = j.id
         JOIN batch_exports e ON e.id = r.batch_export_id
        WHERE j.name = $1 AND j.state = 'active' AND e.organization_id = $2`,
      [RUNS_QUEUE, organizationId],
    )) as { rows: { active: number }[] };
    return rows[0].active;
  }

  /** Gives a job queued before jobs had groups its organization's group, so `fetch` can skip it at the cap. */
  async assignGroup(jobId: string, organizationId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${JOB_QUEUE_SCHEMA}.job SET group_id = $3
        WHERE name = $1 AND id = $2 AND group_id IS NULL`,
      [RUNS_QUEUE, jobId, organizationId],
    );
  }

  /** Reports the attempt alive. False when it no longer holds the job (cancelled, or given to another worker). */
  async touch(attempt: RunAttempt): Promise<boolean> {
    const result = await this.boss.touch(RUNS_QUEUE, attempt);
    return (result as { affected?: number }).affected! > 0;
  }

  /** Ends the job (whatever the run's outcome): the export's next run may start. */
  async complete(db: IDatabase, attempt: RunAttempt, output: object): Promise<void> {
    await this.boss.complete(RUNS_QUEUE, attempt, output, { db });
  }

  /** Gives the job back for a later attempt, after the queue's backoff. */
  async retry(db: IDatabase, attempt: RunAttempt, output: object): Promise<void> {
    await this.boss.fail(RUNS_QUEUE, attempt, output, { db });
  }

  /** Claims a job of a run pg-boss gave up on (dead letter), in `db`'s transaction. */
  async fetchDead(db: IDatabase): Promise<Job<RunJobData> | null> {
    const [job] = await this.boss.fetch<RunJobData>(DEAD_RUNS_QUEUE, {
      db,
      batchSize: 1,
      includeMetadata: true,
    });
    return job ?? null;
  }

  /** Settles a dead letter and removes the failed job it came from (which would hold back its export's runs). */
  async settleDead(db: IDatabase, deadJobId: string, sourceJobId: string | null): Promise<void> {
    if (sourceJobId) await this.boss.deleteJob(RUNS_QUEUE, sourceJobId, { db });
    await this.boss.complete(DEAD_RUNS_QUEUE, deadJobId, null, { db });
  }

  /** Depth of the queue, read from its table (for the metrics; cheap: one indexed aggregate). */
  async depth(): Promise<QueueDepth> {
    const [row]: {
      ready: number;
      deferred: number;
      active: number;
      oldest: number | null;
    }[] = await this.dataSource.query(
      `SELECT count(*) FILTER (WHERE state < 'active' AND start_after <= now())::int AS ready,
              count(*) FILTER (WHERE state < 'active' AND start_after > now())::int AS deferred,
              count(*) FILTER (WHERE state = 'active')::int AS active,
              extract(epoch FROM now() - min(start_after) FILTER (WHERE state < 'active' AND start_after <= now()))::float8
                AS oldest
         FROM ${JOB_QUEUE_SCHEMA}.job
        WHERE name = $1 AND state <= 'active'`,
      [RUNS_QUEUE],
    );
    return {
      ready: row.ready,
      deferred: row.deferred,
      active: row.active,
      oldestReadySeconds: row.oldest ?? 0,
    };
  }
}
