import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type Repository } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { BatchExportLogEntity, type LogLevel } from './batch-export-log.entity.js';
import { BatchExportPauseEntity } from './batch-export-pause.entity.js';
import { BatchExportRunEntity, CANCELLABLE_STATUSES } from './batch-export-run.entity.js';
import { BatchExportEntity } from './batch-export.entity.js';
import { INTERVAL_SPECS, type IntervalSpec } from './schedule.js';

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
  'id' | 'organization' | 'team' | 'scheduledThrough' | 'deletedAt'
>;

/** The intervals as the scheduler's SQL reads them (`jsonb_to_recordset`). */
const INTERVALS_JSON = JSON.stringify(
  Object.entries(INTERVAL_SPECS).map(([name, spec]) => ({ name, ...spec })),
);

/** `to_char` pattern of the timestamps in log messages (ISO 8601 UTC with milliseconds). */
const ISO_SQL = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/*
 * Interval-end indexes are computed in double precision (`date_part`), as `schedule.ts` does in TypeScript:
 * exact for the whole-second boundaries, and several times cheaper per row than `extract`'s numeric.
 */
/** Index of the first interval end to consider: at or after max(created_at, start_at), after the watermark. */
const FIRST_K = `greatest(
      ceil((date_part('epoch', greatest(e.created_at, e.start_at)) - iv.anchor) / iv.step),
      floor((date_part('epoch', e.scheduled_through) - iv.anchor) / iv.step) + 1
    )::bigint`;
/** Index of the last interval end to consider: at or before min(end_at, now). */
const LAST_K = `floor((date_part('epoch', least($1::timestamptz, e.end_at)) - iv.anchor) / iv.step)::bigint`;

/**
 * The scheduler's one statement (decisions §8). For every unpaused, undeleted export with at least one due
 * interval it:
 *
 * 1. `due_exports` — locks the export row (`FOR UPDATE SKIP LOCKED`: replicas ticking at once share the exports
 *    instead of waiting, so the lock order does not matter and no sort is needed; a PATCH or DELETE in progress
 *    keeps its export until the next tick) and computes the
 *    range of interval-end indexes k (ends are `anchor + k × step` epoch seconds): from the first end at or
 *    after max(start_at, created_at) and after the watermark `scheduled_through`, to the last end at or before
 *    min(end_at, now);
 * 2. `kept` — generates those ends and drops the ones inside a pause window `[paused_at, unpaused_at)`;
 * 3. `inserted` — inserts the first SCHEDULER_MAX_CATCHUP of them per export as `Starting` runs, `ON CONFLICT
 *    DO NOTHING` on the unique key (export, data_interval_start, data_interval_end) of scheduled runs: exactly
 *    once even when the watermark is behind (a retried or concurrent tick);
 * 4. `advanced` — moves the watermark to the last run created when the cap was hit, else to the last end
 *    considered (skipped ones included);
 * 5. logs one entry per run actually created.
 *
 * One statement whatever the number of exports; it commits or fails as a whole (createDueRuns runs it with JIT
 * off). `schedule.ts#dueRuns` is the same rule in TypeScript (an e2e test checks they agree).
 */
