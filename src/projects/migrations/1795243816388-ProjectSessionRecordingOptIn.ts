import { MigrationInterface, QueryRunner } from "typeorm";

export class ProjectSessionRecordingOptIn1795243816388 implements MigrationInterface {
    name = 'ProjectSessionRecordingOptIn1795243816388'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" ADD "session_recording_opt_in" boolean NOT NULL DEFAULT true`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "session_recording_opt_in"`);
    }

}
