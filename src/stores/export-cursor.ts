/**
 * The export cursor: the position in a store's writes that batch exports read by, owned by the store, one
 * convention for every exported model (docs/batch-exports.md, "Late commits"; docs/data-access.md, "Stores").
 * Batch exports hold it as an opaque serialized value the store creates (`horizonSql`) and compares
 * (`compare`), and never look inside; the PostgreSQL cursor below is a 64-bit transaction id, a Citus one can
 * replace it by giving another `ExportCursor` (the conformance suite, test/stores/export-cursor.e2e-spec.ts,
 * says what it must keep).
 *
 * A table an export reads has a time column the interval is cut by (its stamp: a recording's
 * `last_event_received_at`, a person's `updated_at`) and a `write_xid bigint NOT NULL DEFAULT 0` column set by
 * the trigger function `export_write_xid()` on insert and on every update that changes what the export reads
 * (`pg_current_xact_id()`, the writing transaction's id). A stamp is taken when its transaction starts, not
 * when it commits, so a row stamped inside an interval may become visible only after that interval's run read
 * it. Transaction ids close that gap: a scheduled run is created with `read_xid_to`, the oldest transaction
 * of this database still open then (`DATABASE_HORIZON_SQL`: every transaction of this database with a lower
 * id had ended, committed or not), and
 * `read_xid_from`, where the export's scheduled run before it stopped, and `read_late_before`, the end of
 * that run's interval (this run's start, unless intervals were skipped between them or overlap). It reads
 * the rows
 *
 *   stamp < interval end  AND  write_xid < read_xid_to
 *     AND  (stamp >= greatest(interval start, read_late_before)
 *           OR  (write_xid >= read_xid_from  AND  stamp < read_late_before))
 *
 * so a row written by a transaction that was still open when the previous run was created is read by the
 * first run created after it committed, whatever its stamp. Each write is read by exactly one scheduled run:
 * the run of its stamp's interval when its transaction id is below that run's `read_xid_to`, else the one run
 * whose `[read_xid_from, read_xid_to)` holds it. The chain of ids continues across skipped intervals (a pause,
 * a schedule change): the first run after them reads what was committed late into the intervals before them
 * (`read_late_before`), not what is stamped within them, which is a backfill's; an interval that overlaps
 * the one before it (a schedule change to a longer interval) reads its own rows from where that one ended. A
 * retry reads the same range
 * (it is stored with the run). Backfill runs (all null) read by the interval alone.
 *
 * The statements number their parameters: $2 interval start, $3 interval end, $4 `read_xid_from`, $5
 * `read_xid_to`, $6 `read_late_before` (the project is $1).
 */

/**
 * The oldest transaction id of this database still open, as a bigint: the statement's snapshot's `xmax` (every id
 * at or above it was unassigned or still open when the snapshot was taken), lowered to the smallest
 * id of this database's transactions still open (`pg_stat_activity.backend_xid`, prepared transactions too).
 *
 * Not the snapshot's `xmin`: that is the whole cluster's oldest open transaction, so a transaction held open in
 * another database of the same server (another service, a long migration, a test file) would hold every export
 * back for as long as it stays open. Only this database's transactions can write the rows an export reads.
 *
 * Why it is safe: the activity is read while the statement runs, after its snapshot was taken. A transaction of
 * this database with an id below `xmax` is either ended by then (its rows are visible to the run, whose read
 * starts later with a new snapshot) or still listed with its id. Ids assigned later are at or above `xmax`. The
 * bound never goes down from one call to the next: an id below it was ended or listed. The 32-bit
 * `backend_xid` is widened to 64 bits by its distance from `xmax` (an open id is within 2^31 of it). The
 * activity is read once per transaction (PostgreSQL caches it), so this must be the first read of
 * `pg_stat_activity` in its transaction: the scheduler's tick reads it nowhere else.
 */
export const DATABASE_HORIZON_SQL = `(
  SELECT least(s.xmax, min(s.xmax + ((o.xid - s.xmax % 4294967296) % 4294967296 + 6442450944) % 4294967296 - 2147483648))
    FROM (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax) s
    LEFT JOIN (
      SELECT backend_xid::text::bigint AS xid FROM pg_stat_activity
       WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND backend_xid IS NOT NULL
      UNION ALL
      SELECT transaction::text::bigint FROM pg_prepared_xacts WHERE database = current_database()
    ) o ON true
   GROUP BY s.xmax
)`;

