import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../../database/generate-sql.js';
import { RepositoryBase } from '../../database/repository-base.js';

/** The statements that remove a deleted project's recordings (with RecordingRetentionRepository's deletes). */
@Injectable()
export class ProjectRecordingsRepository extends RepositoryBase {
  /**
   * Up to `limit` recordings of the project, soft-deleted or not, locked FOR UPDATE until the transaction ends
   * (taken after the project's recording counter, as the purge does).
   */
  @GenerateSql({ params: (f) => [f.projectId, 500] })
  async lockRecordingsOf(teamId: number, limit: number): Promise<string[]> {
    const rows = await this.query<{ sessionId: string }>(
      `SELECT session_id AS "sessionId" FROM session_recordings
        WHERE team_id = $1
        ORDER BY session_id
        LIMIT $2
          FOR UPDATE`,
      [teamId, limit],
    );
    return rows.map((r) => r.sessionId);
  }

  /** Turns off every public link of the project's recordings (their sharing stays until the recordings go). */
  @GenerateSql({ params: (f) => [f.projectId] })
  async disableSharingOf(teamId: number): Promise<void> {
    await this.query('UPDATE session_recording_sharing SET enabled = false WHERE team_id = $1 AND enabled', [
      teamId,
    ]);
  }
}
