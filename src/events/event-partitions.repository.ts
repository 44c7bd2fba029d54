import { Injectable } from '@nestjs/common';
import { RepositoryBase } from '../database/repository-base.js';
import { DAY_MS, partitionName } from './event-partitions.js';

/** A partition of `events`, by its bounds (its name is not relied on: docs/citus.md, "Day partitions on Citus"). */
export interface EventPartition {
  name: string;
  from: Date;
  to: Date;
  /** Its table access method: `heap`, or `columnar` once converted (Citus). */
  accessMethod: string;
}

/**
 * The partitions of `events` with their bounds and access method, read from the catalog on both engines: the
 * bound's text (`FOR VALUES FROM ('…') TO ('…')`, written in the session's time zone with its offset) read back
 * as timestamptz. A default partition (none is made) has no range and is left out.
 */
const PARTITIONS_SQL = `SELECT c.relname AS name, b.m[1]::timestamptz AS "from", b.m[2]::timestamptz AS "to",
         coalesce(am.amname, '') AS "accessMethod"
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_class p ON p.oid = i.inhparent
    LEFT JOIN pg_am am ON am.oid = c.relam
   CROSS JOIN LATERAL (
     SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), $$FROM \\('([^']+)'\\) TO \\('([^']+)'\\)$$) AS m) b
   WHERE p.relname = 'events' AND p.relnamespace = current_schema()::regnamespace AND b.m IS NOT NULL
   ORDER BY 2`;

/** Whether this database has the citus extension (a Citus coordinator, or a database about to be distributed). */
const CITUS_SQL = `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus,
         EXISTS (SELECT 1 FROM pg_am WHERE amname = 'columnar') AS columnar`;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The day partitions of `events` (docs/decisions.md §13, docs/citus.md "Day partitions on Citus"). On PostgreSQL
 * the service creates and drops them itself (`events_pYYYYMMDD`); on Citus it asks Citus's time-partition
 * functions (`create_time_partitions`, `drop_old_time_partitions`, which name them `events_pYYYY_MM_DD`) and may
 * convert old ones to `columnar` (`alter_old_partitions_set_access_method`). Either way partitions are found by
 * their bounds, so a database distributed in place keeps the partitions made before.
 */
@Injectable()
export class EventPartitionsRepository extends RepositoryBase {
  /** Every range partition of `events`, oldest first. */
  async partitions(): Promise<EventPartition[]> {
    return this.query<EventPartition>(PARTITIONS_SQL);
  }

  /** The engine's capabilities: the citus extension, and the `columnar` access method. */
  async engine(): Promise<{ citus: boolean; columnar: boolean }> {
    const [row] = await this.query<{ citus: boolean; columnar: boolean }>(CITUS_SQL);
    return row;
  }

  /** The days (since the epoch) that have a partition of exactly that UTC day, ascending. */
  async partitionDays(): Promise<number[]> {
    const days: number[] = [];
    for (const p of await this.partitions()) {
      const from = p.from.getTime();
      if (from % DAY_MS === 0 && p.to.getTime() - from === DAY_MS) days.push(from / DAY_MS);
    }
    return days;
  }

