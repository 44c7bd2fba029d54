import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../../database/generate-sql.js';
import { RepositoryBase } from '../../database/repository-base.js';

/** A chunk to move between backends: where it belongs, without its bytes. */
export interface ChunkToMove {
  id: string;
  teamId: number;
  sessionId: string;
  objectKey: string | null;
}

/** How many chunks each backend holds. */
export interface StorageCounts {
  inDatabase: number;
  inObjectStore: number;
}

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
      `SELECT id::text AS id, team_id AS "teamId", session_id AS "sessionId", object_key AS "objectKey"
         FROM session_recording_snapshots
        WHERE id > $1::bigint AND (CASE WHEN $2::boolean THEN data IS NOT NULL ELSE data IS NULL END)
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
      `UPDATE session_recording_snapshots SET data = $3, object_key = NULL
        WHERE id = $1::bigint AND object_key = $2
        RETURNING encode(sha256(data), 'hex') AS sha256`,
      [id, objectKey, data],
    );
    return rows[0]?.sha256 ?? null;
  }

  /** How many chunks each backend holds. */
  @GenerateSql()
  async counts(): Promise<StorageCounts> {
    const [row] = await this.query<{ inDatabase: string; inObjectStore: string }>(
      `SELECT count(*) FILTER (WHERE data IS NOT NULL) AS "inDatabase",
              count(*) FILTER (WHERE data IS NULL) AS "inObjectStore"
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
}
