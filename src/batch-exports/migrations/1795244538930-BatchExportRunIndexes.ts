import { MigrationInterface, QueryRunner } from 'typeorm';

export class BatchExportRunIndexes1795244538930 implements MigrationInterface {
  name = 'BatchExportRunIndexes1795244538930';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."batch_export_runs_backfill_idx"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_runs_export_created_idx"`);
    await queryRunner.query(
      `CREATE INDEX "batch_export_runs_backfill_only_idx" ON "batch_export_runs"  ("backfill_id") WHERE "backfill_id" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_export_runs_export_created_idx" ON "batch_export_runs"  ("batch_export_id", "created_at", "data_interval_end", "id") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."batch_export_runs_export_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."batch_export_runs_backfill_only_idx"`);
    await queryRunner.query(
      `CREATE INDEX "batch_export_runs_export_created_idx" ON "batch_export_runs" USING btree ("batch_export_id", "created_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "batch_export_runs_backfill_idx" ON "batch_export_runs" USING btree ("backfill_id") `,
    );
  }
}
