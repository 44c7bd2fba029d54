import { Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PgBoss, type Db as IDatabase, type Job } from 'pg-boss';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/config.js';
import { JOB_QUEUE_SCHEMA, poolExecutor } from '../../database/job-queue.js';
import {
  INSERT_DISPATCH_JOB_SQL,
  INSERT_DISPATCHED_RUN_JOBS_SQL,
  INSERT_RUN_JOBS_SQL,
} from './run-queue-sql.js';

/** The queue of batch export runs: one job per run, the job's id is the run's id. */
export const RUNS_QUEUE = 'batch-export-runs';
/**
 * The queue of the scheduler's dispatches: one job per transaction of a tick, holding the ids of the runs it
 * created (`{run_ids}`). A worker takes it and, in one transaction, creates those runs' jobs and their
 * "Run created" log lines (`BatchExportRunsRepository.dispatchNext`), so a tick writes its runs and one job, not
 * a job and a log line per run (docs/performance.md, "Scheduler tick: where the time goes").
 */
export const DISPATCH_QUEUE = 'batch-export-run-dispatch';
/** Where a run's job lands when pg-boss gave up on it (a worker lost it on its last attempt). */
export const DEAD_RUNS_QUEUE = 'batch-export-runs-dead';
/**
 * The queue of notification webhooks (a failed run, an auto-pause): one job per delivery, the job's id is the
 * delivery's id. Retried with a doubling delay (BATCH_EXPORT_WEBHOOK_RETRY_DELAY_SECONDS) up to
 * BATCH_EXPORT_WEBHOOK_MAX_ATTEMPTS attempts.
 */
export const NOTIFICATIONS_QUEUE = 'batch-export-notifications';
/** The `startAfter` of the jobs of a paused export: they wait until unpause sets it back to now. */
export const PARKED_UNTIL = new Date('9999-12-31T00:00:00.000Z');
/** Longest a job may stay active (pg-boss's upper bound); heartbeats, not this, detect a lost worker. */
const EXPIRE_SECONDS = 24 * 3600;

export interface RunJobData {
  batch_export_id: string;
}

/** A dispatch of scheduled runs: the runs one transaction of a tick created. */
export interface DispatchJobData {
  run_ids: string[];
}

/** A notification webhook to deliver: its export (whose URL and secret are read at each attempt) and its body. */
export interface NotificationJobData {
  batch_export_id: string;
  event: string;
  /** The JSON body, as signed and sent (the same bytes on every attempt). */
  body: string;
}

/** A run whose job is to be queued: its id, its export (the job's group) and the export's organization. */
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

/** Most runs executing at once per organization, per project and per user (0: no cap). */
export interface FairnessCaps {
  organization: number;
  project: number;
  user: number;
}

/** What a run's fairness is counted by: its organization, its project and its user (`fairnessUserSql`). */
export interface FairnessKeys {
  organizationId: string;
  teamId: number;
  userId: number | null;
}

/** Runs executing now with the same keys as a run, as the claim transaction sees them (its own claim included). */
export interface FairnessCounts {
  organization: number;
  project: number;
  user: number;
}

/**
 * The user a run of the export `alias` counts against: the user whose key created the export, else (an export
 * created before that was recorded, or whose user was deleted) the organization's first owner. The exports of
 * every organization one user created exports in count together.
 */
export const fairnessUserSql = (alias: string) =>
  `coalesce(${alias}.created_by_id, (SELECT m.user_id FROM organization_memberships m
     WHERE m.organization_id = ${alias}.organization_id AND m.level = 15 ORDER BY m.joined_at, m.id LIMIT 1))`;

/** The active jobs of runs with their fairness keys (a subquery). */
const ACTIVE_RUNS_SQL = `
  SELECT e.organization_id, e.team_id, ${fairnessUserSql('e')} AS user_id
    FROM ${JOB_QUEUE_SCHEMA}.job j
    JOIN batch_export_runs r ON r.id = j.id
    JOIN batch_exports e ON e.id = r.batch_export_id
   WHERE j.name = $1 AND j.state = 'active'`;

