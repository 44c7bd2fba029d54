import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../../database/generate-sql.js';
import { RepositoryBase } from '../../database/repository-base.js';
import type {
  BufferedEntry,
  ChunkLocation,
  ChunkToMove,
  PackedEntry,
  StorageCounts,
  UnpackedChunk,
  WrappedKeyRow,
} from './snapshot-storage.types.js';

/** Rows of the chunk buffer's default partition one `cleanDefaultPartition` transaction looks at. */
const CLEAN_DEFAULT_BATCH = 1000;

export type {
  BufferedEntry,
  ChunkLocation,
  ChunkToMove,
  PackedEntry,
  StorageCounts,
  UnpackedChunk,
  WrappedKeyRow,
} from './snapshot-storage.types.js';

/**
 * The statements of `session_recording_snapshots` that move chunk bytes between the database and the object
 * store, and the orphan sweep's lookups.
 */
@Injectable()
export class SnapshotStorageRepository extends RepositoryBase {
  /**
   * Up to `limit` chunks, in numeric id order after `afterId`, whose bytes are in the database (`toObjects`) or
   * not. The order names the table's column: a bare `id` would be the text output column, and pages would skip.
   */
  @GenerateSql(
    { name: 'to objects', params: [true, '0', 100] },
    { name: 'to the database', params: [false, '0', 100] },
  )
  chunksToMove(toObjects: boolean, afterId: string, limit: number): Promise<ChunkToMove[]> {
    return this.query<ChunkToMove>(
      `SELECT id::text AS id, team_id AS "teamId", session_id AS "sessionId", object_key AS "objectKey",
              object_offset::text AS "objectOffset", object_length AS "objectLength", encrypted
         FROM session_recording_snapshots
        WHERE id > $1::bigint
          AND (CASE WHEN $2::boolean THEN data IS NOT NULL ELSE data IS NULL AND object_key IS NOT NULL END)
        ORDER BY session_recording_snapshots.id
        LIMIT $3`,
      [afterId, toObjects, limit],
    );
  }

  /** A chunk's gzip bytes when they are in the database. */
  @GenerateSql({ params: ['1'] })
  async chunkData(id: string): Promise<Buffer | null> {
    const [row] = await this.query<{ data: Buffer | null }>(
      'SELECT data FROM session_recording_snapshots WHERE id = $1::bigint',
      [id],
    );
    return row?.data ?? null;
  }

  /**
   * Points the chunk at its uploaded object and drops its bytes from the row, only if the row still holds the
   * bytes whose SHA-256 is `sha256` (what was uploaded and read back). False when it did not.
   */
  @GenerateSql({ params: ['1', 'session_recordings/1/s/chunk-1', '00'] })
  async movedToObject(id: string, objectKey: string, sha256: string): Promise<boolean> {
    const { affected } = await this.modify(
      `UPDATE session_recording_snapshots SET object_key = $2, data = NULL
        WHERE id = $1::bigint AND data IS NOT NULL AND sha256(data) = decode($3, 'hex')`,
      [id, objectKey, sha256],
    );
    return affected === 1;
  }

  /**
   * Puts the object's bytes back into the chunk's row, only if the row still points at `objectKey`; returns the
   * SHA-256 (hex) of what the row now holds, for the caller to compare, or null when it did not.
   */
  @GenerateSql({ params: ['1', 'session_recordings/1/s/chunk-1', Buffer.from('x')] })
  async movedToDatabase(id: string, objectKey: string, data: Buffer): Promise<string | null> {
    const { rows } = await this.modify<{ sha256: string }>(
      `UPDATE session_recording_snapshots
          SET data = $3, object_key = NULL, object_offset = NULL, object_length = NULL, encrypted = false
        WHERE id = $1::bigint AND object_key = $2
        RETURNING encode(sha256(data), 'hex') AS sha256`,
      [id, objectKey, data],
    );
    return rows[0]?.sha256 ?? null;
  }

