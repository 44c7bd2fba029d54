import { Injectable } from '@nestjs/common';
import { GenerateSql } from '../../database/generate-sql.js';
import { RepositoryBase } from '../../database/repository-base.js';
import { NOT_EXPIRED, RETENTION_DAYS, startOfUtcDay } from '../session-recordings.repository.js';

/** The sharing configuration of a recording. */
export interface RecordingSharing {
  teamId: number;
  sessionId: string;
  accessToken: string;
  enabled: boolean;
  settings: Record<string, boolean> | null;
  createdAt: Date;
}

/** The select list of RecordingSharing (the table's columns, aliased to the read model's names). */
const SHARING_COLUMNS =
  'team_id AS "teamId", session_id AS "sessionId", access_token AS "accessToken", enabled, settings, ' +
  'created_at AS "createdAt"';

/** A recording shared by an enabled token, with its project's retention in days and the link's issuer. */
export interface SharedRecording {
  teamId: number;
  sessionId: string;
  retentionDays: number;
  /** Who enabled the sharing or issued the link (null: before this was kept, or the user was deleted). */
  enabledById: number | null;
}

const AT = new Date('2026-11-21T10:00:00.000Z');

/** The sharing rows of recordings: plain SQL, pinned in test/sql. */
@Injectable()
export class RecordingSharingRepository extends RepositoryBase {
  // ---- sharing --------------------------------------------------------------------------------------------

  /** The sharing row of a recording, created (disabled, with `token`) when missing; race-safe. */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, 'token', AT] })
  async findOrCreateSharing(
    teamId: number,
    sessionId: string,
    token: string,
    now: Date,
  ): Promise<RecordingSharing> {
    const inserted = await this.query<RecordingSharing>(
      `INSERT INTO session_recording_sharing (team_id, session_id, access_token, enabled, created_at)
       VALUES ($1, $2, $3, false, $4)
       ON CONFLICT (team_id, session_id) DO NOTHING
       RETURNING ${SHARING_COLUMNS}`,
      [teamId, sessionId, token, now],
    );
    if (inserted.length) {
      await this.recordToken(teamId, token);
      return inserted[0];
    }
    const rows = await this.query<RecordingSharing>(
      `SELECT ${SHARING_COLUMNS} FROM session_recording_sharing
        WHERE team_id = $1 AND session_id = $2`,
      [teamId, sessionId],
    );
    return rows[0];
  }

  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, { enabled: true, enabledById: f.userId }] })
  async updateSharing(
    teamId: number,
    sessionId: string,
    changes: {
      enabled?: boolean;
      accessToken?: string;
      settings?: Record<string, boolean> | null;
      /** The user who enabled the sharing or issued the new link (`enabled_by_id`); left as is when undefined. */
      enabledById?: number;
    },
  ): Promise<RecordingSharing | null> {
    const { rows } = await this.modify<RecordingSharing>(
      `UPDATE session_recording_sharing
          SET enabled = coalesce($3, enabled), access_token = coalesce($4, access_token),
              settings = CASE WHEN $5 THEN $6::jsonb ELSE settings END,
              enabled_by_id = coalesce($7::int, enabled_by_id)
        WHERE team_id = $1 AND session_id = $2
        RETURNING ${SHARING_COLUMNS}`,
      [
        teamId,
        sessionId,
        changes.enabled ?? null,
        changes.accessToken ?? null,
        changes.settings !== undefined,
        changes.settings === undefined || changes.settings === null ? null : JSON.stringify(changes.settings),
        changes.enabledById ?? null,
      ],
    );
    if (rows[0] && changes.accessToken !== undefined) await this.recordToken(teamId, changes.accessToken);
    return rows[0] ?? null;
  }

  /**
   * Records the project a token was issued in (`session_recording_sharing_tokens`). A token issued before, in any
   * project, is a unique violation: the caller retries with another token (`withFreshToken`), so tokens stay unique
   * across projects also on Citus, where the sharing's own key includes the project.
   */
  @GenerateSql({ params: (f) => [f.projectId, 'token'] })
  async recordToken(teamId: number, accessToken: string): Promise<void> {
    await this.query(`INSERT INTO session_recording_sharing_tokens (access_token, team_id) VALUES ($1, $2)`, [
      accessToken,
      teamId,
    ]);
  }

  /**
   * The enabled sharing of a recording that is neither deleted nor expired at `now` (by its project's retention,
   * `defaultDays` when the project sets none), by its token, with the project's retention in days. Two
   * statements: the token's project, then the sharing of that project.
   */
  @GenerateSql({ params: (f) => [f.accessToken, AT, 30] })
  async findEnabledSharing(
    accessToken: string,
    now: Date,
    defaultDays: number,
  ): Promise<SharedRecording | null> {
    // The project first (a reference table on Citus), then the sharing and the recording naming it: routed to
    // the project's shard rather than asked of every shard.
    const [token] = await this.query<{ teamId: number }>(
      `SELECT team_id AS "teamId" FROM session_recording_sharing_tokens WHERE access_token = $1`,
      [accessToken],
    );
    if (!token) return null;
    const rows = await this.query<SharedRecording>(
      `SELECT s.team_id AS "teamId", s.session_id AS "sessionId", ${RETENTION_DAYS} AS "retentionDays",
              s.enabled_by_id AS "enabledById"
         FROM session_recording_sharing s
         JOIN session_recordings r ON r.team_id = $4 AND r.session_id = s.session_id
         JOIN projects p ON p.id = $4
        WHERE s.team_id = $4 AND s.access_token = $1 AND s.enabled AND r.deleted_at IS NULL AND ${NOT_EXPIRED}`,
      [accessToken, startOfUtcDay(now), defaultDays, token.teamId],
    );
    return rows[0] ?? null;
  }
}
