import {
  type DataSource,
  type EntitySubscriberInterface,
  EventSubscriber,
  type TransactionStartEvent,
} from 'typeorm';

/**
 * The export position of a write on Citus (docs/citus.md, "The export watermark across shards").
 *
 * Exported tables other than events (persons, their distinct ids, recordings, the activity log) are stamped by the
 * trigger function `export_write_xid()` with the writing transaction's id (`write_xid`, src/stores/export-cursor.ts).
 * On Citus that trigger runs on the worker holding the shard, where `pg_current_xact_id()` is the worker's own
 * transaction id: an order of its own per worker, which the export horizon (the coordinator's ids) does not bound.
 * So on a Citus coordinator every transaction the service opens first records the coordinator's transaction id in
 * the transaction-local setting `export.write_xid`, which Citus sends on to every worker the transaction reaches
 * (`citus.propagate_set_commands = 'local'`: SET LOCAL statements are replayed on each worker connection of the
 * transaction), and `database distribute` installs a trigger function that stamps that id
 * (`CITUS_EXPORT_WRITE_XID_FUNCTION`).
 */

/** The setting the coordinator's transaction id is carried in. */
export const WRITE_XID_SETTING = 'export.write_xid';

/**
 * One round trip at the start of a transaction on a Citus coordinator: assigns the transaction its id and records
 * it, for this node and (propagated) the workers. `SET` takes no parameter or expression, hence the `DO` block.
 */
export const STAMP_WRITE_XID_SQL = `DO $$ BEGIN
  SET LOCAL citus.propagate_set_commands = 'local';
  EXECUTE format('SET LOCAL ${WRITE_XID_SETTING} = %L', pg_current_xact_id()::text);
END $$`;

/**
 * The trigger function of the exported tables on Citus (replacing the one of plain PostgreSQL, migration
 * 1795807561520): the coordinator's id from `export.write_xid`. Without it, an insert keeps the row's value: the
 * column's default on Citus (`CITUS_WRITE_XID_DEFAULT`), which the coordinator evaluates as it does every
 * default, or the stored value of a row copied to its shard (`database distribute`, a shard move); an update fails,
 * saying why, rather than storing a worker's id that an export would read wrongly.
 */
export const CITUS_EXPORT_WRITE_XID_FUNCTION = `CREATE OR REPLACE FUNCTION export_write_xid() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
  DECLARE
    coordinator_xid text := current_setting('${WRITE_XID_SETTING}', true);
  BEGIN
    IF coordinator_xid <> '' THEN
      NEW.write_xid := coordinator_xid::bigint;
    ELSIF TG_OP <> 'INSERT' THEN
      RAISE EXCEPTION 'an update of % on a Citus node carries no coordinator transaction id', TG_TABLE_NAME
        USING HINT = 'Update exported tables inside a transaction the service opened (TransactionHost), which '
          || 'sets ${WRITE_XID_SETTING}; see docs/citus.md.';
    END IF;
    RETURN NEW;
  END $fn$`;

/** The default of `write_xid` on Citus: the inserting coordinator transaction's id (plain PostgreSQL: 0, then the trigger). */
export const CITUS_WRITE_XID_DEFAULT = 'pg_current_xact_id()::text::bigint';

/** The statements `database distribute` runs (again, idempotent) so exported tables get the coordinator's ids. */
export async function installCitusWriteXid(query: (sql: string) => Promise<unknown>): Promise<void> {
  await query(CITUS_EXPORT_WRITE_XID_FUNCTION);
  const tables = (await query(
    `SELECT c.relname AS name FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND a.attname = 'write_xid' AND NOT a.attisdropped
        AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY 1`,
  )) as { name: string }[];
  for (const { name } of tables) {
    await query(`ALTER TABLE "${name}" ALTER COLUMN write_xid SET DEFAULT ${CITUS_WRITE_XID_DEFAULT}`);
  }
}

/** Whether each data source is a Citus coordinator's (set once at boot by `detectCitusCoordinator`). */
const coordinators = new WeakMap<DataSource, boolean>();

/** Reads once whether `dataSource`'s database is a Citus coordinator's; its transactions then stamp their id. */
export async function detectCitusCoordinator(dataSource: DataSource): Promise<boolean> {
  const [row] = (await dataSource.query(
    `SELECT (to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL
             AND EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')) AS citus`,
  )) as { citus: boolean }[];
  coordinators.set(dataSource, row.citus);
  return row.citus;
}

/**
 * Stamps the coordinator's transaction id at the start of every outermost transaction of a data source found to be
 * a Citus coordinator (nothing on plain PostgreSQL: no statement more).
 */
// TypeORM loads only the listed subscribers it knows from this decorator (typeorm-options.ts lists it).
@EventSubscriber()
export class CitusWriteXidSubscriber implements EntitySubscriberInterface {
  async afterTransactionStart(event: TransactionStartEvent): Promise<void> {
    if (!coordinators.get(event.dataSource)) return;
    // A savepoint (depth > 1) is inside a transaction already stamped.
    if ((event.queryRunner as unknown as { transactionDepth: number }).transactionDepth !== 1) return;
    await event.queryRunner.query(STAMP_WRITE_XID_SQL);
  }
}