  /** How many chunks each backend holds (chunks waiting to be packed count as in the database). */
  @GenerateSql()
  async counts(): Promise<StorageCounts> {
    const [row] = await this.query<{ inDatabase: string; inObjectStore: string }>(
      `SELECT count(*) FILTER (WHERE data IS NOT NULL OR object_key IS NULL) AS "inDatabase",
              count(*) FILTER (WHERE object_key IS NOT NULL) AS "inObjectStore"
         FROM session_recording_snapshots`,
    );
    return { inDatabase: Number(row.inDatabase), inObjectStore: Number(row.inObjectStore) };
  }

  /** Those of `keys` some chunk points at. */
  @GenerateSql({ params: [['session_recordings/1/s/a']] })
  async referencedKeys(keys: readonly string[]): Promise<Set<string>> {
    const rows = await this.query<{ objectKey: string }>(
      `SELECT object_key AS "objectKey" FROM session_recording_snapshots WHERE object_key = ANY($1::varchar[])`,
      [keys],
    );
    return new Set(rows.map((r) => r.objectKey));
  }

  /**
   * The chunks waiting in the database to be packed (their bytes in `session_recording_chunk_buffer`), with
   * the age of the oldest.
   */
  @GenerateSql({ params: [new Date('2026-01-01T00:00:00Z')] })
  async backlog(now: Date): Promise<{ chunks: number; bytes: number; oldestSeconds: number }> {
    const [row] = await this.query<{ chunks: string; bytes: string; oldest: Date | null }>(
      `SELECT count(*) AS chunks, coalesce(sum(octet_length(b.data)), 0) AS bytes, min(s.created_at) AS oldest
         FROM session_recording_snapshots s
         JOIN session_recording_chunk_buffer b ON b.created_at = s.created_at AND b.snapshot_id = s.id
        WHERE s.data IS NULL AND s.object_key IS NULL`,
    );
    const oldest = row.oldest ? Math.max(0, (now.getTime() - row.oldest.getTime()) / 1000) : 0;
    return { chunks: Number(row.chunks), bytes: Number(row.bytes), oldestSeconds: oldest };
  }

  /**
   * The oldest unpacked chunks (id order), with their bytes' length (not the bytes: `bufferedBytes` reads them
   * a few megabytes at a time), up to `maxBytes` in all (at least one chunk, even a larger one) and at most
   * `maxChunks`.
   */
  @GenerateSql({ params: [1024 * 1024, 1000, 30] })
  unpackedChunks(maxBytes: number, maxChunks: number, defaultDays: number): Promise<UnpackedChunk[]> {
    return this.query<UnpackedChunk>(
      `SELECT w.id::text AS id, w.team_id AS "teamId", w.session_id AS "sessionId",
              coalesce(p.session_recording_retention_period_days, $3::int) AS "retentionDays",
              w.first_timestamp AS "firstTimestamp", w.created_at AS "createdAt", w.len AS "dataLength"
         FROM (SELECT s.id, s.team_id, s.session_id, s.first_timestamp, s.created_at, octet_length(b.data) AS len,
                      sum(octet_length(b.data)) OVER (ORDER BY s.id) - octet_length(b.data) AS before
                 FROM (SELECT * FROM session_recording_snapshots
                        WHERE data IS NULL AND object_key IS NULL
                        ORDER BY id
                        LIMIT $2) s
                 JOIN session_recording_chunk_buffer b ON b.created_at = s.created_at AND b.snapshot_id = s.id) w
         LEFT JOIN projects p ON p.id = w.team_id
        WHERE w.before = 0 OR w.before + w.len <= $1
        ORDER BY w.id`,
      [maxBytes, maxChunks, defaultDays],
    );
  }

  /** The buffered bytes of waiting chunks (a piece of a packer pass), by chunk id; a chunk without any is left out. */
  @GenerateSql({ params: [[{ id: '1', createdAt: new Date('2026-01-01T00:00:00Z') }]] })
  async bufferedBytes(chunks: readonly { id: string; createdAt: Date }[]): Promise<Map<string, Buffer>> {
    const rows = await this.query<{ id: string; data: Buffer }>(
      `SELECT b.snapshot_id::text AS id, b.data
         FROM session_recording_chunk_buffer b
         JOIN unnest($1::bigint[], $2::timestamptz[]) AS u(id, created_at)
           ON b.created_at = u.created_at AND b.snapshot_id = u.id`,
      [chunks.map((c) => c.id), chunks.map((c) => c.createdAt)],
    );
    return new Map(rows.map((r) => [r.id, r.data]));
  }

