import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * PostHog's late-2026 batch export contract: the `AwsS3`, `S3Compatible` and `AzureBlob` destinations, daily and
 * weekly intervals on a time zone's clock with an offset (`timezone`, `interval_offset`), runs' `records_failed`
 * and backfills' aligned start (`adjusted_start_at`).
 */
export class ExportZonesAndProgress1797700000000 implements MigrationInterface {
    name = 'ExportZonesAndProgress1797700000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "timezone" character varying(64)`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "interval_offset" integer`);
        await queryRunner.query(`ALTER TABLE "batch_export_runs" ADD "records_failed" integer`);
        await queryRunner.query(`ALTER TABLE "batch_export_backfills" ADD "adjusted_start_at" TIMESTAMP WITH TIME ZONE`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_destination_type_check"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_destination_type_check" CHECK ("destination_type" IN ('S3', 'AwsS3', 'S3Compatible', 'AzureBlob', 'Snowflake', 'Postgres', 'Redshift', 'BigQuery', 'Databricks', 'HTTP', 'NoOp'))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_destination_type_check"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_destination_type_check" CHECK ("destination_type" IN ('S3', 'Snowflake', 'Postgres', 'Redshift', 'BigQuery', 'Databricks', 'HTTP', 'NoOp'))`);
        await queryRunner.query(`ALTER TABLE "batch_export_backfills" DROP COLUMN "adjusted_start_at"`);
        await queryRunner.query(`ALTER TABLE "batch_export_runs" DROP COLUMN "records_failed"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "interval_offset"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "timezone"`);
    }
}
