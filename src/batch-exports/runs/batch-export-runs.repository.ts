import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GenerateSql, type SqlFixture } from '../../database/generate-sql.js';
import { transactionExecutor } from '../../database/job-queue.js';
import { RepositoryBase } from '../../database/repository-base.js';
import type { LogLevel } from '../batch-export-log.entity.js';
import type { RunStatus } from '../batch-export-run.entity.js';
import { BatchExportsRepository } from '../batch-exports.repository.js';
import { LOG_SCHEDULED_RUNS_SQL } from '../batch-exports.scheduler-sql.js';
import { fairnessUserSql, RunQueue, type FairnessCaps } from './run-queue.js';
import { runStartedEntry } from './run-activity.js';
import type {
  ClaimedRun,
  ClaimResult,
  ClaimRow,
  DeadRow,
  FinishResult,
  LostRun,
  RunOutcome,
} from './batch-export-runs.types.js';

/** Statuses a run never leaves. */
export const FINAL_STATUSES: readonly RunStatus[] = [
  'Completed',
  'Failed',
  'FailedRetryable',
  'Cancelled',
  'Terminated',
  'TimedOut',
  'ContinuedAsNew',
];

/** PostHog's rule: an export whose last 50 runs hold 10 non-retryable failures is paused. */
export const AUTO_PAUSE_WINDOW = 50;
export const AUTO_PAUSE_FAILURES = 10;

export type {
  ClaimedRun,
  ClaimResult,
  FinishResult,
  LostRun,
  RunOutcome,
} from './batch-export-runs.types.js';

class Paused extends Error {
  constructor(readonly batchExportId: string) {
    super('paused');
  }
}

class OverCap extends Error {
  constructor(
    readonly jobId: string,
    readonly batchExportId: string,
    readonly key: 'organization' | 'project' | 'user',
  ) {
    super(`over the ${key} cap`);
  }
}

const AT = new Date('2026-11-21T10:00:00.000Z');

/** The fixture's running run as a worker holds it (its job's id is the run's id), for the pinned SQL. */
const fixtureClaim = (f: SqlFixture, attemptNumber = 1): ClaimedRun => ({
  attempt: { id: f.runId, retryCount: attemptNumber - 1 },
  attemptNumber,
  run: {
    id: f.runId,
    batchExportId: f.batchExportId,
    backfillId: null,
    dataIntervalStart: new Date('2026-11-21T08:00:00.000Z'),
    dataIntervalEnd: new Date('2026-11-21T09:00:00.000Z'),
    readXidFrom: null,
    readXidTo: null,
    readLateBefore: null,
  },
  batchExport: {
    id: f.batchExportId,
    organizationId: f.organizationId,
    teamId: f.projectId,
    name: 'SQL',
    model: 'persons',
    destinationType: 'NoOp',
    config: {},
    incremental: { mode: 'APPEND', primaryKey: null, versionKey: null },
  },
});

/**
 * The lifecycle of runs as workers drive it: claim (job and run in one transaction), progress checks, and the
 * end of an attempt (run status, log lines and the job's settlement in one transaction, so the run and its job
 * never disagree). Every transaction of this lifecycle lives here.
 */
@Injectable()
export class BatchExportRunsRepository extends RepositoryBase {
  constructor(
    dataSource: DataSource,
    private readonly queue: RunQueue,
    private readonly exports: BatchExportsRepository,
  ) {
    super(dataSource);
  }