export interface QueueDepth {
  /** Jobs that could start now (created or waiting for a retry whose time has come). */
  ready: number;
  /** Jobs waiting for a later time: a retry's backoff, or a paused export. */
  deferred: number;
  active: number;
  /**
   * Scheduled runs whose job is not written yet: the runs of the dispatches waiting in DISPATCH_QUEUE or being
   * carried out (a tick's runs until a worker process's dispatch loop takes them; with none running, until one does).
   */
  undispatched: number;
  /** Seconds the oldest ready job, or the oldest waiting dispatch, has waited since it became ready; 0 when none. */
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
    const notifications = {
      retryLimit: this.config.get('BATCH_EXPORT_WEBHOOK_MAX_ATTEMPTS') - 1,
      retryDelay: this.config.get('BATCH_EXPORT_WEBHOOK_RETRY_DELAY_SECONDS'),
      retryBackoff: true,
      retryDelayMax: 3600,
      // A worker that dies mid-delivery leaves the job active: it is retried after this.
      expireInSeconds: 300,
      deleteAfterSeconds: 7 * 24 * 3600,
    };
    await this.boss.createQueue(NOTIFICATIONS_QUEUE, notifications);
    await this.boss.updateQueue(NOTIFICATIONS_QUEUE, notifications);
    const dispatch = {
      // The dispatch is taken in a transaction that also completes it (a lost worker rolls it back): retries and
      // expiry are only a safety net. Kept queued as long as a run's job would be.
      retryLimit: 100,
      retryDelay: 5,
      retryBackoff: true,
      retryDelayMax: 3600,
      expireInSeconds: 300,
      retentionSeconds: 10 * 365 * 24 * 3600,
      deleteAfterSeconds: 24 * 3600,
    };
    await this.boss.createQueue(DISPATCH_QUEUE, dispatch);
    await this.boss.updateQueue(DISPATCH_QUEUE, dispatch);
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
   * job's group is its export: `fetch` skips the exports whose organization, project or user is at its cap.
   * One statement (INSERT_RUN_JOBS_SQL) with the ids as two arrays: the rows pg-boss's `insert` writes, without
   * its JSON recordset (docs/performance.md, "Scheduler").
   */
  async enqueue(db: IDatabase, runs: readonly RunToEnqueue[], parked = false): Promise<void> {
    if (!runs.length) return;
    const { rows } = (await db.executeSql(INSERT_RUN_JOBS_SQL, [
      RUNS_QUEUE,
      runs.map((run) => run.id),
      runs.map((run) => run.batchExportId),
      parked ? PARKED_UNTIL : null,
    ])) as { rows: { jobs: number }[] };
    if (rows[0].jobs !== runs.length) {
      throw new Error(`The job queue took ${rows[0].jobs} of ${runs.length} run jobs`);
    }
  }

  /**
   * Queues the dispatch of scheduled runs (`runIds`, created in `db`'s transaction): one job, in that transaction;
   * a worker creates the runs' jobs (`dispatchNext`).
   */
  async enqueueDispatch(db: IDatabase, runIds: readonly string[]): Promise<void> {
    if (!runIds.length) return;
    const { rows } = (await db.executeSql(INSERT_DISPATCH_JOB_SQL, [DISPATCH_QUEUE, runIds])) as {
      rows: unknown[];
    };
    if (rows.length !== 1) throw new Error(`The job queue has no queue ${DISPATCH_QUEUE}`);
  }

  /** Claims the next dispatch in `db`'s transaction (rolled back: it is back in the queue). */
  async fetchDispatch(db: IDatabase): Promise<Job<DispatchJobData> | null> {
    const [job] = await this.boss.fetch<DispatchJobData>(DISPATCH_QUEUE, { db, batchSize: 1 });
    return job ?? null;
  }

  /** Ends a dispatch, in the transaction that created its runs' jobs. */
  async completeDispatch(db: IDatabase, id: string): Promise<void> {
    await this.boss.complete(DISPATCH_QUEUE, id, null, { db });
  }

