/*
 * Every statement on the batch export tables (exports, pause windows, runs, logs, backfills and the scheduler's,
 * whose SQL is in batch-exports.scheduler-sql.ts) shares the entities' column mappings (EntityColumns) and the
 * transaction of the job queue, and is pinned in one file of test/sql; the rules around them live in the service,
 * schedule.ts and runs/.
 */
import { Injectable } from '@nestjs/common';
import { DataSource, type Repository } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { EntityColumns } from '../database/entity-columns.js';
import { GenerateSql } from '../database/generate-sql.js';
import { transactionExecutor } from '../database/job-queue.js';
import { RepositoryBase } from '../database/repository-base.js';
import { BatchExportLogEntity, type LogLevel } from './batch-export-log.entity.js';
import { BatchExportPauseEntity } from './batch-export-pause.entity.js';
import { BatchExportRunEntity, CANCELLABLE_STATUSES } from './batch-export-run.entity.js';
import { BatchExportEntity } from './batch-export.entity.js';
import { exportHorizon } from '../stores/export-horizon.js';
import { RunQueue, type RunToEnqueue } from './runs/run-queue.js';
import { DueExportsCursor } from './due-exports-cursor.js';
import {
  CREATE_DUE_RUNS_SQL,
  DUE_EXPORTS_PER_STATEMENT,
  type DueExport,
  groupByRuns,
  INSTANT,
  ISO_SQL,
  LOCK_DUE_EXPORTS_SQL,
  RUN_ID_SQL,
} from './batch-exports.scheduler-sql.js';
import { zonedSpec, type ZonedSpec } from './schedule.js';

export interface LogEntry {
  batchExportId: string;
  runId?: string | null;
  timestamp: Date;
  level: LogLevel;
  message: string;
}

/** A jsonb config is free-form; TypeORM's deep-partial type cannot follow `unknown` values. */
type Writable = Parameters<Repository<BatchExportEntity>['update']>[1];

export type BatchExportFields = Omit<
  BatchExportEntity,
  | 'id'
  | 'organization'
  | 'team'
  | 'createdBy'
  | 'scheduledThrough'
  | 'deletedAt'
  | 'failureEmailedAt'
  | 'lastCompletedIntervalEnd'
>;

/** `value` as a literal ILIKE pattern matching it anywhere. */
function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Run order everywhere (runs list, latest_runs): newest first. */
const RUN_ORDER = 'created_at DESC, data_interval_end DESC, id DESC';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';
const EXPORT = '00000000-0000-4000-8000-000000000002';
const AT = new Date('2026-11-21T10:00:00.000Z');

/**
 * Batch exports, their pause windows, runs and logs. The hot reads (the list, latest runs) and the set-based
 * writes (scheduler, backfill, cancellations) are plain SQL, pinned in test/sql; their columns and mappings
 * come from the entities (EntityColumns). Writes join the caller's transaction, whose connection also carries
 * the job queue's statements (`transactionExecutor`), so runs and their jobs commit together.
 */
/**
 * Which exports a caller's list shows (access rules): only those of `teams`, and of each the ones `only_ids`
 * lists (when not null) less `except_ids`, plus those `creatorId` created.
 */
export interface VisibleExports {
  creatorId: number;
  teams: { team: number; only_ids: string[] | null; except_ids: string[] }[];
}

@Injectable()
export class BatchExportsRepository extends RepositoryBase {
  constructor(
    dataSource: DataSource,
    private readonly queue: RunQueue,
  ) {
    super(dataSource);
  }

  private exports() {
    return this.repository(BatchExportEntity);
  }

  private get exportColumns(): EntityColumns<BatchExportEntity> {
    return EntityColumns.of(this.dataSource, BatchExportEntity);
  }

  private get runColumns(): EntityColumns<BatchExportRunEntity> {
    return EntityColumns.of(this.dataSource, BatchExportRunEntity);
  }