  /**
   * Claims the next runnable job and marks its run Running, in one transaction. A job whose run has ended is
   * settled; a job of a paused export goes back to the queue parked (`paused`); a run whose attempts are used
   * up (its workers were lost) is recorded FailedRetryable. With caps (`caps`, 0: none), the jobs of exports
   * whose organization, project or user (`fairnessUserSql`) has that many runs executing are skipped, and the
   * claim counts the active runs of its keys under transaction locks of the keys: concurrent claims on any
   * replica are serialized there, each sees the ones committed before it, and one that would pass a cap is
   * rolled back (`over-cap`).
   */
  @GenerateSql({ params: [AT, 3, { organization: 2, project: 2, user: 2 }] })
  async claimNext(now: Date, maxAttempts: number, caps: FairnessCaps): Promise<ClaimResult> {
    try {
      return await this.retriedTransaction(async () => {
        const db = await transactionExecutor(this.manager);
        const job = await this.queue.fetch(db, caps);
        if (!job) return { kind: 'none' } as const;
        const attempt = { id: job.id, retryCount: job.retryCount };
        await this.lockExport(job.data.batch_export_id);
        const [row] = await this.query<ClaimRow>(
          `SELECT r.id, r.status, r.batch_export_id, r.backfill_id, r.data_interval_start, r.data_interval_end,
                  r.read_xid_from, r.read_xid_to, r.read_late_before, e.organization_id, e.team_id,
                  ${fairnessUserSql('e')} AS fairness_user_id, e.name, e.model, e.destination_type, e.destination_config,
                  e.destination_secrets, e.incremental_mode, e.primary_key, e.version_key, e.paused, e.deleted_at
             FROM batch_export_runs r
             JOIN batch_exports e ON e.id = r.batch_export_id
            WHERE r.id = $1
              FOR UPDATE OF r`,
          [job.id],
        );
        if (!row || FINAL_STATUSES.includes(row.status)) {
          await this.queue.complete(db, attempt, { settled: row?.status ?? 'missing' });
          return { kind: 'settled' } as const;
        }
        if (row.deleted_at) {
          await this.setStatus(row.id, 'Cancelled', now, { finished: true });
          await this.log(row, now, 'INFO', 'Run cancelled: the batch export was deleted.');
          await this.queue.complete(db, attempt, { settled: 'deleted' });
          return { kind: 'settled' } as const;
        }
        // Rolls the fetch back: the job stays queued, and is parked below.
        if (row.paused) throw new Paused(row.batch_export_id);
        if (job.retryCount >= maxAttempts) {
          await this.query(
            `UPDATE batch_export_runs
                SET status = 'FailedRetryable', finished_at = $2, last_updated_at = $2,
                    latest_error = coalesce(latest_error, 'The worker running it stopped reporting.')
              WHERE id = $1`,
            [row.id, now],
          );
          await this.log(
            row,
            now,
            'ERROR',
            `Run failed after ${maxAttempts} attempts: the workers running it stopped reporting.`,
          );
          await this.queue.complete(db, attempt, { status: 'FailedRetryable' });
          return { kind: 'gave-up', runId: row.id, destinationType: row.destination_type } as const;
        }
        if (caps.organization > 0 || caps.project > 0 || caps.user > 0) {
          const keys = {
            organizationId: row.organization_id,
            teamId: row.team_id,
            userId: row.fairness_user_id,
          };
          await this.queue.lockFairness(db, keys);
          const active = await this.queue.activeWith(db, keys);
          for (const key of ['organization', 'project', 'user'] as const) {
            // Rolls the fetch back: the job stays queued as it was.
            if (caps[key] > 0 && active[key] > caps[key]) throw new OverCap(job.id, row.batch_export_id, key);
          }
        }
        await this.setStatus(row.id, 'Running', now);
        await this.query(...runStartedEntry(row, now, job.retryCount + 1));
        await this.log(
          row,
          now,
          'INFO',
          `Run started: ${row.model} from ${row.data_interval_start.toISOString()} to ` +
            `${row.data_interval_end.toISOString()} to ${row.destination_type} (attempt ${job.retryCount + 1} of ${maxAttempts}).`,
        );
        return {
          kind: 'claimed',
          claim: {
            attempt,
            attemptNumber: job.retryCount + 1,
            run: {
              id: row.id,
              batchExportId: row.batch_export_id,
              backfillId: row.backfill_id,
              dataIntervalStart: row.data_interval_start,
              dataIntervalEnd: row.data_interval_end,
              readXidFrom: row.read_xid_from,
              readXidTo: row.read_xid_to,
              readLateBefore: row.read_late_before,
            },
            batchExport: {
              id: row.batch_export_id,
              organizationId: row.organization_id,
              teamId: row.team_id,
              name: row.name,
              model: row.model,
              destinationType: row.destination_type,
              config: { ...row.destination_config, ...row.destination_secrets },
              incremental: {
                mode: row.incremental_mode,
                primaryKey: row.primary_key,
                versionKey: row.version_key,
              },
            },
          },
        } as const;
      });
    } catch (err) {
      if (err instanceof OverCap) {
        await this.queue.assignGroup(err.jobId, err.batchExportId);
        return { kind: 'over-cap', batchExportId: err.batchExportId, key: err.key };
      }
      if (!(err instanceof Paused)) throw err;
      await this.parkIfPaused(err.batchExportId);
      return { kind: 'paused', batchExportId: err.batchExportId };
    }
  }

