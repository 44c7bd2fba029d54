import { MigrationInterface, QueryRunner } from 'typeorm';

export class BatchExports1795242232741 implements MigrationInterface {
  name = 'BatchExports1795242232741';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "batch_exports" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "team_id" integer NOT NULL, "name" character varying(255) NOT NULL, "model" character varying(16) NOT NULL, "destination_type" character varying(16) NOT NULL, "destination_config" jsonb NOT NULL DEFAULT '{}', "destination_secrets" jsonb NOT NULL DEFAULT '{}', "interval" character varying(32) NOT NULL, "paused" boolean NOT NULL DEFAULT false, "last_paused_at" TIMESTAMP WITH TIME ZONE, "start_at" TIMESTAMP WITH TIME ZONE, "end_at" TIMESTAMP WITH TIME ZONE, "hogql_query" text NOT NULL DEFAULT '', "scheduled_through" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "deleted_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "batch_exports_start_before_end_check" CHECK ("start_at" IS NULL OR "end_at" IS NULL OR "start_at" < "end_at"), CONSTRAINT "batch_exports_destination_type_check" CHECK ("destination_type" IN ('S3', 'Snowflake', 'Postgres', 'Redshift', 'BigQuery', 'HTTP', 'NoOp')), CONSTRAINT "batch_exports_interval_check" CHECK ("interval" IN ('hour', 'day', 'week', 'every 5 minutes', 'every 15 minutes')), CONSTRAINT "batch_exports_model_check" CHECK ("model" IN ('events', 'persons')), CONSTRAINT "PK_1bd380c6eb9fd26d7715cadf97a" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_exports_organization_idx" ON "batch_exports"  ("organization_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "batch_export_backfills" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "batch_export_id" uuid NOT NULL, "start_at" TIMESTAMP WITH TIME ZONE NOT NULL, "end_at" TIMESTAMP WITH TIME ZONE NOT NULL, "run_count" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_e62ee4b611351914c35c21f64cb" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_export_backfills_export_idx" ON "batch_export_backfills"  ("batch_export_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "batch_export_logs" ("id" BIGSERIAL NOT NULL, "batch_export_id" uuid NOT NULL, "run_id" uuid, "timestamp" TIMESTAMP WITH TIME ZONE NOT NULL, "level" character varying(8) NOT NULL, "message" text NOT NULL, CONSTRAINT "batch_export_logs_level_check" CHECK ("level" IN ('DEBUG', 'LOG', 'INFO', 'WARNING', 'ERROR')), CONSTRAINT "PK_e89c73cb62df4bc2100e0edd716" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_export_logs_export_timestamp_idx" ON "batch_export_logs"  ("batch_export_id", "timestamp", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "batch_export_pauses" ("id" BIGSERIAL NOT NULL, "batch_export_id" uuid NOT NULL, "paused_at" TIMESTAMP WITH TIME ZONE NOT NULL, "unpaused_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_68dd65a3985906a82b28a22e373" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_export_pauses_export_idx" ON "batch_export_pauses"  ("batch_export_id", "paused_at") `,
    );
    await queryRunner.query(
      `CREATE TABLE "batch_export_runs" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "batch_export_id" uuid NOT NULL, "backfill_id" uuid, "status" character varying(16) NOT NULL DEFAULT 'Starting', "records_completed" integer, "records_total_count" integer, "latest_error" text, "cursor" text, "data_interval_start" TIMESTAMP WITH TIME ZONE NOT NULL, "data_interval_end" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "finished_at" TIMESTAMP WITH TIME ZONE, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "batch_export_runs_status_check" CHECK ("status" IN ('Starting', 'Running', 'Completed', 'Failed', 'FailedRetryable', 'Cancelled', 'Terminated', 'TimedOut', 'ContinuedAsNew')), CONSTRAINT "PK_6de9361b6f6813d52195d83f17e" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_export_runs_backfill_idx" ON "batch_export_runs"  ("backfill_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_export_runs_export_created_idx" ON "batch_export_runs"  ("batch_export_id", "created_at") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "batch_export_runs_scheduled_interval_key" ON "batch_export_runs"  ("batch_export_id", "data_interval_start", "data_interval_end") WHERE "backfill_id" IS NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "FK_a7fa10cfd7344cdc2c0cf29384e" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "FK_5534fea9a710bc7b8918380313b" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_backfills" ADD CONSTRAINT "FK_55e7b354e182b91e70b0bb34d64" FOREIGN KEY ("batch_export_id") REFERENCES "batch_exports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_logs" ADD CONSTRAINT "FK_92f795281bf598996c5a59802f4" FOREIGN KEY ("batch_export_id") REFERENCES "batch_exports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_pauses" ADD CONSTRAINT "FK_5fff08b8287f87d813a3715940e" FOREIGN KEY ("batch_export_id") REFERENCES "batch_exports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_runs" ADD CONSTRAINT "FK_5ef817625e22febb52afb90b5f6" FOREIGN KEY ("batch_export_id") REFERENCES "batch_exports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_runs" ADD CONSTRAINT "FK_d4f78ab04b32deb6bd04e41fcd0" FOREIGN KEY ("backfill_id") REFERENCES "batch_export_backfills"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "batch_export_runs" DROP CONSTRAINT "FK_d4f78ab04b32deb6bd04e41fcd0"`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_runs" DROP CONSTRAINT "FK_5ef817625e22febb52afb90b5f6"`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_pauses" DROP CONSTRAINT "FK_5fff08b8287f87d813a3715940e"`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_logs" DROP CONSTRAINT "FK_92f795281bf598996c5a59802f4"`,
    );
    await queryRunner.query(
      `ALTER TABLE "batch_export_backfills" DROP CONSTRAINT "FK_55e7b354e182b91e70b0bb34d64"`,
    );
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "FK_5534fea9a710bc7b8918380313b"`);
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "FK_a7fa10cfd7344cdc2c0cf29384e"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_runs_scheduled_interval_key"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_runs_export_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_runs_backfill_idx"`);
    await queryRunner.query(`DROP TABLE "batch_export_runs"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_pauses_export_idx"`);
    await queryRunner.query(`DROP TABLE "batch_export_pauses"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_logs_export_timestamp_idx"`);
    await queryRunner.query(`DROP TABLE "batch_export_logs"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_backfills_export_idx"`);
    await queryRunner.query(`DROP TABLE "batch_export_backfills"`);
    await queryRunner.query(`DROP INDEX "public"."batch_exports_organization_idx"`);
    await queryRunner.query(`DROP TABLE "batch_exports"`);
  }
}