  /**
   * The jobs of dispatched runs (as `enqueue`, not parked: a run of an export paused meanwhile is parked when a
   * worker meets it), skipping the runs that have one already. Returns the ids of the runs whose job it created.
   */
  async enqueueDispatched(
    db: IDatabase,
    runs: readonly Omit<RunToEnqueue, 'organizationId'>[],
  ): Promise<string[]> {
    if (!runs.length) return [];
    const { rows } = (await db.executeSql(INSERT_DISPATCHED_RUN_JOBS_SQL, [
      RUNS_QUEUE,
      runs.map((run) => run.id),
      runs.map((run) => run.batchExportId),
      null,
    ])) as { rows: { ids: string[] }[] };
    return rows[0].ids;
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
   * jobs of exports whose organization, project or user has its cap of runs executing (`caps`, 0: no cap). The
   * skip reads committed state, so two concurrent claims may both pass it: `activeWith` under `lockFairness`
   * is the exact check.
   */
  async fetch(db: IDatabase, caps: FairnessCaps): Promise<Job<RunJobData> | null> {
    const ignoreGroups = await this.groupsAtCap(db, caps);
    const [job] = await this.boss.fetch<RunJobData>(RUNS_QUEUE, {
      db,
      batchSize: 1,
      ...(ignoreGroups.length ? { ignoreGroups } : {}),
    });
    return job ?? null;
  }

  /**
   * The job groups to skip: the exports (and, for jobs queued when a job's group was its organization, the
   * organizations) whose organization, project or user has its cap of runs executing. Bounded by the exports of
   * the keys at their cap, which are few (at most one key per running run).
   */
  private async groupsAtCap(db: IDatabase, caps: FairnessCaps): Promise<string[]> {
    if (!caps.organization && !caps.project && !caps.user) return [];
    const { rows } = (await db.executeSql(
      `WITH active AS (${ACTIVE_RUNS_SQL}),
            full_org AS (SELECT organization_id FROM active GROUP BY 1 HAVING $2::int > 0 AND count(*) >= $2::int),
            full_team AS (SELECT team_id FROM active GROUP BY 1 HAVING $3::int > 0 AND count(*) >= $3::int),
            full_user AS (SELECT user_id FROM active WHERE user_id IS NOT NULL GROUP BY 1
                           HAVING $4::int > 0 AND count(*) >= $4::int)
       SELECT e.id::text AS id FROM batch_exports e
        WHERE e.organization_id IN (SELECT organization_id FROM full_org)
           OR e.team_id IN (SELECT team_id FROM full_team)
           OR ${fairnessUserSql('e')} IN (SELECT user_id FROM full_user)
       UNION
       SELECT organization_id::text FROM full_org`,
      [RUNS_QUEUE, caps.organization, caps.project, caps.user],
    )) as { rows: { id: string }[] };
    return rows.map((r) => r.id);
  }

  /**
   * Serializes the claims of runs sharing a key (organization, project, user) until `db`'s transaction ends
   * (transaction locks, always taken in this order, so two claims never wait for each other in a cycle).
   */
  async lockFairness(db: IDatabase, keys: FairnessKeys): Promise<void> {
    await db.executeSql(
      `SELECT pg_advisory_xact_lock(hashtextextended('batch-export-org:' || $1, 0)),
              pg_advisory_xact_lock(hashtextextended('batch-export-project:' || $2, 0)),
              pg_advisory_xact_lock(hashtextextended('batch-export-user:' || coalesce($3, ''), 0))`,
      [keys.organizationId, String(keys.teamId), keys.userId === null ? null : String(keys.userId)],
    );
  }

  /** Runs executing now with each of these keys, as `db` sees them (its own claim included). */
  async activeWith(db: IDatabase, keys: FairnessKeys): Promise<FairnessCounts> {
    const { rows } = (await db.executeSql(
      `SELECT count(*) FILTER (WHERE organization_id = $2)::int AS organization,
              count(*) FILTER (WHERE team_id = $3)::int AS project,
              count(*) FILTER (WHERE user_id = $4::int)::int AS user
         FROM (${ACTIVE_RUNS_SQL}) a`,
      [RUNS_QUEUE, keys.organizationId, keys.teamId, keys.userId],
    )) as { rows: FairnessCounts[] };
    return rows[0];
  }

  /**
   * Gives a job queued before jobs were grouped by export (no group, or its organization) its export's group, so
   * `fetch` can skip it at a cap.
   */
  async assignGroup(jobId: string, batchExportId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${JOB_QUEUE_SCHEMA}.job SET group_id = $3
        WHERE name = $1 AND id = $2 AND group_id IS DISTINCT FROM $3`,
      [RUNS_QUEUE, jobId, batchExportId],
    );
  }

  /**
   * Runs whose job has been ready for longer than `seconds` without a worker slot, none of their export's runs
   * executing (so they do not merely wait for the export's earlier run), oldest first, at most `limit`; with the
   * runs executing now with their keys, to say which cap holds them.
   */
  async waitingLongerThan(
    db: IDatabase,
    seconds: number,
    limit: number,
  ): Promise<(FairnessKeys & FairnessCounts & { runId: string; batchExportId: string; waited: number })[]> {
    const { rows } = (await db.executeSql(
      `WITH active AS (${ACTIVE_RUNS_SQL}),
            waiting AS (
              SELECT DISTINCT ON (j.singleton_key) j.id, j.start_after
                FROM ${JOB_QUEUE_SCHEMA}.job j
               WHERE j.name = $1 AND j.state < 'active' AND j.start_after <= now() - make_interval(secs => $2)
                 AND NOT EXISTS (SELECT 1 FROM ${JOB_QUEUE_SCHEMA}.job a
                                  WHERE a.name = $1 AND a.state = 'active' AND a.singleton_key = j.singleton_key)
               ORDER BY j.singleton_key, j.created_on, j.id)
       SELECT r.id::text AS "runId", r.batch_export_id::text AS "batchExportId", e.organization_id AS "organizationId",
              e.team_id AS "teamId", u.user_id AS "userId",
              floor(extract(epoch FROM now() - w.start_after))::int AS waited,
              (SELECT count(*) FROM active a WHERE a.organization_id = e.organization_id)::int AS organization,
              (SELECT count(*) FROM active a WHERE a.team_id = e.team_id)::int AS project,
              (SELECT count(*) FROM active a WHERE a.user_id = u.user_id)::int AS user
         FROM waiting w
         JOIN batch_export_runs r ON r.id = w.id
         JOIN batch_exports e ON e.id = r.batch_export_id
         CROSS JOIN LATERAL (SELECT ${fairnessUserSql('e')} AS user_id) u
        ORDER BY w.start_after, r.id
        LIMIT $3`,
      [RUNS_QUEUE, seconds, limit],
    )) as {
      rows: (FairnessKeys & FairnessCounts & { runId: string; batchExportId: string; waited: number })[];
    };
    return rows;
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

  /** Queues one notification webhook delivery (its id is the delivery's id, sent in its header and body). */
  async sendNotification(id: string, data: NotificationJobData): Promise<void> {
    await this.boss.send(NOTIFICATIONS_QUEUE, data, { id });
  }

  /** Claims the next notification webhook due (its attempt: the job's retry count). */
  async fetchNotification(): Promise<Job<NotificationJobData> | null> {
    const [job] = await this.boss.fetch<NotificationJobData>(NOTIFICATIONS_QUEUE, { batchSize: 1 });
    return job ?? null;
  }

  /** Ends a notification job: delivered, or dropped for good. */
  async completeNotification(attempt: RunAttempt, output: object): Promise<void> {
    await this.boss.complete(NOTIFICATIONS_QUEUE, attempt, output);
  }

  /** Gives a notification job back for a later attempt after the queue's backoff (failed once its attempts are used). */
  async failNotification(attempt: RunAttempt, output: object): Promise<void> {
    await this.boss.fail(NOTIFICATIONS_QUEUE, attempt, output);
  }

  /** Depth of the queue, read from its table (for the metrics; cheap: one indexed aggregate). */
  async depth(): Promise<QueueDepth> {
    const [row]: {
      ready: number;
      deferred: number;
      active: number;
      undispatched: number;
      oldest: number | null;
    }[] = await this.dataSource.query(
      `SELECT count(*) FILTER (WHERE name = $1 AND state < 'active' AND start_after <= now())::int AS ready,
              count(*) FILTER (WHERE name = $1 AND state < 'active' AND start_after > now())::int AS deferred,
              count(*) FILTER (WHERE name = $1 AND state = 'active')::int AS active,
              coalesce(sum(jsonb_array_length(data->'run_ids')) FILTER (WHERE name = $2), 0)::int AS undispatched,
              extract(epoch FROM now() - min(start_after) FILTER (WHERE state < 'active' AND start_after <= now()))::float8
                AS oldest
         FROM ${JOB_QUEUE_SCHEMA}.job
        WHERE name IN ($1, $2) AND state <= 'active'`,
      [RUNS_QUEUE, DISPATCH_QUEUE],
    );
    return {
      ready: row.ready,
      deferred: row.deferred,
      active: row.active,
      undispatched: row.undispatched,
      oldestReadySeconds: row.oldest ?? 0,
    };
  }
}