  /**
   * Carries out the next dispatch of scheduled runs (`RunQueue.enqueueDispatch`, one per transaction of a tick), in
   * one transaction: the runs' jobs (the runs still there: an export deleted for good takes its runs along), their
   * "Run created … (scheduled)." log lines (stamped with the run's creation, the tick's time) and the dispatch's
   * completion. A run that got its job already gets neither again, so a replayed
   * dispatch writes nothing twice. The runs' states are not looked at: a run cancelled before its job exists, or
   * of an export paused or deleted meanwhile, is settled or parked by the claim that meets its job, as when that
   * happens after the job is queued. The runs' exports are locked first (`lockExports`), in id order, as by every
   * other writer of the batch export tables; the scheduler's tick skips them meanwhile (`SKIP LOCKED`). Returns the
   * number of jobs created, or null when no dispatch was waiting. (Its statements are pg-boss's and the run queue's, on the transaction's connection; the log lines' is pinned
   * with `logScheduledRunsCreated`.)
   */
  async dispatchNext(): Promise<number | null> {
    return this.transaction(async () => {
      const db = await transactionExecutor(this.manager);
      const job = await this.queue.fetchDispatch(db);
      if (!job) return null;
      const runs = await this.query<{ id: string; batchExportId: string }>(
        `SELECT id, batch_export_id AS "batchExportId" FROM batch_export_runs
          WHERE id = ANY($1::uuid[]) ORDER BY batch_export_id, data_interval_end`,
        [job.data.run_ids],
      );
      // The exports first, as every writer of these tables locks them (lockExports: on Citus the log lines' writes
      // lock the reference tables whole, which would otherwise deadlock against a claim or an API write).
      await this.exports.lockExports(runs.map((r) => r.batchExportId));
      const queued = await this.queue.enqueueDispatched(db, runs);
      await this.logScheduledRunsCreated(queued);
      await this.queue.completeDispatch(db, job.id);
      return queued.length;
    });
  }

  /**
   * The "Run created" log line of scheduled runs (`runIds`, written by their dispatch), stamped with each run's
   * creation (the tick's time), by export, then interval.
   */
  @GenerateSql({ params: (f) => [[f.runId]] })
  async logScheduledRunsCreated(runIds: readonly string[]): Promise<void> {
    if (!runIds.length) return;
    await this.query(LOG_SCHEDULED_RUNS_SQL, [runIds]);
  }

  /** Parks the export's queued jobs when it is (still) paused: under its row lock, so an unpause cannot interleave. */
  @GenerateSql({ params: (f) => [f.batchExportId] })
  async parkIfPaused(batchExportId: string): Promise<void> {
    await this.transaction(async () => {
      const [row] = await this.query<{ paused: boolean }>(
        'SELECT paused FROM batch_exports WHERE id = $1 FOR SHARE',
        [batchExportId],
      );
      if (row?.paused) await this.queue.park(await transactionExecutor(this.manager), batchExportId);
    });
  }

  /** The run's status now (a worker checks it to notice a cancellation). */
  @GenerateSql({ params: (f) => [f.runId] })
  async statusOf(runId: string): Promise<RunStatus | null> {
    const [row] = await this.query<{ status: RunStatus }>(
      'SELECT status FROM batch_export_runs WHERE id = $1',
      [runId],
    );
    return row?.status ?? null;
  }

  /** A line of the run's log, outside any transaction (progress reported while it runs). */
  /**
   * Of these run id suffixes (the last 16 hex digits of a run id: Redshift staging tables carry them), those of
   * the project's runs that have ended (any status but Starting and Running). At most 1,000 suffixes.
   */
  @GenerateSql({ params: (f) => [f.projectId, ['0123456789abcdef']] })
  async endedRunSuffixes(teamId: number, suffixes: readonly string[]): Promise<ReadonlySet<string>> {
    if (!suffixes.length) return new Set();
    const rows = await this.query<{ suffix: string }>(
      `SELECT right(replace(r.id::text, '-', ''), 16) AS suffix
         FROM batch_exports e
         JOIN batch_export_runs r ON r.batch_export_id = e.id
        WHERE e.team_id = $1 AND r.status NOT IN ('Starting', 'Running')
          AND right(replace(r.id::text, '-', ''), 16) = ANY($2::text[])`,
      [teamId, suffixes.slice(0, 1000)],
    );
    return new Set(rows.map((r) => r.suffix));
  }

