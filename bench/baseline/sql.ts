/**
 * The statements the service issues for the bench's routes, as text. They are copied, not imported: the
 * baseline must not depend on the service's code. The bench checks, through pg_stat_statements, that both sides
 * run the same statements per request, so a change in the service that is not mirrored here is reported.
 */

export const KEY_BY_DIGEST = `SELECT k.id, k.user_id, u.uuid AS user_uuid, k.scopes, k.scoped_organizations, k.scoped_teams, k.last_used_at
         FROM personal_api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.secure_value = $1 AND k.revoked_at IS NULL`;

export const TOUCH_KEY = `WITH k AS (
         UPDATE personal_api_keys SET last_used_at = $3
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3::timestamptz - interval '1 hour')
          RETURNING id)
       UPDATE users SET last_login = $3
        WHERE id = $2 AND EXISTS (SELECT 1 FROM k)
          AND (last_login IS NULL OR last_login < $3::timestamptz)`;

export const MEMBERSHIP_LEVEL =
  'SELECT level FROM organization_memberships WHERE user_id = $1 AND organization_id = $2';

const ORGANIZATION_SELECT = `
  SELECT o.id, o.name, o.slug, o.logo_media_id, o.created_at, o.updated_at, o.plugins_access_level,
         o.available_product_features, o.is_member_join_email_enabled, o.enforce_2fa, o.customer_id,
         o.members_can_invite, o.members_can_use_personal_api_keys, o.allow_publicly_shared_resources,
         o.is_ai_data_processing_approved, o.default_anonymize_ips, o.default_experiment_stats_method,
         m.level AS membership_level,
         (SELECT count(*) FROM organization_memberships c WHERE c.organization_id = o.id)::text AS member_count,
         COALESCE((SELECT json_agg(json_build_object('id', p.id, 'uuid', p.uuid, 'organization', p.organization_id,
                                                     'api_token', p.api_token, 'name', p.name, 'timezone', p.timezone)
                                   ORDER BY p.id)
                     FROM projects p WHERE p.organization_id = o.id), '[]'::json) AS teams
    FROM organizations o
    JOIN organization_memberships m ON m.organization_id = o.id AND m.user_id = $1`;

export const ORGANIZATIONS_PAGE = `${ORGANIZATION_SELECT}
          WHERE ($2::uuid[] IS NULL OR o.id = ANY($2::uuid[]))
          ORDER BY o.created_at, o.id
          LIMIT $3 OFFSET $4`;

export const ORGANIZATIONS_COUNT = `SELECT count(*)::int AS total FROM organization_memberships
          WHERE user_id = $1 AND ($2::uuid[] IS NULL OR organization_id = ANY($2::uuid[]))`;

export const ORGANIZATION_VIEW = `${ORGANIZATION_SELECT} WHERE o.id = $2`;

const BATCH_EXPORTS_FILTER =
  'organization_id = $1 AND deleted_at IS NULL AND ($2::int[] IS NULL OR team_id = ANY($2::int[]))';

export const BATCH_EXPORTS_PAGE = `SELECT id, organization_id, team_id, name, model, destination_type, destination_config, interval, paused,
         last_paused_at, start_at, end_at, hogql_query, filters, destination_integration_id, scheduled_through,
         created_at, last_updated_at, deleted_at
    FROM batch_exports WHERE ${BATCH_EXPORTS_FILTER}
   ORDER BY created_at DESC, id ASC LIMIT $3 OFFSET $4`;

export const BATCH_EXPORTS_COUNT = `SELECT count(*)::int AS total FROM batch_exports WHERE ${BATCH_EXPORTS_FILTER}`;

export const LATEST_RUNS = `SELECT r.*
         FROM unnest($1::uuid[]) AS x(id)
         CROSS JOIN LATERAL (
           SELECT * FROM batch_export_runs
            WHERE batch_export_id = x.id
            ORDER BY created_at DESC, data_interval_end DESC, id DESC
            LIMIT $2
         ) r`;