  /**
   * Points the waiting chunks at their ranges of the packed object `objectKey`, each only if it still waits and
   * its buffered bytes are still there with the entry's length (those the pass read, packed and read back by
   * SHA-256: a buffer row is never updated, and its `snapshot_id` comes from the chunks' sequence, so the row
   * under that id and hour holds those bytes or is gone). The length is read from the stored value's header,
   * without reading the bytes. How many rows changed. The buffered bytes stay until their hour's partition is
   * dropped (`dropPackedPartitions`).
   *
   * Two statements in one transaction: the buffer's rows that are still there (the buffer is local to the
   * coordinator on Citus, which refuses an UPDATE of distributed chunks that reads it), then the chunks. The
   * first holds the buffer partitions it read until the commit, so none of them is dropped in between.
   */
  @GenerateSql({
    params: [
      'rec/packed/2026-01-01/x',
      [{ id: '1', createdAt: new Date('2026-01-01T00:00:00Z'), offset: 0, length: 1, dataLength: 1 }],
      true,
    ],
  })
  markPacked(objectKey: string, entries: readonly BufferedEntry[], encrypted: boolean): Promise<number> {
    return this.transaction(async () => {
      const buffered = await this.query<{ id: string }>(
        `SELECT b.snapshot_id::text AS id
           FROM session_recording_chunk_buffer b
           JOIN unnest($1::bigint[], $2::timestamptz[], $3::int[]) AS u(id, created_at, data_len)
             ON b.created_at = u.created_at AND b.snapshot_id = u.id AND octet_length(b.data) = u.data_len`,
        [entries.map((e) => e.id), entries.map((e) => e.createdAt), entries.map((e) => e.dataLength)],
      );
      const present = new Set(buffered.map((r) => r.id));
      const kept = entries.filter((e) => present.has(e.id));
      if (!kept.length) return 0;
      const { affected } = await this.modify(
        `UPDATE session_recording_snapshots s
            SET object_key = $1, object_offset = u.off, object_length = u.len, encrypted = $5
           FROM unnest($2::bigint[], $3::bigint[], $4::int[]) AS u(id, off, len)
          WHERE s.id = u.id AND s.data IS NULL AND s.object_key IS NULL`,
        [objectKey, kept.map((e) => e.id), kept.map((e) => e.offset), kept.map((e) => e.length), encrypted],
      );
      return affected;
    });
  }

  /**
   * Deletes chunks still waiting to be packed whose recording was deleted (it has no data key, and gets none):
   * they are never packed; their bytes leave with their buffer partition. How many.
   */
  @GenerateSql({ params: [['1']] })
  async dropWaiting(ids: readonly string[]): Promise<number> {
    const { affected } = await this.modify(
      `DELETE FROM session_recording_snapshots
        WHERE id = ANY($1::bigint[]) AND data IS NULL AND object_key IS NULL`,
      [ids],
    );
    return affected;
  }

  /**
   * The stored data keys of these recordings of the project (those that have one). One project per statement:
   * on Citus it is routed to the project's shard.
   */
  @GenerateSql({ params: (f) => [f.projectId, [f.sessionId]] })
  wrappedKeys(teamId: number, sessionIds: readonly string[]): Promise<WrappedKeyRow[]> {
    return this.query<WrappedKeyRow>(
      `SELECT k.team_id AS "teamId", k.session_id AS "sessionId", k.wrapped_key AS "wrappedKey", k.kek_id AS "kekId"
         FROM session_recording_keys k
        WHERE k.team_id = $1 AND k.session_id = ANY($2::varchar[])`,
      [teamId, sessionIds],
    );
  }