  async addRunLog(claim: ClaimedRun, at: Date, level: LogLevel, message: string): Promise<void> {
    await this.exports.addLogs([
      { batchExportId: claim.run.batchExportId, runId: claim.run.id, timestamp: at, level, message },
    ]);
  }

  /**
   * Ends the attempt: the run's status, counts and error, its log lines and the job's settlement in one
   * transaction. A run cancelled meanwhile keeps its status. A non-retryable failure may pause the export
   * (AUTO_PAUSE_FAILURES of its last AUTO_PAUSE_WINDOW runs failed).
   */
  @GenerateSql(
    {
      name: 'completed',
      params: (f) => [fixtureClaim(f), { kind: 'completed', records: 7, bytes: 700 }, AT, 3],
    },
    {
      name: 'failed, to be retried',
      params: (f) => [fixtureClaim(f), { kind: 'failed', message: 'refused', retryable: true }, AT, 3],
    },
    {
      name: 'failed for good',
      params: (f) => [fixtureClaim(f, 3), { kind: 'failed', message: 'refused', retryable: false }, AT, 3],
    },
    {
      name: 'stopped by a shutdown',
      params: (f) => [fixtureClaim(f), { kind: 'stopped', reason: 'shutdown' }, AT, 3],
    },
  )
  async finish(
    claim: ClaimedRun,
    outcome: RunOutcome,
    now: Date,
    maxAttempts: number,
  ): Promise<FinishResult> {
    return this.retriedTransaction(async () => {
      const db = await transactionExecutor(this.manager);
      await this.lockExport(claim.run.batchExportId);
      const [current] = await this.query<{ status: RunStatus }>(
        'SELECT status FROM batch_export_runs WHERE id = $1 FOR UPDATE',
        [claim.run.id],
      );
      const ref = { id: claim.run.id, batch_export_id: claim.run.batchExportId };
      const status = current?.status ?? 'Cancelled';
      if (outcome.kind === 'stopped') {
        if (outcome.reason === 'cancelled') {
          await this.log(ref, now, 'INFO', 'Run stopped: it was cancelled.');
          await this.queue.complete(db, claim.attempt, { status: 'Cancelled' });
        } else if (outcome.reason === 'shutdown') {
          await this.log(
            ref,
            now,
            'WARNING',
            'The worker stopped before the run ended: it will be taken up again.',
          );
          await this.queue.retry(db, claim.attempt, { message: 'worker shutting down' });
        }
        return { status, autoPaused: null };
      }
      if (status !== 'Running') {
        // Cancelled (or otherwise ended) while the attempt ran: the status stays, the job ends.
        await this.queue.complete(db, claim.attempt, { status });
        return { status, autoPaused: null };
      }
      if (outcome.kind === 'completed') {
        await this.query(
          `UPDATE batch_export_runs
              SET status = 'Completed', records_completed = $2, records_failed = 0, bytes_exported = $3, latest_error = NULL,
                  finished_at = $4, last_updated_at = $4
            WHERE id = $1`,
          [claim.run.id, outcome.records, outcome.bytes, now],
        );
        await this.log(
          ref,
          now,
          'INFO',
          `Run completed: ${outcome.records} record${outcome.records === 1 ? '' : 's'}, ${outcome.bytes} bytes exported.`,
        );
        await this.queue.complete(db, claim.attempt, { status: 'Completed', records: outcome.records });
        return { status: 'Completed', autoPaused: null };
      }
      if (outcome.retryable && claim.attemptNumber < maxAttempts) {
        await this.query(
          'UPDATE batch_export_runs SET latest_error = $2, last_updated_at = $3 WHERE id = $1',
          [claim.run.id, outcome.message, now],
        );
        await this.log(
          ref,
          now,
          'WARNING',
          `Attempt ${claim.attemptNumber} of ${maxAttempts} failed: ${outcome.message} It will be retried.`,
        );
        await this.queue.retry(db, claim.attempt, { message: outcome.message });
        return { status: 'Running', autoPaused: null };
      }
      const final: RunStatus = outcome.retryable ? 'FailedRetryable' : 'Failed';
      await this.query(
        `UPDATE batch_export_runs
            SET status = $2, latest_error = $3, finished_at = $4, last_updated_at = $4
          WHERE id = $1`,
        [claim.run.id, final, outcome.message, now],
      );
      await this.log(
        ref,
        now,
        'ERROR',
        outcome.retryable
          ? `Run failed after ${maxAttempts} attempts: ${outcome.message}`
          : `Run failed: ${outcome.message}`,
      );
      await this.queue.complete(db, claim.attempt, { status: final });
      const autoPaused = final === 'Failed' ? await this.autoPause(claim.run.batchExportId, now) : null;
      return { status: final, autoPaused };
    });
  }