export const MEMBER_EMAILS = `SELECT lower(u.email) AS email
         FROM organization_memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = $1 AND lower(u.email) = ANY($2::text[])`;

export const BEGIN = 'START TRANSACTION';
export const COMMIT = 'COMMIT';
export const ROLLBACK = 'ROLLBACK';

// The invite statements are the ORM's (the service writes invites through TypeORM's query builder/repository).
/** Per-address transaction locks in one global order (InvitesRepository#lockAddresses), the same text. */
export const INVITE_LOCK_SPACE = 727_274_003;
export const INVITE_LOCK_ADDRESSES = `SELECT pg_advisory_xact_lock($1::int, k)
         FROM (SELECT DISTINCT hashtext($2::text || '/' || lower(e)) AS k
                 FROM unnest($3::text[]) AS e
                ORDER BY k) AS keys`;

export const INVITE_DELETE_FOR_EMAIL =
  'DELETE FROM "organization_invites" WHERE "organization_id" = $1 AND lower("target_email") = lower($2)';

export const INVITE_INSERT = `INSERT INTO "organization_invites"("id", "organization_id", "target_email", "first_name", "level", "message", "private_project_access", "send_email", "emailing_attempt_made", "created_by_id", "created_at", "updated_at") VALUES (DEFAULT, $1, $2, $3, $4, $5, $6, $7, DEFAULT, $8, $9, $10) RETURNING "id", "first_name", "level", "private_project_access", "send_email", "emailing_attempt_made"`;

const inviteColumn = (c: string) => `"InviteEntity"."${c}" AS "InviteEntity_${c}"`;
const creatorColumn = (c: string) =>
  `"InviteEntity__InviteEntity_createdBy"."${c}" AS "InviteEntity__InviteEntity_createdBy_${c}"`;

export const INVITE_WITH_CREATOR = `SELECT ${[
  'id',
  'organization_id',
  'target_email',
  'first_name',
  'level',
  'message',
  'private_project_access',
  'send_email',
  'emailing_attempt_made',
  'created_by_id',
  'created_at',
  'updated_at',
]
  .map(inviteColumn)
  .join(', ')}, ${[
  'id',
  'uuid',
  'email',
  'distinct_id',
  'first_name',
  'last_name',
  'is_email_verified',
  'hedgehog_config',
  'last_login',
  'created_at',
]
  .map(creatorColumn)
  .join(
    ', ',
  )} FROM "organization_invites" "InviteEntity" LEFT JOIN "users" "InviteEntity__InviteEntity_createdBy" ON "InviteEntity__InviteEntity_createdBy"."id"="InviteEntity"."created_by_id" WHERE (("InviteEntity"."id" IN ($1)))`;

// ---------------------------------------------------------------------------------------------- recordings

export const PROJECT_BY_ID =
  'SELECT id, uuid, organization_id, name, api_token, timezone, session_recording_opt_in, ' +
  'session_recording_retention_period_days, created_at FROM projects WHERE id = $1';

const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

const RECORDING_COLUMNS = `
  r.session_id, r.distinct_id,
  ${epochMs('r.start_time')} AS start_ms, ${epochMs('r.end_time')} AS end_ms, r.active_ms::float8 AS active_ms,
  r.click_count, r.keypress_count, r.mouse_activity_count,
  r.console_log_count, r.console_warn_count, r.console_error_count,
  r.start_url, r.snapshot_source, ${epochMs('r.last_event_received_at')} AS last_event_ms,
  EXISTS (SELECT 1 FROM session_recording_views v
           WHERE v.team_id = r.team_id AND v.session_id = r.session_id AND v.user_id = $2::int) AS viewed,
  ARRAY(SELECT u.email FROM session_recording_views v JOIN users u ON u.id = v.user_id
         WHERE $2::int IS NOT NULL AND v.team_id = r.team_id AND v.session_id = r.session_id
           AND v.user_id <> $2::int
         ORDER BY v.viewed_at, v.user_id LIMIT 100) AS viewers,
  p.id AS person_id, p.uuid AS person_uuid, p.properties AS person_properties,
    (extract(epoch FROM p.created_at) * 1000)::float8 AS person_created_ms,
    (SELECT array_agg(pd.distinct_id ORDER BY pd.id) FROM person_distinct_ids pd WHERE pd.person_id = p.id)
      AS person_distinct_ids`;

