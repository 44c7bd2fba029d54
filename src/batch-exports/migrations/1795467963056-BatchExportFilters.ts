import { MigrationInterface, QueryRunner } from "typeorm";

export class BatchExportFilters1795467963056 implements MigrationInterface {
    name = 'BatchExportFilters1795467963056'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "filters" jsonb`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "destination_integration_id" integer`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "destination_integration_id"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "filters"`);
    }

}