  /** Pauses the export when AUTO_PAUSE_FAILURES of its last AUTO_PAUSE_WINDOW runs failed (in the caller's transaction). */
  private async autoPause(batchExportId: string, now: Date): Promise<{ failures: number } | null> {
    const [{ failures }] = await this.query<{ failures: number }>(
      `SELECT count(*) FILTER (WHERE status = 'Failed')::int AS failures
         FROM (SELECT status FROM batch_export_runs WHERE batch_export_id = $1
                ORDER BY created_at DESC, data_interval_end DESC, id DESC LIMIT $2) latest`,
      [batchExportId, AUTO_PAUSE_WINDOW],
    );
    if (failures < AUTO_PAUSE_FAILURES) return null;
    const [exportRow] = await this.query<{ paused: boolean; deleted_at: Date | null }>(
      'SELECT paused, deleted_at FROM batch_exports WHERE id = $1 FOR UPDATE',
      [batchExportId],
    );
    if (!exportRow || exportRow.paused || exportRow.deleted_at) return null;
    await this.exports.update(batchExportId, { paused: true, lastPausedAt: now, lastUpdatedAt: now });
    await this.exports.openPause(batchExportId, now);
    await this.exports.addLogs([
      {
        batchExportId,
        timestamp: now,
        level: 'WARNING',
        message:
          `Batch export paused automatically: ${failures} of its last ${AUTO_PAUSE_WINDOW} runs failed. ` +
          'Fix the destination, then unpause it (and backfill the intervals it missed).',
      },
    ]);
    return { failures };
  }

  /**
   * Settles one dead letter (a run's job pg-boss failed for good: its worker was lost on the last attempt): the
   * run is recorded FailedRetryable unless it had ended, and the failed job is removed so the export's next
   * runs may start. Null when there was none; else the run it recorded failed, if it did.
   */
  async settleDeadLetter(now: Date): Promise<{ failed: LostRun | null } | null> {
    return this.retriedTransaction(async () => {
      const db = await transactionExecutor(this.manager);
      const dead = await this.queue.fetchDead(db);
      if (!dead) return null;
      const sourceId = (dead as { sourceId?: string | null }).sourceId ?? null;
      // The dead letter carries its run's job data (pg-boss copies it).
      if (dead.data?.batch_export_id) await this.lockExport(dead.data.batch_export_id);
      const { rows } = sourceId
        ? await this.modify<DeadRow>(
            `UPDATE batch_export_runs r
                SET status = 'FailedRetryable', finished_at = $2, last_updated_at = $2,
                    latest_error = coalesce(latest_error, 'The worker running it stopped reporting.')
               FROM batch_exports e
              WHERE r.id = $1 AND r.status IN ('Starting', 'Running') AND e.id = r.batch_export_id
              RETURNING r.id, r.batch_export_id, e.destination_type`,
            [sourceId, now],
          )
        : { rows: [] };
      const [lost] = rows;
      const lostMessage = 'Run failed: the worker running its last attempt stopped reporting.';
      if (lost) await this.log(lost, now, 'ERROR', lostMessage);
      await this.queue.settleDead(db, dead.id, sourceId);
      return { failed: lost ? { runId: lost.id, destinationType: lost.destination_type } : null };
    });
  }

  /** Locks the export first, as every writer of the batch export tables does (`BatchExportsRepository#lockExports`). */
  private async lockExport(batchExportId: string): Promise<void> {
    await this.exports.lockExports([batchExportId]);
  }

  private async setStatus(
    runId: string,
    status: RunStatus,
    now: Date,
    { finished = false }: { finished?: boolean } = {},
  ): Promise<void> {
    await this.query(
      `UPDATE batch_export_runs SET status = $2, last_updated_at = $3${finished ? ', finished_at = $3' : ''} WHERE id = $1`,
      [runId, status, now],
    );
  }

  private async log(
    run: { id: string; batch_export_id: string },
    at: Date,
    level: LogLevel,
    message: string,
  ): Promise<void> {
    await this.exports.addLogs([
      { batchExportId: run.batch_export_id, runId: run.id, timestamp: at, level, message },
    ]);
  }
}