/**
 * The unfiltered list (the bench sends no filter): page, persons, viewed flags and the counter's total less the
 * recordings past the retention cutoff ($5) not purged yet.
 */
export const RECORDINGS_PAGE = `
SELECT coalesce(greatest((SELECT c.recordings FROM session_recording_counts c WHERE c.team_id = $1) - (SELECT count(*) FROM session_recordings r WHERE r.team_id = $1 AND r.deleted_at IS NULL AND r.start_time < $5::timestamptz), 0), 0)::float8 AS total, page.*
  FROM (SELECT 1) AS one
  LEFT JOIN LATERAL (
    SELECT ${RECORDING_COLUMNS}
      FROM session_recordings r
      LEFT JOIN persons p ON p.id = r.person_id
     WHERE r.team_id = $1 AND r.deleted_at IS NULL AND r.start_time >= $5::timestamptz
     ORDER BY r.start_time DESC, r.session_id
     LIMIT $3 OFFSET $4
  ) AS page ON true
 ORDER BY page.start_ms DESC, page.session_id`;

/**
 * The recording access rules that hide recordings from the caller (none for the bench's owner): the service asks
 * them on every read of recordings.
 */
export const HIDING_RULES = `SELECT ar.kind, ar.url_pattern AS "urlPattern", ar.property_key AS "propertyKey",
              ar.property_operator AS "propertyOperator", ar.property_value AS "propertyValue"
         FROM recording_access_rules ar
        WHERE ar.team_id = $1
          AND NOT EXISTS (SELECT 1 FROM projects t
                            JOIN organization_memberships m ON m.organization_id = t.organization_id
                           WHERE t.id = $1 AND m.user_id = $2::int AND m.level >= 8)
          AND NOT EXISTS (SELECT 1 FROM recording_access_rule_roles rr
                            JOIN role_memberships rm ON rm.role_id = rr.role_id
                           WHERE rr.rule_id = ar.id AND rm.user_id = $2::int)
        ORDER BY ar.created_at, ar.id`;

export const RECORDING_BY_ID = `SELECT ${RECORDING_COLUMNS}
         FROM session_recordings r
         LEFT JOIN persons p ON p.id = r.person_id
        WHERE r.team_id = $1 AND r.session_id = $3 AND r.deleted_at IS NULL AND r.start_time >= $4`;

// ---- capture (POST /s/) ------------------------------------------------------------------------------------

export const PROJECT_BY_TOKEN =
  'SELECT projects.id, projects.uuid, projects.organization_id, projects.name, projects.api_token, projects.timezone, projects.session_recording_opt_in, projects.created_at FROM projects WHERE api_token = $1';

export const EXISTING_SESSIONS = `SELECT session_id, deleted_at IS NOT NULL AS deleted FROM session_recordings
        WHERE team_id = $1 AND session_id = ANY($2::varchar[])`;

export const PERSON_IDS_BY_DISTINCT_ID =
  'SELECT distinct_id, person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = ANY($2::text[])';

export const INSERT_PERSON = `INSERT INTO persons (team_id, properties, created_at) VALUES ($1, '{}'::jsonb, $2) RETURNING id`;

export const INSERT_DISTINCT_ID =
  'INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)';