  /**
   * A page of the organization's undeleted exports, newest first (then id); optionally only these projects.
   * A hot read: plain SQL (page and count at once) mapped to entities through EntityColumns, without the ORM's
   * hydration.
   */
  @GenerateSql(
    { params: [ORGANIZATION, null, { limit: 100, offset: 0 }] },
    {
      name: 'with access rules',
      params: [
        ORGANIZATION,
        null,
        { limit: 100, offset: 0 },
        { creatorId: 1, teams: [{ team: 1, only_ids: null, except_ids: [ORGANIZATION] }] },
      ],
    },
  )
  async pageForOrganization(
    organizationId: string,
    onlyTeams: readonly number[] | null,
    { limit, offset }: PageParams,
    visible: VisibleExports | null = null,
  ): Promise<Page<BatchExportEntity>> {
    // Access rules: exports of the listed projects only, those the rules leave and the caller's own.
    const filter = `organization_id = $1 AND deleted_at IS NULL AND ($2::int[] IS NULL OR team_id = ANY($2::int[]))
      AND ($3::jsonb IS NULL OR EXISTS (
            SELECT 1 FROM jsonb_to_recordset($3::jsonb) AS v(team integer, only_ids uuid[], except_ids uuid[])
             WHERE v.team = batch_exports.team_id
               AND (batch_exports.created_by_id = $4
                    OR ((v.only_ids IS NULL OR batch_exports.id = ANY(v.only_ids))
                        AND batch_exports.id <> ALL(v.except_ids)))))`;
    const columns = this.exportColumns;
    const params = [
      organizationId,
      onlyTeams,
      visible && JSON.stringify(visible.teams),
      visible?.creatorId ?? null,
    ];
    const [rows, [{ total }]] = await Promise.all([
      this.query<Record<string, unknown>>(
        `SELECT ${columns.select('batch_exports')} FROM batch_exports WHERE ${filter}
          ORDER BY created_at DESC, id ASC LIMIT $5 OFFSET $6`,
        [...params, limit, offset],
      ),
      this.query<{ total: number }>(
        `SELECT count(*)::int AS total FROM batch_exports WHERE ${filter}`,
        params,
      ),
    ]);
    return { items: rows.map((row) => columns.hydrate(row)), total };
  }

  /**
   * The undeleted export when it belongs to the organization. `lock` takes a row lock held until the caller's
   * transaction ends; `withSecrets` also loads the secret part of the config (only for merging a PATCH; never
   * mapped out).
   */
  async findInOrganization(
    organizationId: string,
    id: string,
    { lock = false, withSecrets = false }: { lock?: boolean; withSecrets?: boolean } = {},
  ): Promise<BatchExportEntity | null> {
    const qb = this.exports()
      .createQueryBuilder('e')
      .where('e.id = :id AND e.organization_id = :organizationId AND e.deleted_at IS NULL', {
        id,
        organizationId,
      });
    if (withSecrets) qb.addSelect('e.destinationSecrets');
    if (lock) qb.setLock('pessimistic_write');
    return qb.getOne();
  }

  /** The 10 (`perExport`) newest runs of each export, newest first, by export id. */
  @GenerateSql({ params: [[EXPORT]] })
  async latestRuns(
    exportIds: readonly string[],
    perExport = 10,
  ): Promise<Map<string, BatchExportRunEntity[]>> {
    const byExport = new Map<string, BatchExportRunEntity[]>(exportIds.map((id) => [id, []]));
    if (!exportIds.length) return byExport;
    const columns = this.runColumns;
    const rows = await this.query<Record<string, unknown>>(
      `SELECT ${columns.select('r')}
         FROM unnest($1::uuid[]) AS x(id)
         CROSS JOIN LATERAL (
           SELECT * FROM batch_export_runs
            WHERE batch_export_id = x.id
            ORDER BY ${RUN_ORDER}
            LIMIT $2
         ) r`,
      [exportIds, perExport],
    );
    for (const row of rows) {
      const run = columns.hydrate(row);
      byExport.get(run.batchExportId)?.push(run);
    }
    return byExport;
  }

  async insert(fields: BatchExportFields & { destinationSecrets: Record<string, unknown> }): Promise<string> {
    const result = await this.exports().insert(fields as Writable);
    return (result.identifiers[0] as { id: string }).id;
  }

  async update(id: string, fields: Partial<BatchExportFields>): Promise<void> {
    await this.exports().update({ id }, fields as Writable);
  }

  /**
   * Opens a pause window at `at`, and holds the export's queued run jobs (a run in progress finishes). Runs in
   * the caller's transaction.
   */
  async openPause(batchExportId: string, at: Date): Promise<void> {
    await this.repository(BatchExportPauseEntity).insert({ batchExportId, pausedAt: at, unpausedAt: null });
    await this.queue.park(await transactionExecutor(this.manager), batchExportId);
  }

