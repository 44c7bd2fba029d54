import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * PostHog's incremental modes of batch exports: `incremental_mode` (`APPEND`, the default and what table
 * destinations did before, or `MERGE`) with `primary_key` and `version_key` (null: the model's own).
 */
export class ExportIncrementalModes1798100000000 implements MigrationInterface {
    name = 'ExportIncrementalModes1798100000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "incremental_mode" character varying(16) NOT NULL DEFAULT 'APPEND'`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "primary_key" text array`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "version_key" text array`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_incremental_mode_check" CHECK ("incremental_mode" IN ('APPEND', 'MERGE'))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_incremental_mode_check"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "version_key"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "primary_key"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "incremental_mode"`);
    }
}