export const LOCK_COUNTER = `INSERT INTO session_recording_counts (team_id, recordings) VALUES ($1, 0)
       ON CONFLICT (team_id) DO UPDATE SET recordings = session_recording_counts.recordings`;

export const INSERT_RECORDINGS = `INSERT INTO session_recordings
              (team_id, session_id, distinct_id, person_id, start_time, end_time, snapshot_source,
               created_at, last_event_received_at)
       SELECT $1, s.session_id, s.distinct_id, s.person_id, s.start_time, s.end_time, s.snapshot_source, $2, $2
         FROM unnest($3::varchar[], $4::varchar[], $5::int[], $6::timestamptz[], $7::timestamptz[], $8::varchar[])
              WITH ORDINALITY AS s(session_id, distinct_id, person_id, start_time, end_time, snapshot_source, n)
        ORDER BY s.n
       ON CONFLICT (team_id, session_id) DO NOTHING`;

export const LOCK_SESSIONS = `SELECT session_id, deleted_at IS NOT NULL AS deleted, event_count, snapshot_bytes
           FROM session_recordings
          WHERE team_id = $1 AND session_id = ANY($2::varchar[])
          ORDER BY session_id
            FOR NO KEY UPDATE`;

export const INSERT_EVENT_KEYS = `INSERT INTO session_recording_event_keys (team_id, session_id, event_key)
         SELECT $1, $2, k FROM unnest($3::varchar[]) AS k
         ON CONFLICT DO NOTHING
         RETURNING event_key`;

export const ADD_METADATA = `UPDATE session_recordings SET
              start_time = least(start_time, $3),
              end_time = greatest(end_time, $4),
              click_count = click_count + $5,
              keypress_count = keypress_count + $6,
              mouse_activity_count = mouse_activity_count + $7,
              console_log_count = console_log_count + $8,
              console_warn_count = console_warn_count + $9,
              console_error_count = console_error_count + $10,
              active_ms = active_ms + $11,
              event_count = event_count + $12,
              start_url = CASE WHEN $13::text IS NOT NULL AND (start_url_time IS NULL OR $14 < start_url_time)
                               THEN $13 ELSE start_url END,
              start_url_time = CASE WHEN $13::text IS NOT NULL AND (start_url_time IS NULL OR $14 < start_url_time)
                                    THEN $14 ELSE start_url_time END,
              last_event_received_at = greatest(last_event_received_at, $15),
              snapshot_bytes = snapshot_bytes + $16
        WHERE team_id = $1 AND session_id = $2`;

/** Chunk rows: gzip bytes in `data` (RECORDING_STORAGE=postgres), or the key of their object in the bucket (s3). */
export const INSERT_SNAPSHOTS = `INSERT INTO session_recording_snapshots
              (team_id, session_id, window_id, first_timestamp, last_timestamp, event_count, data, object_key,
               created_at)
       SELECT $1, c.session_id, c.window_id, c.first_timestamp, c.last_timestamp, c.event_count, c.data,
              c.object_key, $2
         FROM unnest($3::varchar[], $4::varchar[], $5::timestamptz[], $6::timestamptz[], $7::int[], $8::bytea[],
                     $9::varchar[])
              AS c(session_id, window_id, first_timestamp, last_timestamp, event_count, data, object_key)`;

// ---- event capture (POST /e/) -----------------------------------------------------------------------------