const CREATE_DUE_RUNS_SQL = `
WITH iv AS (
  SELECT * FROM jsonb_to_recordset($3::jsonb) AS iv(name text, step bigint, anchor bigint)
),
due_exports AS MATERIALIZED (
  -- The bounds are computed from e's columns in the target list and WHERE (not in a subquery), so when a row
  -- was changed by a tick that committed meanwhile, PostgreSQL's re-check of the locked row sees the new
  -- watermark and leaves it out.
  SELECT e.id, iv.step, iv.anchor, ${FIRST_K} AS first_k, ${LAST_K} AS last_k
    FROM batch_exports e
    JOIN iv ON iv.name = e.interval
   WHERE e.deleted_at IS NULL
     AND NOT e.paused
     AND ${FIRST_K} <= ${LAST_K}
     FOR UPDATE OF e SKIP LOCKED
),
kept AS MATERIALIZED (
  SELECT c.batch_export_id, c.k, c.data_interval_start, c.data_interval_end,
         row_number() OVER (PARTITION BY c.batch_export_id ORDER BY c.k) AS n
    FROM (
      SELECT d.id AS batch_export_id, g.k,
             to_timestamp(d.anchor + (g.k - 1) * d.step) AS data_interval_start,
             to_timestamp(d.anchor + g.k * d.step) AS data_interval_end
        FROM due_exports d
        CROSS JOIN LATERAL generate_series(d.first_k, d.last_k) AS g(k)
    ) c
   WHERE NOT EXISTS (
     SELECT 1 FROM batch_export_pauses p
      WHERE p.batch_export_id = c.batch_export_id
        AND c.data_interval_end >= p.paused_at
        AND (p.unpaused_at IS NULL OR c.data_interval_end < p.unpaused_at)
   )
),
inserted AS (
  INSERT INTO batch_export_runs
         (batch_export_id, status, data_interval_start, data_interval_end, created_at, last_updated_at)
  SELECT batch_export_id, 'Starting', data_interval_start, data_interval_end, $1, $1
    FROM kept
   WHERE n <= $2
   ORDER BY batch_export_id, k
  ON CONFLICT (batch_export_id, data_interval_start, data_interval_end) WHERE backfill_id IS NULL DO NOTHING
  RETURNING id, batch_export_id, data_interval_start, data_interval_end
),
capped AS (
  SELECT batch_export_id, max(data_interval_end) FILTER (WHERE n <= $2) AS last_due, count(*) AS kept_count
    FROM kept
   GROUP BY batch_export_id
),
advanced AS (
  UPDATE batch_exports e
     SET scheduled_through = CASE
           WHEN c.kept_count > $2 THEN c.last_due
           ELSE to_timestamp(d.anchor + d.last_k * d.step)
         END
    FROM due_exports d
    LEFT JOIN capped c ON c.batch_export_id = d.id
   WHERE e.id = d.id
  RETURNING e.id
),
logged AS (
  INSERT INTO batch_export_logs (batch_export_id, run_id, timestamp, level, message)
  SELECT i.batch_export_id, i.id, $1, 'INFO',
         'Run created for ' || ${ISO_SQL('i.data_interval_start')} || ' to ' || ${ISO_SQL('i.data_interval_end')} ||
         ' (scheduled).'
    FROM inserted i
   ORDER BY i.batch_export_id, i.data_interval_end
)
SELECT (SELECT count(*) FROM inserted)::int AS created, (SELECT count(*) FROM advanced)::int AS exports`;

/** A `batch_export_runs` row as plain SQL returns it. */
interface RunRow {
  id: string;
  batch_export_id: string;
  backfill_id: string | null;
  status: BatchExportRunEntity['status'];
  records_completed: number | null;
  records_total_count: number | null;
  latest_error: string | null;
  cursor: string | null;
  data_interval_start: Date;
  data_interval_end: Date;
  created_at: Date;
  finished_at: Date | null;
  last_updated_at: Date;
}

/** Columns of a run row (raw SQL) → entity; assigned one by one (pages map a thousand of them). */
function runFromRow(row: RunRow): BatchExportRunEntity {
  const run = new BatchExportRunEntity();
  run.id = row.id;
  run.batchExportId = row.batch_export_id;
  run.backfillId = row.backfill_id;
  run.status = row.status;
  run.recordsCompleted = row.records_completed;
  run.recordsTotalCount = row.records_total_count;
  run.latestError = row.latest_error;
  run.cursor = row.cursor;
  run.dataIntervalStart = row.data_interval_start;
  run.dataIntervalEnd = row.data_interval_end;
  run.createdAt = row.created_at;
  run.finishedAt = row.finished_at;
  run.lastUpdatedAt = row.last_updated_at;
  return run;
}

/** The columns of an export row that `exportFromRow` maps (never the secrets). */
const EXPORT_COLUMNS = `id, organization_id, team_id, name, model, destination_type, destination_config, interval, paused,
         last_paused_at, start_at, end_at, hogql_query, scheduled_through, created_at, last_updated_at, deleted_at`;

/** Columns of an export row (raw SQL, EXPORT_COLUMNS) → entity. */
function exportFromRow(row: Record<string, unknown>): BatchExportEntity {
  return Object.assign(new BatchExportEntity(), {
    id: row.id,
    organizationId: row.organization_id,
    teamId: row.team_id,
    name: row.name,
    model: row.model,
    destinationType: row.destination_type,
    destinationConfig: row.destination_config,
    interval: row.interval,
    paused: row.paused,
    lastPausedAt: row.last_paused_at,
    startAt: row.start_at,
    endAt: row.end_at,
    hogqlQuery: row.hogql_query,
    scheduledThrough: row.scheduled_through,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    deletedAt: row.deleted_at,
  });
}

/** `value` as a literal ILIKE pattern matching it anywhere. */
function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Run order everywhere (runs list, latest_runs): newest first. */
const RUN_ORDER = 'created_at DESC, data_interval_end DESC, id DESC';

@Injectable()
export class BatchExportsRepository {
  constructor(private readonly dataSource: DataSource) {}

  private exports(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(BatchExportEntity);
  }

