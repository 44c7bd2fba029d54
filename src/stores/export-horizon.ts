import { DATABASE_HORIZON_SQL } from './export-cursor.js';

/** Runs one statement in the caller's transaction and returns its rows. */
export type HorizonQuery = <R>(sql: string, parameters?: unknown[]) => Promise<R[]>;

/**
 * Step 1: the coordinator's (or the one server's) horizon, `DATABASE_HORIZON_SQL`, and whether this database is a
 * Citus coordinator with workers. The first read of `pg_stat_activity` in its transaction (export-cursor.ts).
 */
export const LOCAL_HORIZON_SQL = `SELECT ${DATABASE_HORIZON_SQL}::text AS horizon,
       (to_regclass('pg_catalog.pg_dist_transaction') IS NOT NULL
        AND EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')) AS citus`;

/** Step 2 (Citus): the gids prepared in this database on every worker, one row per worker. */
export const WORKERS_PREPARED_SQL = `SELECT nodename, nodeport, success, result
  FROM run_command_on_workers($$SELECT coalesce(string_agg(gid, ','), '') FROM pg_prepared_xacts
                                 WHERE database = current_database()$$)`;

/**
 * Step 3 (Citus, a statement of its own: a newer snapshot than step 1's): the smallest coordinator transaction id
 * (`outer_xid`) of those prepared gids, from the coordinator's record of its two-phase commits.
 */
export const PREPARED_OUTER_XID_SQL = `SELECT min(outer_xid::text::bigint)::text AS xid
  FROM pg_dist_transaction WHERE gid = ANY($1::text[])`;

/**
 * The export horizon a scheduled run reads transaction ids below (`read_xid_to`, export-cursor.ts), as bigint
 * text: every write whose id is below it is visible to a read that starts after this returned, and it never
 * goes down from one call to the next.
 *
 * On one PostgreSQL it is `DATABASE_HORIZON_SQL`. On a Citus coordinator an event's id is the coordinator's
 * transaction's (its default is evaluated there), and a transaction committed with two phases has ended on the
 * coordinator before its parts are committed on the workers; so the coordinator's horizon is lowered to the id
 * of any such transaction still prepared on a worker (docs/citus.md, "The export watermark across shards", gives
 * the argument). A worker that does not answer fails the call: no horizon is better than a wrong one.
 *
 * Must run first in its transaction (step 1 reads `pg_stat_activity`, which PostgreSQL caches per transaction).
 */
export async function exportHorizon(query: HorizonQuery): Promise<string> {
  const [local] = await query<{ horizon: string; citus: boolean }>(LOCAL_HORIZON_SQL);
  if (!local.citus) return local.horizon;
  const workers = await query<{ nodename: string; nodeport: number; success: boolean; result: string }>(
    WORKERS_PREPARED_SQL,
  );
  const down = workers.filter((w) => !w.success);
  if (down.length > 0) {
    throw new Error(
      `export horizon: Citus worker ${down.map((w) => `${w.nodename}:${w.nodeport}`).join(', ')} did not answer (${down[0].result}); no run is created until it does`,
    );
  }
  const gids = workers.flatMap((w) => (w.result ? w.result.split(',') : []));
  if (gids.length === 0) return local.horizon;
  const [prepared] = await query<{ xid: string | null }>(PREPARED_OUTER_XID_SQL, [gids]);
  if (prepared.xid === null) return local.horizon;
  return BigInt(prepared.xid) < BigInt(local.horizon) ? prepared.xid : local.horizon;
}