export const RESOLVE_PERSONS = `WITH wanted AS MATERIALIZED (
         SELECT w.distinct_id, w.ord, pd.person_id
           FROM unnest($2::text[]) WITH ORDINALITY AS w(distinct_id, ord)
           LEFT JOIN person_distinct_ids pd ON pd.team_id = $1 AND pd.distinct_id = w.distinct_id
       ), input AS MATERIALIZED (
         SELECT distinct_id, ord, gen_random_uuid() AS uuid FROM wanted WHERE person_id IS NULL
       ), p AS (
         INSERT INTO persons (team_id, uuid, properties, created_at)
         SELECT $1, input.uuid, '{}'::jsonb, $3 FROM input ORDER BY input.ord
         RETURNING id, uuid
       ), d AS (
         INSERT INTO person_distinct_ids (team_id, distinct_id, person_id)
         SELECT $1, input.distinct_id, p.id FROM input JOIN p ON p.uuid = input.uuid ORDER BY input.ord
         ON CONFLICT (team_id, distinct_id) DO NOTHING
         RETURNING person_id
       )
       SELECT w.distinct_id, w.person_id AS id, pe.uuid, true AS kept
         FROM wanted w JOIN persons pe ON pe.id = w.person_id
       UNION ALL
       SELECT input.distinct_id, p.id, p.uuid, d.person_id IS NOT NULL
         FROM input JOIN p ON p.uuid = input.uuid LEFT JOIN d ON d.person_id = p.id`;

export const PERSONS_BY_DISTINCT_ID = `SELECT pd.distinct_id, p.id, p.uuid FROM person_distinct_ids pd JOIN persons p ON p.id = pd.person_id
        WHERE pd.team_id = $1 AND pd.distinct_id = ANY($2::text[])`;

export const DELETE_PERSONS = 'DELETE FROM persons WHERE id = ANY($1::int[])';
export const REASSIGN_RECORDINGS = 'UPDATE session_recordings SET person_id = $2 WHERE person_id = $1';
export const MERGE_DISTINCT_IDS = 'UPDATE person_distinct_ids SET person_id = $2 WHERE person_id = $1';
export const MERGE_PROPERTIES = `UPDATE persons SET properties = coalesce((SELECT properties FROM persons WHERE id = $1), '{}'::jsonb) || properties WHERE id = $2`;
export const DELETE_PERSON = 'DELETE FROM persons WHERE id = $1';

export const LOCK_PERSON_PROPERTIES = `SELECT CASE WHEN octet_length(t.text) <= $2 THEN t.text END AS properties,
              octet_length(t.text) AS rendered_bytes
         FROM persons p CROSS JOIN LATERAL (SELECT p.properties::text AS text) t
        WHERE p.id = $1
          FOR UPDATE OF p`;

export const REPLACE_PERSON_PROPERTIES = 'UPDATE persons SET properties = $2::jsonb WHERE id = $1';

export const INSERT_EVENTS = `WITH inserted AS (
         INSERT INTO events (team_id, uuid, event, distinct_id, person_id, properties, "timestamp", elements_chain,
           session_id, window_id, "set", set_once)
         SELECT $1, r.uuid::uuid, r.event, r.distinct_id, r.person_id::uuid, r.properties, r."timestamp"::timestamptz,
                r.elements_chain, r.session_id, r.window_id, nullif(r."set", 'null'::jsonb),
                nullif(r.set_once, 'null'::jsonb)
           FROM ROWS FROM (jsonb_array_elements_text($2::jsonb), jsonb_array_elements_text($3::jsonb),
                  jsonb_array_elements_text($4::jsonb), jsonb_array_elements_text($5::jsonb),
                  jsonb_array_elements($6::jsonb), jsonb_array_elements_text($7::jsonb),
                  jsonb_array_elements_text($8::jsonb), jsonb_array_elements_text($9::jsonb),
                  jsonb_array_elements_text($10::jsonb), jsonb_array_elements($11::jsonb),
                  jsonb_array_elements($12::jsonb))
             AS r(uuid, event, distinct_id, person_id, properties, "timestamp", elements_chain, session_id, window_id,
                  "set", set_once)
         ON CONFLICT DO NOTHING
         RETURNING 1
       ), marked AS (
         UPDATE projects SET ingested_event = true
          WHERE $13::boolean AND id = $1 AND NOT ingested_event AND EXISTS (SELECT 1 FROM inserted)
       )
       SELECT count(*)::int AS n FROM inserted`;
