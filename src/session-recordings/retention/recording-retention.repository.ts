import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../../database/generate-sql.js';
import { RepositoryBase } from '../../database/repository-base.js';
import { EXPIRED, startOfUtcDay } from '../session-recordings.repository.js';

const AT = new Date('2026-11-21T10:00:00.000Z');

/** The statements of the retention purge: plain SQL, pinned in test/sql. */
@Injectable()
export class RecordingRetentionRepository extends RepositoryBase {
  // ---- retention purge ------------------------------------------------------------------------------------
  // The purge works project by project (RecordingRetentionService.purgeProject): every statement on the
  // recordings names the one project as a parameter, so on Citus it is routed to that project's shard (a
  // statement reaching for expired recordings of every project at once could not be planned there, and would
  // lock rows on several shards in one statement).

  /** Up to `limit` project ids after `afterId`, in id order: the purge's walk over every project. */
  @GenerateSql({ params: [0, 1000] })
  async projectsAfter(afterId: number, limit: number): Promise<number[]> {
    const rows = await this.query<{ id: number }>(
      `SELECT id FROM projects WHERE id > $1 ORDER BY id LIMIT $2`,
      [afterId, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Up to `limit` expired recordings of the project at `now`, soft-deleted or not: a range of the list index
   * (live recordings) and of the soft-deleted index below the project's retention cutoff.
   */
  @GenerateSql({ params: (f) => [f.projectId, AT, 30, 500] })
  async expiredCandidates(teamId: number, now: Date, defaultDays: number, limit: number): Promise<string[]> {
    const rows = await this.query<{ sessionId: string }>(
      `(SELECT r.session_id AS "sessionId" FROM session_recordings r JOIN projects p ON p.id = $4
         WHERE r.team_id = $4 AND r.deleted_at IS NULL AND ${EXPIRED}
         LIMIT $1)
       UNION ALL
       (SELECT r.session_id AS "sessionId" FROM session_recordings r JOIN projects p ON p.id = $4
         WHERE r.team_id = $4 AND r.deleted_at IS NOT NULL AND ${EXPIRED}
         LIMIT $1)
       LIMIT $1`,
      [limit, startOfUtcDay(now), defaultDays, teamId],
    );
    return rows.map((r) => r.sessionId);
  }

  /**
   * Locks the project's recording counter until the transaction ends: the purge takes it before any recording,
   * as capture and DELETE do (counter, then recordings), because deleting recordings updates the counter (a
   * trigger) and the other order could deadlock with a capture.
   */
  @GenerateSql({ params: (f) => [f.projectId] })
  async lockCounter(teamId: number): Promise<void> {
    await this.query(`SELECT team_id FROM session_recording_counts WHERE team_id = $1 FOR UPDATE`, [teamId]);
  }

  /**
   * Of these recordings of the project, those still expired at `now`, locked FOR UPDATE; recordings another
   * transaction holds (a capture writing into them, a concurrent purge) are skipped, never waited for.
   */
  @GenerateSql({ params: (f) => [f.projectId, [f.sessionId], AT, 30] })
  async lockExpired(
    teamId: number,
    sessionIds: readonly string[],
    now: Date,
    defaultDays: number,
  ): Promise<string[]> {
    const rows = await this.query<{ sessionId: string }>(
      `SELECT r.session_id AS "sessionId"
         FROM session_recordings r
         JOIN projects p ON p.id = $1
        WHERE r.team_id = $1 AND r.session_id = ANY($4::varchar[])
          AND ${EXPIRED}
        ORDER BY r.session_id
          FOR UPDATE OF r SKIP LOCKED`,
      [teamId, startOfUtcDay(now), defaultDays, sessionIds],
    );
    return rows.map((r) => r.sessionId);
  }

  /**
   * Deletes the snapshot chunks of these recordings of the project; returns how many, and the keys of the objects no chunk is
   * left in (a packed object still holding other recordings' chunks is kept).
   */
  @GenerateSql({ params: (f) => [f.projectId, [f.sessionId]] })
  async deleteSnapshotsOf(
    teamId: number,
    sessionIds: readonly string[],
  ): Promise<{ chunks: number; objectKeys: string[] }> {
    // TypeORM answers a DELETE with [rows, affected].
    const [rows, affected] = (await this.manager.query(
      `DELETE FROM session_recording_snapshots s
        WHERE s.team_id = $1 AND s.session_id = ANY($2::varchar[])
       RETURNING s.object_key AS "objectKey"`,
      [teamId, sessionIds],
    )) as [{ objectKey: string | null }[], number];
    const deletedKeys = new Set<string>();
    for (const r of rows) if (r.objectKey !== null) deletedKeys.add(r.objectKey);
    if (!deletedKeys.size) return { chunks: affected, objectKeys: [] };
    // A packed object is deleted only once none of its chunks is left (other recordings' chunks share it, of
    // any project: the packer packs the oldest chunks of every project together, so this read is not routed).
    const live = await this.query<{ objectKey: string }>(
      `SELECT DISTINCT object_key AS "objectKey" FROM session_recording_snapshots
        WHERE object_key = ANY($1::varchar[])`,
      [[...deletedKeys]],
    );
    for (const r of live) deletedKeys.delete(r.objectKey);
    return { chunks: affected, objectKeys: [...deletedKeys] };
  }

  /**
   * Deletes these recordings of the project and their data keys (set-based, in the same statement: the keys' foreign key is
   * the project's); their event keys, views and sharing go with them (ON DELETE CASCADE) and the project
   * counters follow (trigger). Returns how many recordings were deleted.
   */
  @GenerateSql({ params: (f) => [f.projectId, [f.sessionId]] })
  async deleteRecordings(teamId: number, sessionIds: readonly string[]): Promise<number> {
    const [, affected] = (await this.manager.query(
      `WITH data_keys AS (
         DELETE FROM session_recording_keys k
          WHERE k.team_id = $1 AND k.session_id = ANY($2::varchar[]))
       DELETE FROM session_recordings r
        WHERE r.team_id = $1 AND r.session_id = ANY($2::varchar[])`,
      [teamId, sessionIds],
    )) as [unknown[], number];
    return affected;
  }
}
