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

/** MembershipsRepository.accessOf: the level, and whether a key restricted to projects holds one there. */
export const ACCESS_OF = `SELECT m.level,
       ($3::bigint[] IS NULL OR EXISTS (
          SELECT 1 FROM projects p
           WHERE p.organization_id = m.organization_id AND p.id = ANY($3::bigint[]) AND p.deleted_at IS NULL
       )) AS holds_project
  FROM organization_memberships m
 WHERE m.user_id = $1 AND m.organization_id = $2`;

/** SQL: the ids of the roles the membership `m` holds. */
const ROLES_OF_M = 'SELECT rm.role_id FROM role_memberships rm WHERE rm.organization_member_id = m.id';

/** The rules of project `p` that apply to member `m`, as `[resource, resource_id, level, subject]` (the access statement). */
const ACCESS_RULES = `CASE WHEN m.id IS NULL OR m.level >= 8 THEN '[]'::json
  ELSE COALESCE((SELECT json_agg(json_build_array(r.resource, r.resource_id, r.access_level, r.subject)) FROM (
    SELECT a.resource, a.resource_id, a.access_level, 'member' AS subject FROM access_controls a
     WHERE a.organization_member_id = m.id AND a.team_id = p.id
    UNION ALL
    SELECT a.resource, a.resource_id, a.access_level, 'role' FROM access_controls a
     WHERE a.role_id IN (${ROLES_OF_M}) AND a.team_id = p.id
    UNION ALL
    SELECT a.resource, a.resource_id, a.access_level, 'default' FROM access_controls a
     WHERE a.team_id = p.id AND a.organization_member_id IS NULL AND a.role_id IS NULL) r), '[]'::json)
END`;

/** Whether member `m` may see project `p` (the organization answers list only those). */
const PROJECT_VISIBLE = `(m.level >= 8 OR (
  SELECT COALESCE(
           bool_or(a.access_level <> 'none') FILTER (WHERE a.organization_member_id IS NOT NULL OR a.role_id IS NOT NULL),
           bool_or(a.access_level <> 'none'),
           true)
    FROM access_controls a
   WHERE a.team_id = p.id AND a.resource = 'project' AND a.resource_id = p.id::text
     AND (a.organization_member_id = m.id
          OR (a.organization_member_id IS NULL AND a.role_id IS NULL)
          OR a.role_id IN (${ROLES_OF_M}))))`;

const ORGANIZATION_SELECT = `SELECT o.id, o.name, o.slug, o.logo_media_id, o.plugins_access_level, o.available_product_features, o.is_member_join_email_enabled, o.enforce_2fa, o.customer_id, o.members_can_invite, o.members_can_use_personal_api_keys, o.allow_publicly_shared_resources, o.is_ai_data_processing_approved, o.default_anonymize_ips, o.default_experiment_stats_method, o.default_role_id, o.created_at, o.updated_at, m.level AS membership_level,
       (SELECT count(*) FROM organization_memberships c WHERE c.organization_id = o.id)::text AS member_count,
       COALESCE((SELECT json_agg(json_build_object('id', p.id, 'uuid', p.uuid, 'organizationId', p.organization_id,
                                    'apiToken', p.api_token, 'name', p.name, 'timezone', p.timezone)
                  ORDER BY p.id)
              FROM projects p WHERE p.organization_id = o.id AND p.deleted_at IS NULL
               AND ${PROJECT_VISIBLE}), '[]'::json) AS projects
  FROM organizations o
  JOIN organization_memberships m ON m.organization_id = o.id AND m.user_id = $1`;

/** The key's project restriction on organizations ($n: project ids), as the service's reach condition. */
const reach = (column: string, n: number) => `($${n}::bigint[] IS NULL OR EXISTS (
       SELECT 1 FROM projects rp
        WHERE rp.organization_id = ${column} AND rp.id = ANY($${n}::bigint[]) AND rp.deleted_at IS NULL))`;

export const ORGANIZATIONS_PAGE = `${ORGANIZATION_SELECT}
 WHERE ($2::uuid[] IS NULL OR o.id = ANY($2::uuid[]))
 AND ${reach('o.id', 3)}
 ORDER BY o.created_at, o.id
 LIMIT $4 OFFSET $5`;

