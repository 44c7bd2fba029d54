import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The activity log (ActivityLogEntity): one row per write through the API and the CLI, per read of a recording,
 * its snapshots or its events. Append-only: a trigger refuses every UPDATE and TRUNCATE, and every DELETE but
 * the retention task's (rows older than the cutoff it sets for its own transaction, `activity_log.prune_before`,
 * and at least a day old). No foreign keys: an entry outlives the user, project and organization it names. The
 * `activity_log` batch export model reads it by `write_xid` (export-cursor.ts); batch exports may use it.
 */
export class ActivityLogs1796200000000 implements MigrationInterface {
  name = 'ActivityLogs1796200000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "activity_logs" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid, "team_id" integer, "user_id" integer, "api_key_id" character varying(100), "is_system" boolean NOT NULL DEFAULT false, "activity" character varying(64) NOT NULL, "scope" character varying(64) NOT NULL, "item_id" character varying(200), "detail" jsonb NOT NULL DEFAULT '{}', "ip" inet, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "write_xid" bigint NOT NULL DEFAULT '0', CONSTRAINT "activity_logs_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "activity_logs_team_created_idx" ON "activity_logs" ("team_id", "created_at" DESC, "id" DESC) WHERE "team_id" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "activity_logs_organization_created_idx" ON "activity_logs" ("organization_id", "created_at" DESC, "id" DESC) WHERE "organization_id" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "activity_logs_scope_item_idx" ON "activity_logs" ("scope", "item_id")`,
    );
    await queryRunner.query(`CREATE INDEX "activity_logs_created_idx" ON "activity_logs" ("created_at")`);
    await queryRunner.query(
      `CREATE INDEX "activity_logs_team_write_xid_idx" ON "activity_logs" ("team_id", "write_xid")`,
    );
    await queryRunner.query(
      `CREATE TRIGGER activity_logs_write_xid_on_insert BEFORE INSERT ON activity_logs FOR EACH ROW EXECUTE FUNCTION export_write_xid()`,
    );
    await queryRunner.query(`
      CREATE FUNCTION activity_logs_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        cutoff timestamptz := nullif(current_setting('activity_log.prune_before', true), '')::timestamptz;
      BEGIN
        IF TG_OP = 'DELETE' AND cutoff IS NOT NULL AND OLD.created_at < cutoff
           AND OLD.created_at < now() - interval '1 day' THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'activity_logs is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION activity_logs_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'activity_logs is append-only: TRUNCATE refused' USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER activity_logs_append_only BEFORE UPDATE OR DELETE ON activity_logs FOR EACH ROW EXECUTE FUNCTION activity_logs_append_only()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER activity_logs_no_truncate BEFORE TRUNCATE ON activity_logs FOR EACH STATEMENT EXECUTE FUNCTION activity_logs_no_truncate()`,
    );
    // Batch exports of the activity log.
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_model_check"`);
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_model_check" CHECK ("model" IN ('events', 'persons', 'sessions', 'activity_log'))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM "batch_exports" WHERE "model" = 'activity_log'`);
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_model_check"`);
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_model_check" CHECK ("model" IN ('events', 'persons', 'sessions'))`,
    );
    await queryRunner.query(`DROP TABLE "activity_logs"`);
    await queryRunner.query(`DROP FUNCTION activity_logs_append_only()`);
    await queryRunner.query(`DROP FUNCTION activity_logs_no_truncate()`);
  }
}