/** The largest bigint: no upper bound on transaction ids (backfill runs). */
const NO_BOUND = '9223372036854775807';

/**
 * The stamp the rows a run reads late stay below: `read_late_before`, or the interval's start (runs created
 * before it was stored; backfill runs read nothing late).
 */
export const LATE_BEFORE = 'coalesce($6::timestamptz, $2)';

/**
 * Where a run's own reads (by stamp) start: its interval's start, or the end of the previous run's interval
 * when it is later (intervals that overlap after a schedule change: what the previous runs read is not read
 * again).
 */
export const OWN_FROM = `greatest($2, ${LATE_BEFORE})`;

/**
 * Whether the row of `alias` (stamped by `stamp`) belongs to the run: the condition above. `xidColumn` is the
 * expression of the row's transaction id as a bigint when it is not `write_xid` (the events table's
 * `inserted_xid` is xid8: `eventXidSql`).
 */
export function readByWatermarkSql(alias: string, stamp: string, xidColumn?: string): string {
  const at = `${alias}.${stamp}`;
  const xid = xidColumn ?? `${alias}.write_xid`;
  return (
    `(${at} < $3 AND ${xid} < coalesce($5::bigint, ${NO_BOUND}) ` +
    `AND (${at} >= ${OWN_FROM} OR (${xid} >= coalesce($4::bigint, ${NO_BOUND}) AND ${at} < ${LATE_BEFORE})))`
  );
}

/**
 * The `_inserted_at` a run exports: the row's stamp, or the interval's start for a row read late (stamped in
 * an earlier interval, committed after that interval's run was created). Always within the run's interval.
 */
export function insertedAtSql(stamp: string): string {
  return `greatest(${stamp}, $2)`;
}

/**
 * The events table's transaction id (`inserted_xid xid8 DEFAULT pg_current_xact_id()`, set once: events are
 * not updated) as the bigint the runs' `read_xid_from` / `read_xid_to` are stored as (`write_xid`'s convention;
 * an xid8 is a 64-bit epoch-qualified id, so the cast keeps the order).
 */
export function eventXidSql(alias: string): string {
  return `(${alias}.inserted_xid::text::bigint)`;
}

/**
 * An export cursor: what a store gives batch exports to cut its writes into runs so that each write is read by
 * exactly one scheduled run, however late its transaction commits.
 */
export interface ExportCursor {
  /** Its name, in logs and in the conformance suite. */
  readonly name: string;
  /**
   * An SQL expression of the current horizon, as the serialized cursor (bigint text): every write of the store
   * not below it was still uncommitted (or not yet made) when it was evaluated. It must be the first read of
   * the store's activity in its transaction (see `DATABASE_HORIZON_SQL`).
   */
  readonly horizonSql: string;
  /** Orders two serialized cursors (negative: `a` is earlier). */
  compare(a: string, b: string): number;
  /** Whether `value` is a cursor of this kind (a stored run's `read_xid_from` / `read_xid_to`). */
  isCursor(value: string): boolean;
  /**
   * The condition a run reads the rows of `alias` by (`readByWatermarkSql`): its stamp column, and the
   * expression of the write's position when it is not `<alias>.write_xid`.
   */
  readCondition(alias: string, stamp: string, position?: string): string;
}

/** The PostgreSQL cursor: transaction ids (xid8, as bigint text), the horizon `DATABASE_HORIZON_SQL`. */
export const POSTGRES_EXPORT_CURSOR: ExportCursor = {
  name: 'postgres-xid',
  horizonSql: DATABASE_HORIZON_SQL,
  compare: (a, b) => {
    const [x, y] = [BigInt(a), BigInt(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  },
  isCursor: (value) => /^(0|[1-9]\d{0,18})$/.test(value) && BigInt(value) <= BigInt(NO_BOUND),
  readCondition: (alias, stamp, position) => readByWatermarkSql(alias, stamp, position),
};