export const ORGANIZATIONS_COUNT = `SELECT count(*)::int AS total FROM organization_memberships m
      WHERE m.user_id = $1 AND ($2::uuid[] IS NULL OR m.organization_id = ANY($2::uuid[]))
 AND ${reach('m.organization_id', 3)}`;

export const ORGANIZATION_VIEW = `${ORGANIZATION_SELECT} WHERE o.id = $2`;

/**
 * MembershipsRepository.accessWithProjectsOf: the membership and, for each of the organization's first 1,001
 * projects, the rules that apply to the member (the access statement of the organization-wide reads).
 */
export const ACCESS_WITH_PROJECTS = `SELECT m.id, m.level,
            ($3::bigint[] IS NULL OR EXISTS (
               SELECT 1 FROM projects p WHERE p.organization_id = m.organization_id AND p.id = ANY($3::bigint[])
                 AND p.deleted_at IS NULL
            )) AS holds_project,
            (SELECT COALESCE(json_agg(json_build_array(p.id, ${ACCESS_RULES}) ORDER BY p.id), '[]')
               FROM (SELECT id FROM projects WHERE organization_id = m.organization_id AND deleted_at IS NULL
                      ORDER BY id LIMIT 1001) p) AS projects
       FROM organization_memberships m
      WHERE m.user_id = $1 AND m.organization_id = $2`;

/**
 * ProjectsRepository.findWithAccess with the recording access rules joined (RecordingVisibilityService.enter):
 * the project, the membership, the rules that apply to the member and the recording rules hiding recordings from
 * them, in one statement.
 */
export const PROJECT_WITH_ACCESS = `SELECT p.id, p.uuid, p.organization_id, p.name, p.api_token, p.secret_api_token, p.secret_api_token_backup, p.timezone, p.session_recording_opt_in, p.session_recording_retention_period_days, p.events_retention_period_days, p.ingested_event, p.anonymize_ips, p.autocapture_opt_out, p.autocapture_exceptions_opt_in, p.capture_console_log_opt_in, p.capture_performance_opt_in, p.heatmaps_opt_in, p.default_experiment_stats_method, p.created_at, p.updated_at, p.deleted_at, m.id AS access_membership_id, m.level AS access_membership_level,
            ${ACCESS_RULES} AS access_rules,
            CASE WHEN m.level >= 8 THEN '[]'::json
      ELSE COALESCE((SELECT json_agg(json_build_array(ar.kind, ar.url_pattern, ar.property_key,
                                                      ar.property_operator, ar.property_value)
                                     ORDER BY ar.created_at, ar.id)
                       FROM recording_access_rules ar
                      WHERE ar.team_id = p.id
                        AND NOT EXISTS (SELECT 1 FROM recording_access_rule_roles rr
                                          JOIN role_memberships rm ON rm.role_id = rr.role_id
                                         WHERE rr.rule_id = ar.id AND rm.user_id = $2::int)), '[]'::json)
    END AS access_joined
       FROM projects p
       LEFT JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $2
      WHERE p.id = $1 AND p.deleted_at IS NULL`;

const BATCH_EXPORTS_FILTER = `organization_id = $1 AND deleted_at IS NULL AND ($2::int[] IS NULL OR team_id = ANY($2::int[]))
       AND ($3::jsonb IS NULL OR EXISTS (
             SELECT 1 FROM jsonb_to_recordset($3::jsonb) AS v(team integer, only_ids uuid[], except_ids uuid[])
              WHERE v.team = batch_exports.team_id
                AND (batch_exports.created_by_id = $4
                     OR ((v.only_ids IS NULL OR batch_exports.id = ANY(v.only_ids))
                         AND batch_exports.id <> ALL(v.except_ids)))))`;

export const BATCH_EXPORTS_PAGE = `SELECT batch_exports.id, batch_exports.organization_id, batch_exports.team_id, batch_exports.created_by_id, batch_exports.name, batch_exports.model, batch_exports.destination_type, batch_exports.destination_config, batch_exports.interval, batch_exports.timezone, batch_exports.interval_offset, batch_exports.paused, batch_exports.last_paused_at, batch_exports.start_at, batch_exports.end_at, batch_exports.hogql_query, batch_exports.filters, batch_exports.incremental_mode, batch_exports.primary_key, batch_exports.version_key, batch_exports.destination_integration_id, batch_exports.scheduled_through, batch_exports.notification_webhook_url, batch_exports.failure_emailed_at, batch_exports.last_completed_interval_end, batch_exports.created_at, batch_exports.last_updated_at, batch_exports.deleted_at FROM batch_exports WHERE ${BATCH_EXPORTS_FILTER}
     ORDER BY created_at DESC, id ASC LIMIT $5 OFFSET $6`;

