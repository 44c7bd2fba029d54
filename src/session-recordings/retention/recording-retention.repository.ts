import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../../database/generate-sql.js';
import { RepositoryBase } from '../../database/repository-base.js';
import { EXPIRED, startOfUtcDay } from '../session-recordings.repository.js';

/** A recording's key. */
export interface RecordingKey {
  teamId: number;
  sessionId: string;
}

const AT = new Date('2026-11-21T10:00:00.000Z');

/** The statements of the retention purge: plain SQL, pinned in test/sql. */
@Injectable()
export class RecordingRetentionRepository extends RepositoryBase {
  // ---- retention purge ------------------------------------------------------------------------------------
  // One purge transaction (RecordingRetentionService.purgeBatch): candidates, then the projects' counters, then
  // the recordings with SKIP LOCKED, then their chunks and the recordings themselves.

  /**
   * Up to `limit` expired recordings at `now`, soft-deleted or not, unlocked: for every project, a range of the
   * list index (live recordings) and of the soft-deleted index below its retention cutoff.
   */
  @GenerateSql({ params: [AT, 30, 500] })
  expiredCandidates(now: Date, defaultDays: number, limit: number): Promise<RecordingKey[]> {
    return this.query<RecordingKey>(
      `SELECT c.team_id AS "teamId", c.session_id AS "sessionId"
         FROM projects p
        CROSS JOIN LATERAL (
              (SELECT r.team_id, r.session_id FROM session_recordings r
                WHERE r.team_id = p.id AND r.deleted_at IS NULL AND ${EXPIRED}
                LIMIT $1)
              UNION ALL
              (SELECT r.team_id, r.session_id FROM session_recordings r
                WHERE r.team_id = p.id AND r.deleted_at IS NOT NULL AND ${EXPIRED}
                LIMIT $1)
        ) c
        LIMIT $1`,
      [limit, startOfUtcDay(now), defaultDays],
    );
  }

  /**
   * Locks the recording counters of these projects, in project order, until the transaction ends: the purge
   * takes them before any recording, as capture and DELETE do (counter, then recordings), because deleting
   * recordings updates the counter (a trigger) and the other order could deadlock with a capture.
   */
  @GenerateSql({ params: (f) => [[f.projectId]] })
  async lockCounters(teamIds: readonly number[]): Promise<void> {
    await this.query(
      `SELECT team_id FROM session_recording_counts
        WHERE team_id = ANY($1::int[])
        ORDER BY team_id
          FOR UPDATE`,
      [teamIds],
    );
  }

  /**
   * Of these recordings, those still expired at `now`, locked FOR UPDATE; recordings another transaction holds
   * (a capture writing into them, a concurrent purge) are skipped, never waited for.
   */
  @GenerateSql({ params: (f) => [[{ teamId: f.projectId, sessionId: f.sessionId }], AT, 30] })
  lockExpired(keys: readonly RecordingKey[], now: Date, defaultDays: number): Promise<RecordingKey[]> {
    return this.query<RecordingKey>(
      `SELECT r.team_id AS "teamId", r.session_id AS "sessionId"
         FROM session_recordings r
         JOIN projects p ON p.id = r.team_id
        WHERE (r.team_id, r.session_id) IN (SELECT * FROM unnest($1::int[], $4::varchar[]))
          AND ${EXPIRED}
        ORDER BY r.team_id, r.session_id
          FOR UPDATE OF r SKIP LOCKED`,
      [keys.map((k) => k.teamId), startOfUtcDay(now), defaultDays, keys.map((k) => k.sessionId)],
    );
  }

  /**
   * Deletes the snapshot chunks of these recordings; returns how many, and the keys of the objects no chunk is
   * left in (a packed object still holding other recordings' chunks is kept).
   */
  @GenerateSql({ params: (f) => [[{ teamId: f.projectId, sessionId: f.sessionId }]] })
  async deleteSnapshotsOf(keys: readonly RecordingKey[]): Promise<{ chunks: number; objectKeys: string[] }> {
    // TypeORM answers a DELETE with [rows, affected].
    const [rows, affected] = (await this.manager.query(
      `DELETE FROM session_recording_snapshots s
        USING unnest($1::int[], $2::varchar[]) AS d(team_id, session_id)
        WHERE s.team_id = d.team_id AND s.session_id = d.session_id
       RETURNING s.object_key AS "objectKey"`,
      [keys.map((k) => k.teamId), keys.map((k) => k.sessionId)],
    )) as [{ objectKey: string | null }[], number];
    const deletedKeys = new Set<string>();
    for (const r of rows) if (r.objectKey !== null) deletedKeys.add(r.objectKey);
    if (!deletedKeys.size) return { chunks: affected, objectKeys: [] };
    // A packed object is deleted only once none of its chunks is left (other recordings' chunks share it).
    const live = await this.query<{ objectKey: string }>(
      `SELECT DISTINCT object_key AS "objectKey" FROM session_recording_snapshots
        WHERE object_key = ANY($1::varchar[])`,
      [[...deletedKeys]],
    );
    for (const r of live) deletedKeys.delete(r.objectKey);
    return { chunks: affected, objectKeys: [...deletedKeys] };
  }

  /**
   * Deletes these recordings and their data keys (set-based, in the same statement: the keys' foreign key is
   * the project's); their event keys, views and sharing go with them (ON DELETE CASCADE) and the project
   * counters follow (trigger). Returns how many recordings were deleted.
   */
  @GenerateSql({ params: (f) => [[{ teamId: f.projectId, sessionId: f.sessionId }]] })
  async deleteRecordings(keys: readonly RecordingKey[]): Promise<number> {
    const [, affected] = (await this.manager.query(
      `WITH data_keys AS (
         DELETE FROM session_recording_keys k
          USING unnest($1::int[], $2::varchar[]) AS d(team_id, session_id)
          WHERE k.team_id = d.team_id AND k.session_id = d.session_id)
       DELETE FROM session_recordings r
        USING unnest($1::int[], $2::varchar[]) AS d(team_id, session_id)
        WHERE r.team_id = d.team_id AND r.session_id = d.session_id`,
      [keys.map((k) => k.teamId), keys.map((k) => k.sessionId)],
    )) as [unknown[], number];
    return affected;
  }
}