  /**
   * Stores new data keys for those of these recordings of the project that are live (not deleted) and have none,
   * each recording's row locked FOR SHARE for the statement, so a concurrent DELETE of the recording (which
   * deletes its key after its UPDATE) either comes first or sees the key. How many were stored. One project per
   * statement: on Citus it is routed to the project's shard (which locks rows on one shard only).
   */
  @GenerateSql({
    params: (f) => [f.projectId, [{ sessionId: f.sessionId, wrappedKey: Buffer.from('k') }], 'abc'],
  })
  async insertKeys(
    teamId: number,
    keys: readonly { sessionId: string; wrappedKey: Buffer }[],
    kekId: string,
  ): Promise<number> {
    const { affected } = await this.modify(
      `INSERT INTO session_recording_keys (team_id, session_id, wrapped_key, kek_id)
       SELECT l.team_id, l.session_id, l.wrapped_key, $4
         FROM (SELECT r.team_id, r.session_id, u.wrapped_key
                 FROM session_recordings r
                 JOIN unnest($2::varchar[], $3::bytea[]) AS u(session_id, wrapped_key)
                   ON r.session_id = u.session_id
                WHERE r.team_id = $1 AND r.deleted_at IS NULL
                ORDER BY r.session_id
                  FOR SHARE OF r) l
       ON CONFLICT (team_id, session_id) DO NOTHING`,
      [teamId, keys.map((k) => k.sessionId), keys.map((k) => k.wrappedKey), kekId],
    );
    return affected;
  }

  /**
   * Up to `limit` chunks of the recording in list order (first timestamp, id), from `from` (inclusive or not)
   * to `to` inclusive: where each one's bytes are.
   */
  @GenerateSql({
    params: (f) => [
      f.projectId,
      f.sessionId,
      { firstTimestamp: new Date(0), id: '0' },
      true,
      { firstTimestamp: new Date(0), id: '9' },
      100,
    ],
  })
  chunkLocations(
    teamId: number,
    sessionId: string,
    from: { firstTimestamp: Date; id: string },
    inclusive: boolean,
    to: { firstTimestamp: Date; id: string },
    limit: number,
  ): Promise<ChunkLocation[]> {
    return this.query<ChunkLocation>(
      `SELECT id::text AS id, first_timestamp AS "firstTimestamp", window_id AS "windowId",
              (data IS NOT NULL OR object_key IS NULL) AS "inDatabase", object_key AS "objectKey",
              object_offset::text AS "objectOffset", object_length AS "objectLength", encrypted
         FROM session_recording_snapshots
        WHERE team_id = $1 AND session_id = $2
          AND (CASE WHEN $5::boolean THEN (first_timestamp, id) >= ($3::timestamptz, $4::bigint)
                    ELSE (first_timestamp, id) > ($3::timestamptz, $4::bigint) END)
          AND (first_timestamp, id) <= ($6::timestamptz, $7::bigint)
        ORDER BY first_timestamp, id
        LIMIT $8`,
      [teamId, sessionId, from.firstTimestamp, from.id, inclusive, to.firstTimestamp, to.id, limit],
    );
  }

