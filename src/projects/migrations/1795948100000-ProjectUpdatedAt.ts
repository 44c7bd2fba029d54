import { MigrationInterface, QueryRunner } from "typeorm";

export class ProjectUpdatedAt1795948100000 implements MigrationInterface {
    name = 'ProjectUpdatedAt1795948100000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" ADD "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()`);
        // Projects from before the column: their last change is not known, their creation is.
        await queryRunner.query(`UPDATE "projects" SET "updated_at" = "created_at"`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "updated_at"`);
    }

}