  /**
   * Closes the open pause window at `at` (the export's queued run jobs may start again), and forgets the windows the scheduler's watermark has passed (no
   * interval they hold can be considered again).
   */
  @GenerateSql({ params: [EXPORT, AT] })
  async closePause(batchExportId: string, at: Date): Promise<void> {
    await this.queue.release(await transactionExecutor(this.manager), batchExportId);
    await this.query(
      `UPDATE batch_export_pauses SET unpaused_at = $2 WHERE batch_export_id = $1 AND unpaused_at IS NULL`,
      [batchExportId, at],
    );
    await this.query(
      `DELETE FROM batch_export_pauses p
        USING batch_exports e
        WHERE e.id = $1 AND p.batch_export_id = e.id AND p.unpaused_at <= e.scheduled_through`,
      [batchExportId],
    );
  }

  /**
   * Soft-deletes the export and cancels its Starting and Running runs (each logged) and their jobs, a thousand
   * at a time. A run in progress notices its cancellation and stops.
   */
  @GenerateSql({ params: [EXPORT, AT] })
  async softDelete(id: string, at: Date): Promise<void> {
    await this.exports().update({ id }, { deletedAt: at, lastUpdatedAt: at });
    const db = await transactionExecutor(this.manager);
    for (;;) {
      const cancelled = await this.query<{ id: string }>(
        `WITH cancelled AS (
           UPDATE batch_export_runs
              SET status = 'Cancelled', finished_at = $2, last_updated_at = $2
            WHERE id IN (SELECT id FROM batch_export_runs
                          WHERE batch_export_id = $1 AND status = ANY($3::text[]) LIMIT 1000)
            RETURNING id
         ),
         logged AS (
           INSERT INTO batch_export_logs (batch_export_id, run_id, timestamp, level, message)
           SELECT $1, id, $2, 'INFO', 'Run cancelled: the batch export was deleted.' FROM cancelled
         )
         SELECT id FROM cancelled`,
        [id, at, CANCELLABLE_STATUSES],
      );
      await this.queue.cancel(
        db,
        cancelled.map((r) => r.id),
      );
      if (cancelled.length < 1000) return;
    }
  }

  /**
   * Soft-deletes every export of a (deleted) project that is not yet, cancelling their Starting and Running runs
   * (as `softDelete`, each): none is scheduled or run again. In the caller's transaction.
   */
  @GenerateSql({ params: (f) => [f.projectId, AT] })
  async softDeleteOfProject(teamId: number, at: Date): Promise<void> {
    const live = await this.query<{ id: string }>(
      'SELECT id FROM batch_exports WHERE team_id = $1 AND deleted_at IS NULL ORDER BY id FOR UPDATE',
      [teamId],
    );
    for (const { id } of live) await this.softDelete(id, at);
  }

