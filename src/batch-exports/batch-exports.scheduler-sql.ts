/*
 * The scheduler's statements (and the SQL expressions the backfill shares with them), in a file of their own: their
 * SQL carries its step-by-step documentation. BatchExportsRepository.createDueRuns runs them.
 */
import { INTERVAL_SPECS } from './schedule.js';

/**
 * The intervals as the scheduler's SQL reads them: a VALUES list, so that the planner knows how few they are. As a
 * `jsonb_to_recordset` parameter they were estimated at 100 rows, which priced reading the exports in key order
 * (a nested loop over them) above scanning and sorting them all: at 100,000 exports each of a tick's statements
 * then evaluated every export after its cursor (85 ms each, measured with auto_explain), not the 500 it locks.
 */
const INTERVALS_VALUES = Object.entries(INTERVAL_SPECS)
  .map(([name, spec]) => {
    if (!/^[a-z0-9 ]+$/.test(name)) throw new Error(`interval name ${name} cannot be written as a literal`);
    return `('${name}', ${spec.step}::bigint, ${spec.anchor}::bigint, ${spec.zoned}, ${spec.defaultOffset}::bigint)`;
  })
  .join(',\n         ');

/** `to_char` pattern of the timestamps in log messages (ISO 8601 UTC with milliseconds). */
export const ISO_SQL = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A new run's id: a UUID version 7 whose time is the interval's start (then random bits). The job queue
 * starts an export's jobs created together in id order, so this makes them run in interval order. Its first 8 bytes
 * are one bigint (48 bits of milliseconds, the version 7, 12 bits of `random()`) laid over a `gen_random_uuid`
 * (whose other bits are random, its variant already RFC 4122's): per run one `gen_random_uuid` and no byte
 * surgery, where the previous form took two and set the version's byte apart.
 */
export const RUN_ID_SQL = (start: string) =>
  `encode(overlay(uuid_send(gen_random_uuid()) PLACING int8send((((extract(epoch FROM ${start}) * 1000)::int8) << 16) | 28672 | (random() * 4095)::int8) FROM 1 FOR 8), 'hex')::uuid`;

/**
 * Exports one scheduler transaction locks at most (their runs and their dispatch are committed together). 2,000 rather than
 * 500: the keyset lock costs the same per export whatever the size, and 50 transactions instead of 200 for 100,000
 * due exports save the per-statement work (planning, round trips, pg-boss's queue lookup, commits): 7.9 s of the
 * server's CPU for such a tick instead of 8.4 s (docs/performance.md, "Scheduler tick: where the time goes");
 * 5,000 saved nothing more.
 */
export const DUE_EXPORTS_PER_STATEMENT = 2000;
/**
 * Runs one statement creates at most (before catch-up caps them, pauses aside): the locked exports are split into
 * statements of at most this many due intervals, so a deep catch-up (2,000 exports × SCHEDULER_MAX_CATCHUP) does
 * not return and parse the ids of 200,000 runs at once. An export with more due intervals has a statement
 * of its own.
 */
export const DUE_RUNS_PER_STATEMENT = 20_000;

/** `due` in consecutive groups of at most DUE_RUNS_PER_STATEMENT due intervals (capped at `maxCatchup` each). */
export function groupByRuns(due: readonly DueExport[], maxCatchup: number): DueExport[][] {
  const groups: DueExport[][] = [];
  let runs = Infinity;
  for (const row of due) {
    const intervals = Math.min(Number(row.last_k) - Number(row.first_k) + 1, maxCatchup);
    if (runs + intervals > DUE_RUNS_PER_STATEMENT) {
      groups.push([]);
      runs = 0;
    }
    groups[groups.length - 1].push(row);
    runs += intervals;
  }
  return groups;
}

/*
 * Interval-end indexes are computed in double precision (`date_part`), as `schedule.ts` does in TypeScript:
 * exact for the whole-second boundaries, and several times cheaper per row than `extract`'s numeric.
 */
/** The clock of an export's interval ends: its time zone for daily and weekly intervals, UTC otherwise. */
const TZ = `(CASE WHEN iv.zoned THEN coalesce(e.timezone, 'UTC') ELSE 'UTC' END)`;
/** The export's anchor: the interval's, moved by its `interval_offset` (daily and weekly intervals). */
const ANCHOR = `(iv.anchor + CASE WHEN iv.zoned THEN coalesce(e.interval_offset, iv.default_offset) - iv.default_offset ELSE 0 END)`;
/** Wall-clock seconds of an instant on the export's clock (schedule.ts#wallSeconds). */
const WALL = (at: string) => `date_part('epoch', (${at}) AT TIME ZONE ${TZ})`;
/** The instant of wall-clock second `wall` on clock `tz` (schedule.ts#instantOfWall). */
export const INSTANT = (wall: string, tz: string) =>
  `((timestamp '1970-01-01' + (${wall}) * interval '1 second') AT TIME ZONE ${tz})`;
/** Index of the first interval end to consider: at or after max(created_at, start_at), after the watermark. */
const FIRST_K = `greatest(
      ceil((${WALL('greatest(e.created_at, e.start_at)')} - ${ANCHOR}) / iv.step),
      floor((${WALL('e.scheduled_through')} - ${ANCHOR}) / iv.step) + 1
    )::bigint`;
/** Index of the last interval end to consider: at or before min(end_at, now). */
const LAST_K = `floor((${WALL('least($1::timestamptz, e.end_at)')} - ${ANCHOR}) / iv.step)::bigint`;

/**
 * The scheduler's statements (docs/decisions.md §8), after the export horizon (`exportHorizon`). For every
 * unpaused, undeleted export with at least one due interval they:
 *
 * 1. LOCK_DUE_EXPORTS_SQL (a statement of its own: Citus 13.2 fails a statement whose CTE reads a reference
 *    table `FOR UPDATE` and whose INSERT … SELECT reads that CTE, `invalid input syntax for type uuid: "PGCOPY"`,
 *    a binary COPY header read as text; the same SELECT on its own is planned by Citus's router and runs) —
 *    locks the export row (`FOR UPDATE SKIP LOCKED`: replicas ticking at once share the exports instead of
 *    waiting; a PATCH or DELETE in progress keeps its export until the next tick), in id order after the last
 *    export the tick's previous statement locked (`$3`; the primary key's order, so a tick reads each export
 *    once), and computes the
 *    range of interval-end indexes k (ends are `anchor + k × step` epoch seconds): from the first end at or
 *    after max(start_at, created_at) and after the watermark `scheduled_through`, to the last end at or before
 *    min(end_at, now);
 * 2. `kept` — generates those ends and drops the ones inside a pause window `[paused_at, unpaused_at)`;
 * 3. `inserted` — inserts the first SCHEDULER_MAX_CATCHUP of them per export as `Starting` runs, `ON CONFLICT
 *    DO NOTHING` on the unique key (export, data_interval_start, data_interval_end) of scheduled runs: exactly
 *    once even when the watermark is behind (a retried or concurrent tick). Each run gets the transaction ids
 *    it reads by (docs/batch-exports.md, "Late commits"): up to the export horizon ($4: `exportHorizon`, run
 *    first in the transaction; never below the export's previous run's), from
 *    where the export's scheduled run before it (created earlier, or in this statement) stopped, also across
 *    skipped intervals; and the end of that run's interval (`read_late_before`): late reads stay below it and
 *    the run's own reads start there when it is after the interval's start, so the writes committed late into
 *    the intervals before a gap are read, those stamped in the gap are not, and an interval that overlaps the
 *    previous one (a schedule change) does not read its rows again;
 * 4. `advanced` — moves the watermark to the last run created when the cap was hit, else to the last end
 *    considered (skipped ones included);
 * 5. returns the ids of the runs actually created. Their jobs and their "Run created" log lines are not written
 *    here: the transaction queues one dispatch of them (`RunQueue.enqueueDispatch`), which a worker carries out
 *    in a transaction of its own (`BatchExportRunsRepository.dispatchNext`): at 100,000 due exports a job and a log
 *    line per run were more than half of the tick (docs/performance.md, "Scheduler tick: where the time goes").
 *
 * Then CREATE_DUE_RUNS_SQL, `due_exports` being locked rows ($3), does the rest in one statement. The lock takes up
 * to DUE_EXPORTS_PER_STATEMENT exports (createDueRuns repeats it until none is left), CREATE_DUE_RUNS_SQL runs for
 * them in groups of up to DUE_RUNS_PER_STATEMENT due intervals (one group unless a catch-up is deep); the lock and
 * its groups commit or fail as a whole with their runs' dispatch (createDueRuns runs them with JIT off).
 * `schedule.ts#dueRuns` is the same rule in TypeScript (an e2e test checks they agree).
 */
export const LOCK_DUE_EXPORTS_SQL = `
WITH iv(name, step, anchor, zoned, default_offset) AS (
  VALUES ${INTERVALS_VALUES}
)
-- The bounds are computed from e's columns in the target list and WHERE (not in a subquery), so when a row was
-- changed by a tick that committed meanwhile, PostgreSQL's re-check of the locked row sees the new watermark and
-- leaves it out.
SELECT e.id, e.organization_id, iv.step, ${ANCHOR} AS anchor, ${TZ} AS tz,
       ${FIRST_K} AS first_k, ${LAST_K} AS last_k
  FROM batch_exports e
  JOIN iv ON iv.name = e.interval
 WHERE e.deleted_at IS NULL
   AND NOT e.paused
   AND ${FIRST_K} <= ${LAST_K}
   AND e.id > $3::uuid
 ORDER BY e.id
 LIMIT $2
   FOR UPDATE OF e SKIP LOCKED`;

/** An export locked by LOCK_DUE_EXPORTS_SQL, with the range of its due interval ends and its clock. */
export interface DueExport {
  id: string;
  organization_id: string;
  step: string;
  anchor: string;
  tz: string;
  first_k: string;
  last_k: string;
}

export const CREATE_DUE_RUNS_SQL = `
WITH due_exports AS MATERIALIZED (
  SELECT * FROM jsonb_to_recordset($3::jsonb)
           AS d(id uuid, organization_id uuid, step bigint, anchor bigint, tz text, first_k bigint, last_k bigint)
),
kept AS MATERIALIZED (
  SELECT c.batch_export_id, c.k, c.data_interval_start, c.data_interval_end,
         row_number() OVER (PARTITION BY c.batch_export_id ORDER BY c.k) AS n,
         lag(c.data_interval_end) OVER (PARTITION BY c.batch_export_id ORDER BY c.k) AS previous_end
    FROM (
      SELECT d.id AS batch_export_id, g.k,
             ${INSTANT('d.anchor + (g.k - 1) * d.step', 'd.tz')} AS data_interval_start,
             ${INSTANT('d.anchor + g.k * d.step', 'd.tz')} AS data_interval_end
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
prior AS MATERIALIZED (
  -- The export's scheduled run before each first interval, gap or not: the one that started last (the scheduled
  -- runs' unique index, read backwards), this interval's own run (a retried tick) aside.
  SELECT kept.*, prev.read_xid_to AS prev_xid_to, prev.data_interval_end AS prev_end,
         -- The horizon ($4, exportHorizon), never below where the export's previous run stopped (two ticks
         -- that overlap: each export's ranges of transaction ids follow one another).
         greatest($4::bigint, max(prev.read_xid_to) OVER (PARTITION BY kept.batch_export_id)) AS horizon
    FROM kept
    LEFT JOIN LATERAL (
      SELECT p.read_xid_to, p.data_interval_end FROM batch_export_runs p
       WHERE kept.n = 1 AND p.batch_export_id = kept.batch_export_id AND p.backfill_id IS NULL
         AND p.data_interval_start < kept.data_interval_end AND p.data_interval_end <= kept.data_interval_end
         AND (p.data_interval_start, p.data_interval_end) <> (kept.data_interval_start, kept.data_interval_end)
       ORDER BY p.data_interval_start DESC, p.data_interval_end DESC
       LIMIT 1
    ) prev ON true
   WHERE kept.n <= $2
),
inserted AS (
  INSERT INTO batch_export_runs
         (id, batch_export_id, status, data_interval_start, data_interval_end, created_at, last_updated_at,
          read_xid_from, read_xid_to, read_late_before)
  SELECT ${RUN_ID_SQL('data_interval_start')}, batch_export_id, 'Starting', c.data_interval_start, c.data_interval_end, $1, $1,
         CASE WHEN c.n = 1 THEN c.prev_xid_to ELSE c.horizon END,
         c.horizon,
         CASE WHEN c.n = 1 THEN c.prev_end ELSE c.previous_end END
    FROM prior c
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
           ELSE ${INSTANT('d.anchor + d.last_k * d.step', 'd.tz')}
         END
    FROM due_exports d
    LEFT JOIN capped c ON c.batch_export_id = d.id
   WHERE e.id = d.id
  RETURNING e.id
)
SELECT (SELECT count(*) FROM advanced)::int AS exports,
       (SELECT coalesce(array_agg(i.id ORDER BY i.batch_export_id, i.data_interval_end), '{}') FROM inserted i)::text[]
         AS runs`;

/**
 * The "Run created" log lines of scheduled runs ($1, the runs' ids), written by their dispatch
 * (`BatchExportRunsRepository.logScheduledRunsCreated`). In a CTE: Citus 13.2 cannot plan a top-level
 * INSERT … SELECT of reference tables with a parameter generically ("could not create distributed plan"); as a CTE
 * it is a subplan of its own.
 */
export const LOG_SCHEDULED_RUNS_SQL = `WITH logged AS (
         INSERT INTO batch_export_logs (batch_export_id, run_id, timestamp, level, message)
         SELECT r.batch_export_id, r.id, r.created_at, 'INFO',
                'Run created for ' || ${ISO_SQL('r.data_interval_start')} || ' to ' ||
                ${ISO_SQL('r.data_interval_end')} || ' (scheduled).'
           FROM batch_export_runs r
          WHERE r.id = ANY($1::uuid[])
          ORDER BY r.batch_export_id, r.data_interval_end
         RETURNING 1
       )
       SELECT count(*)::int AS logged FROM logged`;
