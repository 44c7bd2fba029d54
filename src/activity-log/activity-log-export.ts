import { insertedAtSql, readByWatermarkSql } from '../stores/export-cursor.js';
import { type ExportModel, rangeParams } from '../stores/export-model.js';

/**
 * The activity log: every entry of the project inserted within the run's interval or committed late
 * (export-cursor.ts: `created_at` and `write_xid`), oldest first, with its user's uuid and e-mail.
 */
const ACTIVITY_LOG_SQL = `
  SELECT a.id::text AS id, a.team_id, a.organization_id::text AS organization_id, u.uuid::text AS user_uuid,
         u.email AS user_email, a.is_system, a.api_key_id, host(a.ip) AS ip, a.activity, a.scope, a.item_id,
         a.detail, a.created_at, ${insertedAtSql('a.created_at')} AS _inserted_at
    FROM activity_logs a
    LEFT JOIN users u ON u.id = a.user_id
   WHERE a.team_id = $1 AND ${readByWatermarkSql('a', 'created_at')}
   ORDER BY a.created_at, a.id`;

/**
 * The activity log: one row per entry of the project's log (docs/security.md), read by its insert (`created_at`,
 * the writing transaction's start) and transaction id (`write_xid`, export-cursor.ts); merged on (team_id, id),
 * never replaced (entries do not change). `detail` is PostHog's (secrets already masked); `user_uuid` and
 * `user_email` who made it (null for the system).
 */
export const ACTIVITY_LOG_MODEL: ExportModel = {
  name: 'activity_log',
  columns: [
    { name: 'id', kind: 'text' },
    { name: 'team_id', kind: 'integer' },
    { name: 'organization_id', kind: 'text' },
    { name: 'user_uuid', kind: 'text' },
    { name: 'user_email', kind: 'text' },
    { name: 'is_system', kind: 'boolean' },
    { name: 'api_key_id', kind: 'text' },
    { name: 'ip', kind: 'text' },
    { name: 'activity', kind: 'text' },
    { name: 'scope', kind: 'text' },
    { name: 'item_id', kind: 'text' },
    { name: 'detail', kind: 'json' },
    { name: 'created_at', kind: 'timestamp' },
    { name: '_inserted_at', kind: 'timestamp' },
  ],
  key: ['team_id', 'id'],
  versionColumns: [],
  rowNoun: 'activity log entry',
  recordingVisibility: false,
  statement: (range) => ({ sql: ACTIVITY_LOG_SQL, params: rangeParams(range) }),
  row: (row) => row,
};