  /** The hourly partitions of the chunk buffer (not the default one), oldest first, with their hour. */
  @GenerateSql()
  async bufferPartitions(): Promise<{ name: string; hour: Date }[]> {
    const rows = await this.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'session_recording_chunk_buffer'::regclass ORDER BY c.relname`,
    );
    const out: { name: string; hour: Date }[] = [];
    for (const { name } of rows) {
      const hour = hourOfPartition(name);
      if (hour) out.push({ name, hour });
    }
    return out;
  }

  /** Creates the partition of the hour starting at `hour` unless it exists; false when it could not be. */
  async createBufferPartition(hour: Date): Promise<boolean> {
    const end = new Date(hour.getTime() + HOUR_MS);
    await this.query(
      `CREATE TABLE IF NOT EXISTS ${partitionName(hour)} PARTITION OF session_recording_chunk_buffer
         FOR VALUES FROM ('${hour.toISOString()}') TO ('${end.toISOString()}')`,
    );
    return true;
  }

  /** Whether a chunk whose bytes are in this partition still waits to be packed. */
  async partitionHasWaiting(name: string): Promise<boolean> {
    if (!hourOfPartition(name)) throw new Error(`not a chunk buffer partition: ${name}`);
    const [row] = await this.query<{ waiting: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${name} b JOIN session_recording_snapshots s
                         ON s.id = b.snapshot_id AND s.created_at = b.created_at
                      WHERE s.data IS NULL AND s.object_key IS NULL) AS waiting`,
    );
    return row.waiting;
  }

  /**
   * Drops the partition (its bytes are all packed or of deleted chunks). Dropping a partition takes an
   * exclusive lock on the buffer table, which capture's inserts wait for: at most 1 s, else it fails and is
   * retried later. (Detaching concurrently is not allowed with a default partition.)
   */
  async dropBufferPartition(name: string): Promise<void> {
    if (!hourOfPartition(name)) throw new Error(`not a chunk buffer partition: ${name}`);
    await this.query(`SET LOCAL lock_timeout = '1s'`);
    await this.query(`DROP TABLE ${name}`);
  }

  /**
   * Deletes the rows of the default partition (bytes that arrived when their hour's partition did not exist)
   * that no waiting chunk needs; how many. The only row deletes of the buffer, and rare. In batches of
   * CLEAN_DEFAULT_BATCH rows, each in a transaction of three statements (the buffer is local to the coordinator
   * on Citus, which refuses a statement reading it with the distributed chunks): the batch's rows, those of them
   * whose chunk still waits, the others deleted. A chunk and its buffer row are written in one transaction, so
   * a row read here has its chunk visible.
   */
  @GenerateSql()
  async cleanDefaultPartition(): Promise<number> {
    let deleted = 0;
    let after = '-1';
    for (;;) {
      const batch = await this.transaction(async () => {
        const rows = await this.query<{ id: string }>(
          `SELECT snapshot_id::text AS id FROM session_recording_chunk_buffer_default
            WHERE snapshot_id > $1::bigint ORDER BY snapshot_id LIMIT $2`,
          [after, CLEAN_DEFAULT_BATCH],
        );
        if (!rows.length) return { read: 0, last: after, deleted: 0 };
        const ids = rows.map((r) => r.id);
        const waiting = await this.query<{ id: string }>(
          `SELECT id::text AS id FROM session_recording_snapshots
            WHERE id = ANY($1::bigint[]) AND data IS NULL AND object_key IS NULL`,
          [ids],
        );
        const needed = new Set(waiting.map((r) => r.id));
        const unneeded = ids.filter((id) => !needed.has(id));
        const { affected } = unneeded.length
          ? await this.modify(
              `DELETE FROM session_recording_chunk_buffer_default WHERE snapshot_id = ANY($1::bigint[])`,
              [unneeded],
            )
          : { affected: 0 };
        return { read: rows.length, last: ids[ids.length - 1], deleted: affected };
      });
      deleted += batch.deleted;
      after = batch.last;
      if (batch.read < CLEAN_DEFAULT_BATCH) return deleted;
    }
  }

  /**
   * Up to `limit` chunks, in numeric id order after `afterId`, that are neither packed nor waiting to be: in
   * their row, or each in an object of its own. What `migrate-storage --to packed` moves.
   */
  @GenerateSql({ params: [30, '0', 100] })
  chunksToPack(defaultDays: number, afterId: string, limit: number): Promise<ChunkToMove[]> {
    return this.query<ChunkToMove>(
      `SELECT s.id::text AS id, s.team_id AS "teamId", s.session_id AS "sessionId", s.object_key AS "objectKey",
              s.object_offset::text AS "objectOffset", s.object_length AS "objectLength", s.encrypted,
              coalesce(p.session_recording_retention_period_days, $1::int) AS "retentionDays"
         FROM session_recording_snapshots s
         LEFT JOIN projects p ON p.id = s.team_id
        WHERE s.id > $2::bigint AND (s.data IS NOT NULL OR (s.object_key IS NOT NULL AND s.object_offset IS NULL))
        ORDER BY s.id
        LIMIT $3`,
      [defaultDays, afterId, limit],
    );
  }

  /** How many chunks are neither packed nor waiting to be (what `migrate-storage --to packed` would move). */
  @GenerateSql()
  async countNotPacked(): Promise<number> {
    const [row] = await this.query<{ n: string }>(
      `SELECT count(*) AS n FROM session_recording_snapshots
        WHERE data IS NOT NULL OR (object_key IS NOT NULL AND object_offset IS NULL)`,
    );
    return Number(row.n);
  }

  /**
   * Points chunks moved by `migrate-storage --to packed` at their ranges of `objectKey`: one whose bytes were
   * in its row only if the row still holds the bytes of the entry's SHA-256 (then dropped from the row), one
   * that was its own object only if it still points at `from` (that object). The ids moved.
   */
  @GenerateSql({
    params: ['rec/packed/2026-01-01/x', [{ id: '1', offset: 0, length: 1, sha256: '00', from: null }], true],
  })
  async movedToPacked(
    objectKey: string,
    entries: readonly (PackedEntry & { from: string | null })[],
    encrypted: boolean,
  ): Promise<Set<string>> {
    const { rows } = await this.modify<{ id: string }>(
      `UPDATE session_recording_snapshots s
          SET object_key = $1, object_offset = u.off, object_length = u.len, data = NULL, encrypted = $7
         FROM unnest($2::bigint[], $3::bigint[], $4::int[], $5::text[], $6::varchar[]) AS u(id, off, len, sha, src)
        WHERE s.id = u.id AND s.object_offset IS NULL
          AND (CASE WHEN u.src IS NULL THEN s.data IS NOT NULL AND sha256(s.data) = decode(u.sha, 'hex')
                    ELSE s.data IS NULL AND s.object_key = u.src END)
       RETURNING s.id::text AS id`,
      [
        objectKey,
        entries.map((e) => e.id),
        entries.map((e) => e.offset),
        entries.map((e) => e.length),
        entries.map((e) => e.sha256),
        entries.map((e) => e.from),
        encrypted,
      ],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Moves the bytes of up to `limit` chunks waiting to be packed from the buffer into their rows (`migrate-storage
   * --to postgres`); how many.
   */
  @GenerateSql({ params: [100] })
  async unbuffer(limit: number): Promise<number> {
    const { affected } = await this.modify(
      `UPDATE session_recording_snapshots s SET data = b.data
         FROM (SELECT id, created_at FROM session_recording_snapshots
                WHERE data IS NULL AND object_key IS NULL ORDER BY id LIMIT $1) w,
              session_recording_chunk_buffer b
        WHERE s.id = w.id AND b.created_at = w.created_at AND b.snapshot_id = w.id
          AND s.data IS NULL AND s.object_key IS NULL`,
      [limit],
    );
    return affected;
  }

  /** The retention periods (days) of the projects, with `defaultDays` for those that set none: one lifecycle rule each. */
  @GenerateSql({ params: [30] })
  async retentionPeriods(defaultDays: number): Promise<number[]> {
    const rows = await this.query<{ days: number }>(
      `SELECT DISTINCT coalesce(session_recording_retention_period_days, $1::int) AS days FROM projects
       UNION SELECT $1::int ORDER BY days`,
      [defaultDays],
    );
    return rows.map((r) => r.days);
  }
}

const HOUR_MS = 3_600_000;
const PARTITION_PREFIX = 'session_recording_chunk_buffer_p';

/** The name of the buffer partition of the hour starting at `hour` (UTC): `…_pYYYYMMDDHH`. */
export function partitionName(hour: Date): string {
  return PARTITION_PREFIX + hour.toISOString().slice(0, 13).replace(/[-T]/g, '');
}

/** The hour of a buffer partition's name, or null when the name is not one. */
export function hourOfPartition(name: string): Date | null {
  const m = /^session_recording_chunk_buffer_p(\d{4})(\d{2})(\d{2})(\d{2})$/.exec(name);
  if (!m) return null;
  const hour = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4])));
  return Number.isNaN(hour.getTime()) ? null : hour;
}