  /**
   * Creates the partition of a day with its unique (team_id, uuid) index, unless one holds that day. Every replica
   * may call it at once: creations are serialised by an advisory lock and checked again under it. On Citus the
   * partition is made by `create_time_partitions` (in UTC: its day boundaries and names follow the session's time
   * zone), and its index in the same transaction, so no row reaches it before the index.
   */
  async createPartition(day: number): Promise<void> {
    const [from, to] = [day * DAY_MS, (day + 1) * DAY_MS];
    await this.transaction(async () => {
      await this.query(`SET LOCAL lock_timeout = '10s'`);
      // On Citus (docs/citus.md) the partition's DDL reaches each worker over one connection: the table has a
      // foreign key to a reference table (projects). A plain PostgreSQL takes the setting as an unused placeholder.
      await this.query(`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
      await this.query(`SET LOCAL TimeZone TO 'UTC'`);
      await this.query(`SELECT pg_advisory_xact_lock(hashtext('events_partitions'))`);
      // A partition of another range overlapping the day makes the creation below fail, saying so.
      const exists = (await this.partitions()).some(
        (p) => p.from.getTime() === from && p.to.getTime() === to,
      );
      if (exists) return;
      let name = partitionName(day);
      if ((await this.engine()).citus) {
        await this.query(
          `SELECT create_time_partitions('events', interval '1 day', end_at => $1, start_from => $2)`,
          [iso(to), iso(from)],
        );
        const made = (await this.partitions()).find((p) => p.from.getTime() === from);
        if (!made) throw new Error(`create_time_partitions made no partition of events for ${iso(from)}`);
        name = made.name;
      } else {
        await this.query(
          `CREATE TABLE "${name}" PARTITION OF events FOR VALUES FROM ('${iso(from)}') TO ('${iso(to)}')`,
        );
      }
      // Uniqueness per day: an event re-sent with the same uuid lands in the same day and is stored once.
      await this.query(`CREATE UNIQUE INDEX "${name}_team_uuid_key" ON "${name}" (team_id, uuid)`);
    });
  }

  /**
   * Drops every partition whose range ends at or before the start of `day` (all their events); how many. On Citus
   * with `drop_old_time_partitions`, else one DROP each.
   */
  async dropPartitionsBefore(day: number): Promise<number> {
    const before = day * DAY_MS;
    return this.transaction(async () => {
      await this.query(`SET LOCAL lock_timeout = '10s'`);
      // As createPartition: sequential DDL on Citus, a placeholder on PostgreSQL.
      await this.query(`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
      await this.query(`SELECT pg_advisory_xact_lock(hashtext('events_partitions'))`);
      const old = (await this.partitions()).filter((p) => p.to.getTime() <= before);
      if (!old.length) return 0;
      if ((await this.engine()).citus) {
        await this.query(`SET LOCAL client_min_messages TO warning`);
        await this.query(`CALL drop_old_time_partitions('events', '${iso(before)}')`);
      } else {
        for (const p of old) await this.query(`DROP TABLE IF EXISTS "${p.name}"`);
      }
      return old.length;
    });
  }

  /**
   * The end of the newest `columnar` partition, or null when none is: events before it cannot be deleted one by
   * one (Citus's columnar tables take no DELETE, UPDATE or ON CONFLICT), only with their partition.
   */
  async columnarUntil(): Promise<Date | null> {
    let until: Date | null = null;
    for (const p of await this.partitions()) {
      if (p.accessMethod === 'columnar' && (!until || p.to > until)) until = p.to;
    }
    return until;
  }

  /**
   * Converts the partitions ending at or before `before` to Citus's `columnar` access method
   * (`alter_old_partitions_set_access_method`, which commits after each partition: so this runs outside any
   * transaction); how many it converted. Columnar tables take no foreign keys, so the events' key to `projects`
   * (`events_team_fk`) is dropped first: a deleted project's events in columnar partitions stay until their
   * partition is dropped (docs/citus.md).
   */
  async convertToColumnar(before: Date): Promise<number> {
    const due = (await this.partitions()).filter(
      (p) => p.to.getTime() <= before.getTime() && p.accessMethod !== 'columnar',
    );
    if (!due.length) return 0;
    // One connection for the whole conversion: a session's advisory lock keeps two replicas from converting at once
    // (the procedure commits after each partition, so a transaction's lock would not hold).
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = (await runner.query(
        `SELECT pg_try_advisory_lock(hashtext('events_columnar')) AS locked`,
      )) as { locked: boolean }[];
      if (!locked) return 0;
      try {
        // Each rewrite holds its partition's exclusive lock (reads of that day wait): it does not queue for long
        // behind a long read, holding every later statement on events behind it; the next pass goes on.
        await runner.query(`SET lock_timeout = '10s'`);
        const [{ fk }] = (await runner.query(
          `SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = 'events'::regclass
                             AND conname = 'events_team_fk') AS fk`,
        )) as { fk: boolean }[];
        if (fk) {
          await runner.startTransaction();
          await runner.query(`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
          await runner.query(`ALTER TABLE events DROP CONSTRAINT IF EXISTS events_team_fk`);
          await runner.commitTransaction();
        }
        await runner.query(
          `CALL alter_old_partitions_set_access_method('events', '${before.toISOString()}', 'columnar')`,
        );
      } finally {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.query(`RESET lock_timeout`);
        await runner.query(`SELECT pg_advisory_unlock(hashtext('events_columnar'))`);
      }
      return due.length;
    } finally {
      await runner.release();
    }
  }
}
