import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a write changed, captured where it happens: a row trigger on each table the API and SCIM write
 * (`activity_capture_changes`, its argument the PostHog scope of the row) appends PostHog's changes (`created`
 * with the row, `deleted` with the row, `changed` per column with `before` and `after`) to the transaction's
 * setting `activity.changes`, and the activity log's INSERT reads it in the same statement: no round trip more.
 * Masked as the activity log masks (`activity_mask`: fields named like secrets, values that are keys), each
 * value (of a field; a created or deleted row's field by field) over 1,000 bytes a `{"truncated": true, "bytes": n}` marker, at most 100 changes and 16 KB per
 * transaction (then one marker change). Timestamps the database keeps (`updated_at`, `last_used_at`, …) are not
 * changes. Projects, batch exports and plugin configs describe their changes in their services (with the
 * nested values masked field by field) and are not captured here.
 */
const CAPTURED: Record<string, string> = {
  organizations: 'Organization',
  organization_memberships: 'OrganizationMembership',
  organization_invites: 'OrganizationInvite',
  organization_domains: 'OrganizationDomain',
  roles: 'Role',
  role_memberships: 'RoleMembership',
  access_controls: 'AccessControl',
  recording_access_rules: 'RecordingAccessRule',
  session_recording_playlists: 'SessionRecordingPlaylist',
  users: 'User',
  scim_identities: 'User',
  service_accounts: 'ServiceAccount',
  project_secret_api_keys: 'ProjectSecretAPIKey',
  personal_api_keys: 'PersonalAPIKey',
};

/** Field names whose values never enter the log (the activity log's list, and stored hashes and challenges). */
const SECRET_FIELD =
  'token|secret|password|passwd|private|credential|authorization|api_?key|access_?key|signing|cookie|secure_value|challenge';

export class ActivityChangesCapture1797300000000 implements MigrationInterface {
  name = 'ActivityChangesCapture1797300000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION activity_mask(value jsonb, depth int DEFAULT 0) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $fn$
      DECLARE
        masked jsonb := '{}';
        k text;
        v jsonb;
      BEGIN
        IF value IS NULL THEN RETURN 'null'::jsonb; END IF;
        CASE jsonb_typeof(value)
          WHEN 'string' THEN
            IF (value #>> '{}') ~ '^(phx|phs|pha|phsct|phscim)_[A-Za-z0-9]' THEN RETURN '"********"'::jsonb; END IF;
            IF length(value #>> '{}') > 1000 THEN RETURN to_jsonb(left(value #>> '{}', 1000) || '…'); END IF;
            RETURN value;
          WHEN 'object' THEN
            IF depth > 8 THEN RETURN '"…"'::jsonb; END IF;
            FOR k, v IN SELECT e.key, e.value FROM jsonb_each(value) e LIMIT 200 LOOP
              IF k ~* '${SECRET_FIELD}' AND v <> 'null'::jsonb AND v <> '""'::jsonb THEN
                masked := masked || jsonb_build_object(k, '********');
              ELSE
                masked := masked || jsonb_build_object(k, activity_mask(v, depth + 1));
              END IF;
            END LOOP;
            RETURN masked;
          WHEN 'array' THEN
            IF depth > 8 THEN RETURN '"…"'::jsonb; END IF;
            SELECT coalesce(jsonb_agg(activity_mask(a.e, depth + 1) ORDER BY a.i), '[]'::jsonb) INTO masked
              FROM jsonb_array_elements(value) WITH ORDINALITY AS a(e, i) WHERE a.i <= 100;
            RETURN masked;
          ELSE
            RETURN value;
        END CASE;
      END $fn$`,
    );
    await queryRunner.query(
      `CREATE FUNCTION activity_bounded(value jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $fn$
        SELECT CASE WHEN octet_length(value::text) <= 1000 THEN value
                    ELSE jsonb_build_object('truncated', true, 'bytes', octet_length(value::text)) END
      $fn$`,
    );
    await queryRunner.query(
      `CREATE FUNCTION activity_bounded_row(value jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $fn$
        SELECT coalesce(jsonb_object_agg(e.key, activity_bounded(e.value)), '{}'::jsonb)
          FROM jsonb_each(activity_mask(value)) e
      $fn$`,
    );
    await queryRunner.query(
      `CREATE FUNCTION activity_capture_changes() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        captured text := nullif(current_setting('activity.changes', true), '');
        taken int := coalesce(nullif(current_setting('activity.changes_count', true), '')::int, 0);
        added jsonb := '[]';
        before_row jsonb;
        after_row jsonb;
        k text;
      BEGIN
        IF taken >= 100 THEN RETURN NULL; END IF;
        IF TG_OP = 'INSERT' THEN
          added := jsonb_build_array(jsonb_build_object('type', TG_ARGV[0], 'action', 'created', 'field', null,
            'before', null, 'after', activity_bounded_row(to_jsonb(NEW))));
        ELSIF TG_OP = 'DELETE' THEN
          added := jsonb_build_array(jsonb_build_object('type', TG_ARGV[0], 'action', 'deleted', 'field', null,
            'before', activity_bounded_row(to_jsonb(OLD)), 'after', null));
        ELSE
          before_row := to_jsonb(OLD);
          after_row := to_jsonb(NEW);
          FOR k IN SELECT e.key FROM jsonb_each(after_row) e LOOP
            CONTINUE WHEN k IN ('updated_at', 'last_updated_at', 'last_modified_at', 'last_used_at', 'last_login');
            IF after_row -> k IS DISTINCT FROM before_row -> k THEN
              added := added || jsonb_build_array(jsonb_build_object('type', TG_ARGV[0], 'action', 'changed',
                'field', k,
                'before', activity_bounded(activity_mask(jsonb_build_object(k, before_row -> k)) -> k),
                'after', activity_bounded(activity_mask(jsonb_build_object(k, after_row -> k)) -> k)));
            END IF;
          END LOOP;
        END IF;
        IF jsonb_array_length(added) = 0 THEN RETURN NULL; END IF;
        IF octet_length(coalesce(captured, '')) + octet_length(added::text) > 16384 THEN
          added := jsonb_build_array(jsonb_build_object('type', TG_ARGV[0], 'action', 'changed', 'field', null,
            'before', null, 'after', jsonb_build_object('truncated', true)));
          taken := 100;
        ELSE
          taken := taken + jsonb_array_length(added);
        END IF;
        PERFORM set_config('activity.changes_count', taken::text, true);
        PERFORM set_config('activity.changes', (coalesce(captured::jsonb, '[]'::jsonb) || added)::text, true);
        RETURN NULL;
      END $fn$`,
    );
    for (const [table, scope] of Object.entries(CAPTURED)) {
      await queryRunner.query(
        `CREATE TRIGGER "${table}_activity_changes" AFTER INSERT OR UPDATE OR DELETE ON "${table}"
           FOR EACH ROW EXECUTE FUNCTION activity_capture_changes('${scope}')`,
      );
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of Object.keys(CAPTURED)) {
      await queryRunner.query(`DROP TRIGGER IF EXISTS "${table}_activity_changes" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION activity_capture_changes()`);
    await queryRunner.query(`DROP FUNCTION activity_bounded_row(jsonb)`);
    await queryRunner.query(`DROP FUNCTION activity_bounded(jsonb)`);
    await queryRunner.query(`DROP FUNCTION activity_mask(jsonb, int)`);
  }
}