  /**
   * Deletes at most `limit` exports of a (deleted) project for good, soft-deleted or not, with their runs,
   * backfills, pauses and logs (ON DELETE CASCADE); one still live first has its runs cancelled, as
   * `softDelete` does. How many exports.
   */
  @GenerateSql({ params: (f) => [f.projectId, 100, AT] })
  deleteOfProject(teamId: number, limit: number, at: Date): Promise<number> {
    return this.transaction(async () => {
      const rows = await this.query<{ id: string; live: boolean }>(
        `SELECT id, deleted_at IS NULL AS live FROM batch_exports WHERE team_id = $1
          ORDER BY id LIMIT $2 FOR UPDATE`,
        [teamId, limit],
      );
      for (const row of rows) if (row.live) await this.softDelete(row.id, at);
      if (!rows.length) return 0;
      await this.query('DELETE FROM batch_exports WHERE id = ANY($1::uuid[])', [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  /** Lines of the exports' logs, the exports locked first (`lockExports`), in the order of every other writer. */
  async addLogs(entries: readonly LogEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.transaction(async () => {
      await this.lockExports(entries.map((e) => e.batchExportId));
      await this.repository(BatchExportLogEntity).insert(entries.map((e) => ({ runId: null, ...e })));
    });
  }

  /**
   * Locks these exports (in id order): what every writer of the batch export tables takes first in its
   * transaction, before their runs, backfills, pauses and logs (the API `FOR UPDATE`, the scheduler
   * `LOCK_DUE_EXPORTS_SQL`, the workers here). On Citus these reference tables' row locks and writes lock whole
   * tables, the referenced ones after: without one first lock, two writers deadlocked (docs/citus.md, "What was
   * fixed"). `FOR NO KEY UPDATE`: on PostgreSQL the foreign key checks of inserted runs and logs pass it.
   */
  @GenerateSql({ params: (f) => [[f.batchExportId]] })
  async lockExports(ids: readonly string[]): Promise<void> {
    await this.query('SELECT 1 FROM batch_exports WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE', [
      [...new Set(ids)],
    ]);
  }

  /** A page of the export's log, newest first (then the later-inserted first); optional level and text filters. */
  async pageLogs(
    batchExportId: string,
    filters: { levels: string[] | null; search: string | null },
    { limit, offset }: PageParams,
  ): Promise<Page<BatchExportLogEntity>> {
    const qb = this.repository(BatchExportLogEntity)
      .createQueryBuilder('l')
      .where('l.batch_export_id = :batchExportId', { batchExportId });
    if (filters.levels) qb.andWhere('l.level IN (:...levels)', { levels: filters.levels });
    if (filters.search) qb.andWhere('l.message ILIKE :pattern', { pattern: containsPattern(filters.search) });
    const [items, total] = await qb
      .orderBy('l.timestamp', 'DESC')
      .addOrderBy('l.id', 'DESC')
      .take(limit)
      .skip(offset)
      .getManyAndCount();
    return { items, total };
  }

  /** A page of the export's runs, newest first. */
  @GenerateSql({ params: [EXPORT, { limit: 100, offset: 0 }] })
  async pageRuns(batchExportId: string, { limit, offset }: PageParams): Promise<Page<BatchExportRunEntity>> {
    const columns = this.runColumns;
    const [rows, [{ total }]] = await Promise.all([
      this.query<Record<string, unknown>>(
        `SELECT ${columns.select('batch_export_runs')} FROM batch_export_runs
          WHERE batch_export_id = $1 ORDER BY ${RUN_ORDER} LIMIT $2 OFFSET $3`,
        [batchExportId, limit, offset],
      ),
      this.query<{ total: number }>(
        'SELECT count(*)::int AS total FROM batch_export_runs WHERE batch_export_id = $1',
        [batchExportId],
      ),
    ]);
    return { items: rows.map((row) => columns.hydrate(row)), total };
  }

  /**
   * Cancels the run when it is Starting or Running (under a row lock) and logs it. Returns the run after the
   * change, the unchanged run when its status does not allow it, or null when it is not a run of the export.
   * Runs in the caller's transaction.
   */
  async cancelRun(
    batchExportId: string,
    runId: string,
    at: Date,
  ): Promise<{ run: BatchExportRunEntity; cancelled: boolean } | null> {
    const runs = this.repository(BatchExportRunEntity);
    const run = await runs.findOne({
      where: { id: runId, batchExportId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!run) return null;
    if (!CANCELLABLE_STATUSES.includes(run.status)) return { run, cancelled: false };
    await runs.update({ id: runId }, { status: 'Cancelled', finishedAt: at, lastUpdatedAt: at });
    await this.queue.cancel(await transactionExecutor(this.manager), [runId]);
    await this.addLogs([
      { batchExportId, runId, timestamp: at, level: 'INFO', message: `Run cancelled (was ${run.status}).` },
    ]);
    return { run: (await runs.findOneBy({ id: runId }))!, cancelled: true };
  }

  /**
   * Records a backfill and creates its runs — one per interval end `anchor + k × step` for k in
   * `[firstK, firstK + count)` — each logged, in one statement, and sends their jobs (inside the caller's
   * transaction).
   */
  @GenerateSql({
    params: (f) => [
      {
        batchExportId: f.batchExportId,
        startAt: AT,
        endAt: new Date(AT.getTime() + 2 * 3600_000),
        spec: zonedSpec('hour'),
        firstK: AT.getTime() / 3600_000 + 1,
        count: 2,
        paused: false,
      },
      AT,
    ],
  })
  async insertBackfill(
    input: {
      batchExportId: string;
      startAt: Date;
      endAt: Date;
      spec: ZonedSpec;
      firstK: number;
      count: number;
      /** The export is paused: its runs' jobs wait for the unpause. */
      paused: boolean;
    },
    at: Date,
  ): Promise<string> {
    const rows = await this.query<{ id: string; runs: RunToEnqueue[] }>(
      `WITH backfill AS (
         INSERT INTO batch_export_backfills (batch_export_id, start_at, end_at, run_count, created_at, adjusted_start_at)
         VALUES ($1, $2, $3, $6, $8, ${INSTANT('$4::bigint + ($7::bigint - 1) * $5::bigint', '$9::text')})
         RETURNING id
       ),
       runs AS (
         INSERT INTO batch_export_runs
                (id, batch_export_id, backfill_id, status, data_interval_start, data_interval_end, created_at,
                 last_updated_at)
         SELECT ${RUN_ID_SQL('s')}, $1, b.id, 'Starting', s, e, $8, $8
           FROM backfill b, generate_series($7::bigint, $7::bigint + $6::bigint - 1) AS k,
                LATERAL (SELECT ${INSTANT('$4::bigint + (k - 1) * $5::bigint', '$9::text')} AS s,
                                ${INSTANT('$4::bigint + k * $5::bigint', '$9::text')} AS e) AS bounds
          ORDER BY k
         RETURNING id, data_interval_start, data_interval_end
       ),
       logged AS (
         INSERT INTO batch_export_logs (batch_export_id, run_id, timestamp, level, message)
         SELECT $1, r.id, $8, 'INFO',
                'Run created for ' || ${ISO_SQL('r.data_interval_start')} || ' to ' ||
                ${ISO_SQL('r.data_interval_end')} || ' (backfill).'
           FROM runs r
          ORDER BY r.data_interval_end
       )
       SELECT b.id,
              (SELECT coalesce(json_agg(json_build_object('id', r.id, 'batchExportId', $1::uuid,
                                                           'organizationId', e.organization_id)), '[]')
                 FROM runs r, batch_exports e WHERE e.id = $1)
                AS runs
         FROM backfill b`,
      [
        input.batchExportId,
        input.startAt,
        input.endAt,
        input.spec.anchor,
        input.spec.step,
        input.count,
        input.firstK,
        at,
        input.spec.timezone,
      ],
    );
    await this.queue.enqueue(await transactionExecutor(this.manager), rows[0].runs, input.paused);
    return rows[0].id;
  }

  /**
   * Creates the due runs of every export (see CREATE_DUE_RUNS_SQL) and queues their dispatch: each transaction
   * locks up to DUE_EXPORTS_PER_STATEMENT exports and creates their runs in statements of up to
   * DUE_RUNS_PER_STATEMENT runs (one in the usual case), each followed by one dispatch job (a worker then creates
   * the runs' jobs and "Run created" log lines: `dispatchNext`); up to `connections` transactions at once, their
   * locks one after the other in key order (DueExportsCursor). JIT is off: the planner cannot know how many
   * intervals `generate_series` yields per export (it assumes 1,000), so at 100,000 due exports it costs the
   * statement far above `jit_above_cost`, and JIT spent 0.6 s compiling it (PostgreSQL 15). `SET LOCAL` ends with
   * the transaction.
   */
  @GenerateSql({ params: [AT, 100] })
  createDueRuns(
    now: Date,
    maxCatchup: number,
    connections = 1,
  ): Promise<{ created: number; exports: number }> {
    const cursor = new DueExportsCursor(DUE_EXPORTS_PER_STATEMENT);
    return cursor.drain(connections, () =>
      this.transaction(async () => {
        const horizon = await exportHorizon((sql, parameters) => this.query(sql, parameters));
        await this.query('SET LOCAL jit = off');
        const due = await cursor.next((after) =>
          this.query<DueExport>(LOCK_DUE_EXPORTS_SQL, [now, DUE_EXPORTS_PER_STATEMENT, after]),
        );
        const created = { created: 0, exports: 0 };
        if (due === null) return created; // another connection locked the last exports meanwhile
        // No export due: the statement still runs (on nothing), as the pinned statements and tests expect.
        for (const group of due.length ? groupByRuns(due, maxCatchup) : [[]]) {
          const [row] = await this.query<{ exports: number; runs: string[] }>(CREATE_DUE_RUNS_SQL, [
            now,
            maxCatchup,
            JSON.stringify(group),
            horizon,
          ]);
          // One job for the statement's runs: a worker creates their jobs and log lines (dispatchNext).
          await this.queue.enqueueDispatch(await transactionExecutor(this.manager), row.runs);
          created.created += row.runs.length;
          created.exports += row.exports;
        }
        return created;
      }),
    );
  }
}
