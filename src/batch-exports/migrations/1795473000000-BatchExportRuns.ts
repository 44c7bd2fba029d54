import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batch export runs that execute: `bytes_exported` on runs; the `sessions` model and the `Databricks`
 * destination; person and distinct-id versions with their change times (kept by triggers, so every writer of
 * persons keeps them right) and the indexes the persons and sessions exports read through.
 */
export class BatchExportRuns1795473000000 implements MigrationInterface {
  name = 'BatchExportRuns1795473000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "batch_export_runs" ADD "bytes_exported" bigint`);
    await queryRunner.query(`ALTER TABLE "persons" ADD "version" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(
      `ALTER TABLE "persons" ADD "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()`,
    );
    await queryRunner.query(`ALTER TABLE "person_distinct_ids" ADD "version" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(
      `ALTER TABLE "person_distinct_ids" ADD "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()`,
    );
    await queryRunner.query(`CREATE INDEX "persons_team_updated_idx" ON "persons"  ("team_id", "updated_at") `);
    await queryRunner.query(
      `CREATE INDEX "person_distinct_ids_team_updated_idx" ON "person_distinct_ids"  ("team_id", "updated_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "session_recordings_team_received_idx" ON "session_recordings"  ("team_id", "last_event_received_at", "session_id") `,
    );
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_model_check"`);
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_model_check" CHECK ("model" IN ('events', 'persons', 'sessions'))`,
    );
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_destination_type_check"`);
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_destination_type_check" CHECK ("destination_type" IN ('S3', 'Snowflake', 'Postgres', 'Redshift', 'BigQuery', 'Databricks', 'HTTP', 'NoOp'))`,
    );
    // A change of a person's properties raises its version; a distinct id moved to another person raises its own.
    await queryRunner.query(`
      CREATE FUNCTION persons_touch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.properties IS DISTINCT FROM OLD.properties THEN
          NEW.version := OLD.version + 1;
          NEW.updated_at := now();
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER persons_touch BEFORE UPDATE ON persons FOR EACH ROW EXECUTE FUNCTION persons_touch()`,
    );
    await queryRunner.query(`
      CREATE FUNCTION person_distinct_ids_touch() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.person_id IS DISTINCT FROM OLD.person_id THEN
          NEW.version := OLD.version + 1;
          NEW.updated_at := now();
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER person_distinct_ids_touch BEFORE UPDATE ON person_distinct_ids FOR EACH ROW EXECUTE FUNCTION person_distinct_ids_touch()`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER person_distinct_ids_touch ON person_distinct_ids`);
    await queryRunner.query(`DROP FUNCTION person_distinct_ids_touch()`);
    await queryRunner.query(`DROP TRIGGER persons_touch ON persons`);
    await queryRunner.query(`DROP FUNCTION persons_touch()`);
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_destination_type_check"`);
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_destination_type_check" CHECK ("destination_type" IN ('S3', 'Snowflake', 'Postgres', 'Redshift', 'BigQuery', 'HTTP', 'NoOp'))`,
    );
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_model_check"`);
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_model_check" CHECK ("model" IN ('events', 'persons'))`,
    );
    await queryRunner.query(`DROP INDEX "public"."session_recordings_team_received_idx"`);
    await queryRunner.query(`DROP INDEX "public"."person_distinct_ids_team_updated_idx"`);
    await queryRunner.query(`DROP INDEX "public"."persons_team_updated_idx"`);
    await queryRunner.query(`ALTER TABLE "person_distinct_ids" DROP COLUMN "updated_at"`);
    await queryRunner.query(`ALTER TABLE "person_distinct_ids" DROP COLUMN "version"`);
    await queryRunner.query(`ALTER TABLE "persons" DROP COLUMN "updated_at"`);
    await queryRunner.query(`ALTER TABLE "persons" DROP COLUMN "version"`);
    await queryRunner.query(`ALTER TABLE "batch_export_runs" DROP COLUMN "bytes_exported"`);
  }
}
