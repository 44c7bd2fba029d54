import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Scheduled runs keep the end of the previous run's interval (docs/batch-exports.md, "Late commits"): a run
 * that follows a gap (intervals skipped by a pause) reads the writes committed late into the intervals before
 * the gap, and only those, so the rows of the last run before a pause are not lost; one that overlaps the
 * previous run (a change to a longer interval) reads its own rows from there.
 */
export class ExportLateBefore1795950000000 implements MigrationInterface {
    name = 'ExportLateBefore1795950000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_export_runs" ADD "read_late_before" TIMESTAMP WITH TIME ZONE`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_export_runs" DROP COLUMN "read_late_before"`);
    }
}
