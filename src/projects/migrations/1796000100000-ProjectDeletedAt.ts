import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * `projects.deleted_at`: a deleted project is hidden from every read at once and its data is removed by the
 * project deletion task, which finds the pending ones through the partial index.
 */
export class ProjectDeletedAt1796000100000 implements MigrationInterface {
    name = 'ProjectDeletedAt1796000100000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" ADD "deleted_at" TIMESTAMP WITH TIME ZONE`);
        await queryRunner.query(`CREATE INDEX "projects_pending_deletion_idx" ON "projects" ("deleted_at") WHERE "deleted_at" IS NOT NULL`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."projects_pending_deletion_idx"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "deleted_at"`);
    }

}