export const BATCH_EXPORTS_COUNT = `SELECT count(*)::int AS total FROM batch_exports WHERE ${BATCH_EXPORTS_FILTER}`;

export const LATEST_RUNS = `SELECT r.id, r.batch_export_id, r.backfill_id, r.status, r.records_completed, r.records_total_count, r.records_failed, r.bytes_exported, r.latest_error, r.cursor, r.data_interval_start, r.data_interval_end, r.created_at, r.finished_at, r.last_updated_at, r.read_xid_from, r.read_xid_to, r.read_late_before
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

/** OrganizationsRepository.update of the name. */
export const ORGANIZATION_UPDATE_NAME =
  'UPDATE organizations SET name = $1, updated_at = CURRENT_TIMESTAMP WHERE id = $2';

// The invite statements are InvitesRepository's.
/** Per-address transaction locks in one global order (InvitesRepository#lockAddresses), the same text. */
export const INVITE_LOCK_SPACE = 727_274_003;
export const INVITE_LOCK_ADDRESSES = `SELECT pg_advisory_xact_lock($1::int, k)
         FROM (SELECT DISTINCT hashtext($2::text || '/' || lower(e)) AS k
                 FROM unnest($3::text[]) AS e
                ORDER BY k) AS keys`;

export const INVITE_DELETE_FOR_EMAIL =
  'DELETE FROM organization_invites WHERE organization_id = $1 AND lower(target_email) = lower($2)';

/** InvitesRepository#insert. */
export const INVITE_INSERT = `INSERT INTO organization_invites (organization_id, target_email, first_name, level, message,
                                         private_project_access, send_email, created_by_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10)
       RETURNING id`;

/** InvitesRepository#findWithCreators: the invites and their creators, columns named. */
export const INVITE_WITH_CREATOR = `SELECT i.id, i.organization_id, i.target_email, i.first_name, i.level, i.message, i.private_project_access,
              i.send_email, i.emailing_attempt_made, i.created_by_id, i.created_at, i.updated_at,
              u.id AS creator_id, u.uuid AS creator_uuid, u.email AS creator_email,
              u.distinct_id AS creator_distinct_id, u.first_name AS creator_first_name,
              u.last_name AS creator_last_name, u.is_email_verified AS creator_is_email_verified,
              u.hedgehog_config AS creator_hedgehog_config, u.last_login AS creator_last_login,
              u.created_at AS creator_created_at, u.is_service_account AS creator_is_service_account
         FROM organization_invites i LEFT JOIN users u ON u.id = i.created_by_id
        WHERE i.id = ANY($1::uuid[])`;

// ---------------------------------------------------------------------------------------------- recordings

const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** A person's properties up to 16 KB as stored, else its most useful keys up to 16 KB (the persons' select). */
const PERSON_PROPERTIES = `CASE WHEN octet_length(p.properties::text) <= 16384 THEN p.properties ELSE coalesce((
     SELECT jsonb_object_agg(k.key, k.value) FROM (
       SELECT v.key, v.value, sum(octet_length(v.key) + v.bytes + 4) OVER (
                ORDER BY v.key = ANY(ARRAY['email', 'name', '$user_id', '$device_id', '$anon_distinct_id', '$browser', '$os', '$device_type', '$current_url', '$referrer', '$referring_domain', '$initial_referrer', '$initial_referring_domain', '$initial_current_url', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', '$initial_utm_source', '$initial_utm_medium', '$initial_utm_campaign', '$initial_utm_content', '$initial_utm_term', 'gclid', 'fbclid', 'msclkid']::text[]) DESC, v.key ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto
         FROM (SELECT j.key, j.value, octet_length(j.value::text) AS bytes FROM jsonb_each(p.properties) j) v
        WHERE v.bytes <= 1000) k
      WHERE k.upto <= 16384), '{}'::jsonb) END`;

const RECORDING_COLUMNS = `
  r.session_id AS "sessionId", r.distinct_id AS "distinctId",
  ${epochMs('r.start_time')} AS "startMs", ${epochMs('r.end_time')} AS "endMs", r.active_ms::float8 AS "activeMs",
  r.click_count AS "clickCount", r.keypress_count AS "keypressCount", r.mouse_activity_count AS "mouseActivityCount",
  r.console_log_count AS "consoleLogCount", r.console_warn_count AS "consoleWarnCount",
  r.console_error_count AS "consoleErrorCount",
  left(r.start_url, 8192) AS "startUrl", r.snapshot_source AS "snapshotSource",
  ${epochMs('r.last_event_received_at')} AS "lastEventMs",
  CASE WHEN $2::int IS NULL THEN false ELSE EXISTS (SELECT 1 FROM session_recording_views v
           WHERE v.team_id = $1::int AND v.session_id = r.session_id AND v.user_id = $2::int) END AS viewed,
  CASE WHEN $2::int IS NULL THEN '{}'::text[] ELSE ARRAY(SELECT u.email FROM session_recording_views v
         JOIN users u ON u.id = v.user_id
         WHERE v.team_id = $1::int AND v.session_id = r.session_id AND v.user_id <> $2::int
         ORDER BY v.viewed_at, v.user_id LIMIT 100) END AS viewers,
  p.id AS "personId", p.uuid AS "personUuid",
    ${PERSON_PROPERTIES} AS "personProperties",
    NOT (octet_length(p.properties::text) <= 16384) AS "personPropertiesTruncated",
    ${epochMs('p.created_at')} AS "personCreatedMs",
    coalesce((SELECT array_agg(s.distinct_id ORDER BY s.id) FROM (SELECT d.id, d.distinct_id FROM person_distinct_ids d
       WHERE d.team_id = $1::int AND d.person_id = p.id ORDER BY d.id LIMIT 100) s), '{}')
    AS "personDistinctIds", (SELECT count(*)::int FROM person_distinct_ids d WHERE d.team_id = $1::int AND d.person_id = p.id) AS "personDistinctIdCount"`;

/** A start URL rule hiding recordings ($n: the ILIKE patterns), as the service renders it; '' without one. */
export const hiddenByUrl = (n: number | null) =>
  n === null ? '' : ` AND NOT (coalesce(left(r.start_url, 8192) ILIKE ANY($${n}::text[]), false))`;

const PAGE = (visible: string) => `LEFT JOIN LATERAL (
    SELECT ${RECORDING_COLUMNS}
      FROM session_recordings r
      LEFT JOIN persons p ON p.team_id = $1::int AND p.id = r.person_id
     WHERE r.team_id = $1 AND r.deleted_at IS NULL AND r.start_time >= $5::timestamptz${visible}
     ORDER BY r.start_time DESC, r.session_id
     LIMIT $3 OFFSET $4
  ) AS page ON true
 ORDER BY page."startMs" DESC, page."sessionId"`;

/**
 * The unfiltered list (the bench sends no filter): page, persons, viewed flags and the counter's total less the
 * recordings past the retention cutoff ($5) not purged yet.
 */
export const RECORDINGS_PAGE = `
SELECT coalesce(greatest((SELECT c.recordings FROM session_recording_counts c WHERE c.team_id = $1) - (SELECT count(*) FROM session_recordings r WHERE r.team_id = $1 AND r.deleted_at IS NULL AND r.start_time < $5::timestamptz), 0), 0)::float8 AS total, page.*
  FROM (SELECT 1) AS one
  ${PAGE('')}`;

/**
 * The list of a caller start URL rules hide recordings from ($6): the total is a count under the same condition,
 * in list order, stopped at `cap` (the service's RESTRICTED_COUNT_CAP, or the end of the page plus one).
 */
export const recordingsPageHiding = (cap: number) => `
SELECT coalesce((SELECT count(*) FROM (SELECT 1 FROM session_recordings r WHERE r.team_id = $1 AND r.deleted_at IS NULL AND r.start_time >= $5::timestamptz${hiddenByUrl(6)} ORDER BY r.start_time DESC, r.session_id LIMIT ${cap}) AS capped), 0)::float8 AS total, page.*
  FROM (SELECT 1) AS one
  ${PAGE(hiddenByUrl(6))}`;

export const recordingById = (visible: string) => `SELECT ${RECORDING_COLUMNS}
         FROM session_recordings r
         LEFT JOIN persons p ON p.team_id = $1::int AND p.id = r.person_id
        WHERE r.team_id = $1 AND r.session_id = $3 AND r.deleted_at IS NULL AND r.start_time >= $4${visible}`;

/** The activity log entry of a read of a recording (ActivityLogRepository.insertRead), before the read. */
export const INSERT_READ_LOG = `INSERT INTO activity_logs (organization_id, team_id, user_id, api_key_id, is_system, activity, scope,
                                   item_id, detail, ip)
        SELECT p.organization_id, p.id, $2, $3, false, $4, $5, $6, $7::jsonb, $8::inet
          FROM projects p
          JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $2
         WHERE p.id = $1 AND ($9::uuid[] IS NULL OR p.organization_id = ANY($9::uuid[]))
           AND ($10::int[] IS NULL OR p.id = ANY($10::int[]))
        RETURNING id`;

/**
 * The activity log entry of a write (ActivityLogRepository.insert), in the write's transaction; $12: whether the
 * changes the transaction's row triggers captured replace `detail.changes` (true unless the route described them).
 */
export const INSERT_LOG = `INSERT INTO activity_logs (organization_id, team_id, user_id, api_key_id, is_system, activity, scope,
                                   item_id, detail, ip)
        SELECT coalesce($1::uuid, (SELECT p.organization_id FROM projects p WHERE p.id = $2::int),
                        (SELECT d.organization_id FROM organization_domains d WHERE d.id = $11::uuid)),
               $2::int, $3::int, $4, $5, $6, $7, $8,
               CASE WHEN $12::boolean AND nullif(current_setting('activity.changes', true), '') IS NOT NULL
                    THEN jsonb_set($9::jsonb, '{changes}', current_setting('activity.changes', true)::jsonb)
                    ELSE $9::jsonb END,
               $10::inet`;

// ---- events (GET /api/projects/:id/events) -------------------------------------------------------------------

/** The condition leaving out the events of a session whose recording a start URL rule ($3) hides (a probe per row). */
const VISIBLE_EVENT = ` AND NOT coalesce((SELECT (coalesce(left(rv.start_url, 8192) ILIKE ANY($3::text[]), false)) FROM session_recordings rv WHERE rv.team_id = $1::int AND rv.session_id = e.session_id COLLATE "C"), false)`;

/**
 * EventsRepository.list without filters: $1 project, $2 the retention cutoff, ($3 the hidden start URL patterns,)
 * then the most bytes of a property value and of the page.
 */
export const eventsPage = (hiding: boolean, limit: number, offset: number) => {
  const value = hiding ? '$4' : '$3';
  const page = hiding ? '$5' : '$4';
  return `SELECT * FROM (
      SELECT q.*, sum(q.bytes) OVER (ORDER BY q.ord ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - q.bytes AS before
        FROM (SELECT e.uuid, e.event, e.distinct_id AS "distinctId", e.person_id AS "personId",
  e."timestamp", e.created_at AS "createdAt", e.elements_chain AS "elementsChain", e.session_id AS "sessionId",
  e.window_id AS "windowId", b.properties, b.truncated AS "propertiesTruncated",
         b.bytes + octet_length(e.elements_chain) AS bytes,
         row_number() OVER (ORDER BY e."timestamp" DESC, e.uuid DESC) AS ord
       FROM (SELECT * FROM events e WHERE e.team_id = $1 AND e."timestamp" >= $2${hiding ? VISIBLE_EVENT : ''}
              ORDER BY e."timestamp" DESC, e.uuid DESC LIMIT ${limit} OFFSET ${offset}) e
       CROSS JOIN LATERAL (SELECT CASE WHEN pg_column_size(e.properties) <= 8192
                                      THEN octet_length(e.properties::text) END AS length OFFSET 0) w
    CROSS JOIN LATERAL (SELECT w.length IS NULL OR w.length > ${value}::int AS parts) s
    CROSS JOIN LATERAL (
      SELECT CASE WHEN s.parts THEN coalesce(jsonb_object_agg(x.key, CASE WHEN x.bytes > ${value}::int
                    THEN jsonb_build_object('$truncated', true, 'bytes', x.bytes) ELSE x.value END), '{}'::jsonb)
                  ELSE e.properties END AS properties,
             coalesce(bool_or(x.bytes > ${value}::int), false) AS truncated,
             (CASE WHEN s.parts
                  THEN 2 + coalesce(sum(octet_length(to_jsonb(x.key)::text) + 2 + CASE WHEN x.bytes > ${value}::int
                    THEN octet_length(jsonb_build_object('$truncated', true, 'bytes', x.bytes)::text) ELSE x.bytes END)
                    + 2 * (count(*) - 1), 0)
                  ELSE w.length END)::int AS bytes
        FROM (SELECT j.key, j.value, octet_length(j.value::text) AS bytes
                FROM jsonb_each(CASE WHEN s.parts THEN e.properties ELSE '{}'::jsonb END) j OFFSET 0) x
    ) b) q
    ) w WHERE w.before < ${page}::bigint ORDER BY w.ord`;
};

/** The events list's count, up to `cap`. */
export const eventsCount = (hiding: boolean, cap: number) =>
  `SELECT count(*)::int AS n FROM (SELECT 1 FROM events e WHERE e.team_id = $1 AND e."timestamp" >= $2${hiding ? VISIBLE_EVENT : ''} LIMIT ${cap}) c`;

/** PersonsRepository.eventPersons: the person of each distinct id, with a few of its properties. */
export const EVENT_PERSONS = `SELECT d.distinct_id AS "distinctId", p.is_identified AS "isIdentified",
              (SELECT f.distinct_id FROM person_distinct_ids f
                WHERE f.team_id = $1 AND f.person_id = p.id ORDER BY f.id LIMIT 1)
                AS "firstDistinctId",
              coalesce((SELECT jsonb_object_agg(k.key, p.properties -> k.key) FROM unnest($3::text[]) AS k(key)
                 WHERE p.properties ? k.key AND octet_length((p.properties -> k.key)::text) <= $4), '{}'::jsonb)
                AS properties
         FROM person_distinct_ids d JOIN persons p ON p.team_id = $1 AND p.id = d.person_id
        WHERE d.team_id = $1 AND d.distinct_id = ANY($2::text[])`;

// ---- capture (POST /s/) ------------------------------------------------------------------------------------

/** ProjectsRepository.findByApiToken: every column of the project (the service's entity), live projects only. */
export const PROJECT_BY_TOKEN =
  'SELECT projects.id, projects.uuid, projects.organization_id, projects.name, projects.api_token, projects.secret_api_token, projects.secret_api_token_backup, projects.timezone, projects.session_recording_opt_in, projects.session_recording_retention_period_days, projects.events_retention_period_days, projects.ingested_event, projects.anonymize_ips, projects.autocapture_opt_out, projects.autocapture_exceptions_opt_in, projects.capture_console_log_opt_in, projects.capture_performance_opt_in, projects.heatmaps_opt_in, projects.default_experiment_stats_method, projects.created_at, projects.updated_at, projects.deleted_at FROM projects WHERE api_token = $1 AND deleted_at IS NULL';

export const EXISTING_SESSIONS = `SELECT session_id, deleted_at IS NOT NULL AS deleted FROM session_recordings
        WHERE team_id = $1 AND session_id = ANY($2::varchar[])`;

export const PERSON_IDS_BY_DISTINCT_ID =
  'SELECT distinct_id, person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = ANY($2::text[])';

export const INSERT_PERSON = `INSERT INTO persons (team_id, properties, created_at) VALUES ($1, '{}'::jsonb, $2) RETURNING id`;

export const INSERT_DISTINCT_ID =
  'INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)';

/**
 * New recordings, inserted pending (`deleted_at` -infinity: not counted, the project's counter not locked);
 * PUBLISH_RECORDINGS makes those it returns live as the transaction's last statement.
 */
export const INSERT_RECORDINGS = `INSERT INTO session_recordings
              (team_id, session_id, distinct_id, person_id, start_time, end_time, snapshot_source,
               created_at, last_event_received_at, deleted_at)
       SELECT $1, s.session_id, s.distinct_id, s.person_id, s.start_time, s.end_time, s.snapshot_source, $2, $2,
              '-infinity'::timestamptz
         FROM unnest($3::varchar[], $4::varchar[], $5::int[], $6::timestamptz[], $7::timestamptz[], $8::varchar[])
              WITH ORDINALITY AS s(session_id, distinct_id, person_id, start_time, end_time, snapshot_source, n)
        ORDER BY s.n
       ON CONFLICT (team_id, session_id) DO NOTHING
       RETURNING session_id`;

/** The recordings INSERT_RECORDINGS inserted go live (the count trigger adds them to the project's counter). */
export const PUBLISH_RECORDINGS = `UPDATE session_recordings SET deleted_at = NULL
        WHERE team_id = $1 AND session_id = ANY($2::varchar[]) AND deleted_at = '-infinity'::timestamptz`;

export const LOCK_SESSIONS = `SELECT session_id, deleted_at IS NOT NULL AND deleted_at <> '-infinity'::timestamptz AS deleted,
              event_count, snapshot_bytes
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

// ---- persons (both capture routes) and event capture (POST /e/) --------------------------------------------

/**
 * PersonsRepository.resolveDistinctIds: the person of each distinct id, the missing ones created, in one
 * statement; a row with `kept` false lost its distinct id to a concurrent creation.
 */
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
         FROM wanted w JOIN persons pe ON pe.team_id = $1 AND pe.id = w.person_id
       UNION ALL
       SELECT input.distinct_id, p.id, p.uuid, d.person_id IS NOT NULL
         FROM input JOIN p ON p.uuid = input.uuid LEFT JOIN d ON d.person_id = p.id`;

/** The persons made for distinct ids a concurrent creation took (RESOLVE_PERSONS' rows not kept). */
export const DELETE_PERSONS = 'DELETE FROM persons WHERE team_id = $1 AND id = ANY($2::int[])';

export const PERSONS_BY_DISTINCT_ID = `SELECT pd.distinct_id, p.id, p.uuid
         FROM person_distinct_ids pd JOIN persons p ON p.team_id = pd.team_id AND p.id = pd.person_id
        WHERE pd.team_id = $1 AND pd.distinct_id = ANY($2::text[])`;

/** A merge (`$identify` of two persons): $1 the project, $2 the newer person, merged into $3. */
export const REASSIGN_RECORDINGS =
  'UPDATE session_recordings SET person_id = $3 WHERE team_id = $1 AND person_id = $2';
export const MERGE_DISTINCT_IDS =
  'UPDATE person_distinct_ids SET person_id = $3 WHERE team_id = $1 AND person_id = $2';
export const MERGE_PROPERTIES = `UPDATE persons SET properties = coalesce((SELECT properties FROM persons WHERE team_id = $1 AND id = $2),
         '{}'::jsonb) || properties WHERE team_id = $1 AND id = $3`;
export const DELETE_PERSON = 'DELETE FROM persons WHERE team_id = $1 AND id = $2';

/** The person of a link (`$identify`), marked identified in the pass over persons in id order. */
export const MARK_IDENTIFIED =
  'UPDATE persons SET is_identified = true WHERE team_id = $1 AND id = $2 AND NOT is_identified';

export const LOCK_PERSON_PROPERTIES = `SELECT CASE WHEN octet_length(t.text) <= $3 THEN t.text END AS properties,
              octet_length(t.text) AS rendered_bytes
         FROM persons p CROSS JOIN LATERAL (SELECT p.properties::text AS text) t
        WHERE p.team_id = $1 AND p.id = $2
          FOR UPDATE OF p`;

export const REPLACE_PERSON_PROPERTIES =
  'UPDATE persons SET properties = $3::jsonb WHERE team_id = $1 AND id = $2';

/** EventsRepository's INSERT_EVENTS: returns the (uuid, ms) of each row stored, as one JSON array. */
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
         RETURNING uuid, "timestamp"
       ), marked AS (
         UPDATE projects SET ingested_event = true
          WHERE $13::boolean AND id = $1 AND NOT ingested_event AND EXISTS (SELECT 1 FROM inserted)
       )
       SELECT coalesce(json_agg(json_build_array(uuid, (extract(epoch FROM "timestamp") * 1000)::bigint)), '[]')
              AS stored
         FROM inserted`;