  /**
   * A page of the organization's undeleted exports, newest first (then id); optionally only these projects.
   * A hot read: plain SQL (page and count at once) mapped to entities by `exportFromRow`, without the ORM's
   * hydration.
   */
  async pageForOrganization(
    organizationId: string,
    onlyTeams: readonly number[] | null,
    { limit, offset }: PageParams,
  ): Promise<Page<BatchExportEntity>> {
    const filter = `organization_id = $1 AND deleted_at IS NULL AND ($2::int[] IS NULL OR team_id = ANY($2::int[]))`;
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query<Record<string, unknown>[]>(
        `SELECT ${EXPORT_COLUMNS} FROM batch_exports WHERE ${filter}
          ORDER BY created_at DESC, id ASC LIMIT $3 OFFSET $4`,
        [organizationId, onlyTeams, limit, offset],
      ),
      this.dataSource.query<{ total: number }[]>(
        `SELECT count(*)::int AS total FROM batch_exports WHERE ${filter}`,
        [organizationId, onlyTeams],
      ),
    ]);
    return { items: rows.map(exportFromRow), total };
  }

  /**
   * The undeleted export when it belongs to the organization. `lock` takes a row lock (inside a transaction);
   * `withSecrets` also loads the secret part of the config (only for merging a PATCH; never mapped out).
   */
  async findInOrganization(
    organizationId: string,
    id: string,
    {
      manager,
      lock = false,
      withSecrets = false,
    }: { manager?: EntityManager; lock?: boolean; withSecrets?: boolean } = {},
  ): Promise<BatchExportEntity | null> {
    const qb = this.exports(manager)
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
  async latestRuns(
    exportIds: readonly string[],
    perExport = 10,
  ): Promise<Map<string, BatchExportRunEntity[]>> {
    const byExport = new Map<string, BatchExportRunEntity[]>(exportIds.map((id) => [id, []]));
    if (!exportIds.length) return byExport;
    const rows: RunRow[] = await this.dataSource.query(
      `SELECT r.*
         FROM unnest($1::uuid[]) AS x(id)
         CROSS JOIN LATERAL (
           SELECT * FROM batch_export_runs
            WHERE batch_export_id = x.id
            ORDER BY ${RUN_ORDER}
            LIMIT $2
         ) r`,
      [exportIds, perExport],
    );
    for (const row of rows) byExport.get(row.batch_export_id)?.push(runFromRow(row));
    return byExport;
  }

  async insert(
    fields: BatchExportFields & { destinationSecrets: Record<string, unknown> },
    manager: EntityManager,
  ): Promise<string> {
    const result = await this.exports(manager).insert(fields as Writable);
    return (result.identifiers[0] as { id: string }).id;
  }

  async update(id: string, fields: Partial<BatchExportFields>, manager: EntityManager): Promise<void> {
    await this.exports(manager).update({ id }, fields as Writable);
  }

  /** Opens a pause window at `at`. */
  async openPause(batchExportId: string, at: Date, manager: EntityManager): Promise<void> {
    await manager
      .getRepository(BatchExportPauseEntity)
      .insert({ batchExportId, pausedAt: at, unpausedAt: null });
  }

  /**
   * Closes the open pause window at `at`, and forgets the windows the scheduler's watermark has passed (no
   * interval they hold can be considered again).
   */
  async closePause(batchExportId: string, at: Date, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE batch_export_pauses SET unpaused_at = $2 WHERE batch_export_id = $1 AND unpaused_at IS NULL`,
      [batchExportId, at],
    );
    await manager.query(
      `DELETE FROM batch_export_pauses p
        USING batch_exports e
        WHERE e.id = $1 AND p.batch_export_id = e.id AND p.unpaused_at <= e.scheduled_through`,
      [batchExportId],
    );
  }

  /** Soft-deletes the export and cancels its Starting and Running runs (each logged). */
  async softDelete(id: string, at: Date, manager: EntityManager): Promise<void> {
    await this.exports(manager).update({ id }, { deletedAt: at, lastUpdatedAt: at });
    await manager.query(
      `WITH cancelled AS (
         UPDATE batch_export_runs
            SET status = 'Cancelled', finished_at = $2, last_updated_at = $2
          WHERE batch_export_id = $1 AND status = ANY($3::text[])
          RETURNING id
       )
       INSERT INTO batch_export_logs (batch_export_id, run_id, timestamp, level, message)
       SELECT $1, id, $2, 'INFO', 'Run cancelled: the batch export was deleted.' FROM cancelled`,
      [id, at, CANCELLABLE_STATUSES],
    );
  }

  async addLogs(
    entries: readonly LogEntry[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    if (!entries.length) return;
    await manager.getRepository(BatchExportLogEntity).insert(entries.map((e) => ({ runId: null, ...e })));
  }

  /** A page of the export's log, newest first (then the later-inserted first); optional level and text filters. */
  async pageLogs(
    batchExportId: string,
    filters: { levels: string[] | null; search: string | null },
    { limit, offset }: PageParams,
  ): Promise<Page<BatchExportLogEntity>> {
    const qb = this.dataSource
      .getRepository(BatchExportLogEntity)
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
  async pageRuns(batchExportId: string, { limit, offset }: PageParams): Promise<Page<BatchExportRunEntity>> {
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query(
        `SELECT * FROM batch_export_runs WHERE batch_export_id = $1 ORDER BY ${RUN_ORDER} LIMIT $2 OFFSET $3`,
        [batchExportId, limit, offset],
      ) as Promise<RunRow[]>,
      this.dataSource.query(
        'SELECT count(*)::int AS total FROM batch_export_runs WHERE batch_export_id = $1',
        [batchExportId],
      ) as Promise<{ total: number }[]>,
    ]);
    return { items: rows.map(runFromRow), total };
  }

  /**
   * Cancels the run when it is Starting or Running (under a row lock) and logs it. Returns the run after the
   * change, the unchanged run when its status does not allow it, or null when it is not a run of the export.
   */
  async cancelRun(
    batchExportId: string,
    runId: string,
    at: Date,
    manager: EntityManager,
  ): Promise<{ run: BatchExportRunEntity; cancelled: boolean } | null> {
    const runs = manager.getRepository(BatchExportRunEntity);
    const run = await runs.findOne({
      where: { id: runId, batchExportId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!run) return null;
    if (!CANCELLABLE_STATUSES.includes(run.status)) return { run, cancelled: false };
    await runs.update({ id: runId }, { status: 'Cancelled', finishedAt: at, lastUpdatedAt: at });
    await this.addLogs(
      [{ batchExportId, runId, timestamp: at, level: 'INFO', message: `Run cancelled (was ${run.status}).` }],
      manager,
    );
    return { run: (await runs.findOneBy({ id: runId }))!, cancelled: true };
  }

  /**
   * Records a backfill and creates its runs — one per interval end `anchor + k × step` for k in
   * `[firstK, firstK + count)` — each logged, in one statement (inside the caller's transaction).
   */
  async insertBackfill(
    input: {
      batchExportId: string;
      startAt: Date;
      endAt: Date;
      spec: IntervalSpec;
      firstK: number;
      count: number;
    },
    at: Date,
    manager: EntityManager,
  ): Promise<string> {
    const rows: { id: string }[] = await manager.query(
      `WITH backfill AS (
         INSERT INTO batch_export_backfills (batch_export_id, start_at, end_at, run_count, created_at)
         VALUES ($1, $2, $3, $6, $8)
         RETURNING id
       ),
       runs AS (
         INSERT INTO batch_export_runs
                (batch_export_id, backfill_id, status, data_interval_start, data_interval_end, created_at,
                 last_updated_at)
         SELECT $1, b.id, 'Starting', to_timestamp($4::bigint + (k - 1) * $5::bigint),
                to_timestamp($4::bigint + k * $5::bigint), $8, $8
           FROM backfill b, generate_series($7::bigint, $7::bigint + $6::bigint - 1) AS k
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
       SELECT id FROM backfill`,
      [
        input.batchExportId,
        input.startAt,
        input.endAt,
        input.spec.anchor,
        input.spec.step,
        input.count,
        input.firstK,
        at,
      ],
    );
    return rows[0].id;
  }

  /**
   * Creates the due runs of every export (see CREATE_DUE_RUNS_SQL): one statement, in a transaction that turns
   * JIT compilation off for it. The planner cannot know how many intervals `generate_series` yields per export
   * (it assumes 1,000, usually there is one), so at 100,000 due exports it costs the statement at about 19
   * million, far above `jit_above_cost`, and a server with JIT spends 0.6 s compiling it (measured with EXPLAIN
   * ANALYZE on PostgreSQL 15) before running it for 4 s. `SET LOCAL` ends with the transaction, so the pooled
   * connection goes back with the server's settings.
   */
  async createDueRuns(now: Date, maxCatchup: number): Promise<{ created: number; exports: number }> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SET LOCAL jit = off');
      const [row]: { created: number; exports: number }[] = await manager.query(CREATE_DUE_RUNS_SQL, [
        now,
        maxCatchup,
        INTERVALS_JSON,
      ]);
      return row;
    });
  }
}
