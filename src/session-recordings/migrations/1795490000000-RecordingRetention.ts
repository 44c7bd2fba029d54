import { MigrationInterface, QueryRunner } from "typeorm";

export class RecordingRetention1795490000000 implements MigrationInterface {
    name = 'RecordingRetention1795490000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" ADD "session_recording_retention_period_days" integer`);
        await queryRunner.query(`ALTER TABLE "projects" ADD CONSTRAINT "projects_recording_retention_check" CHECK ("session_recording_retention_period_days" BETWEEN 1 AND 3650)`);
        // Written by hand (declared with synchronize: false on the entity): the purge finds expired soft-deleted
        // recordings here (the live ones through session_recordings_team_start_idx). Capture never writes a row
        // this partial index holds.
        await queryRunner.query(`CREATE INDEX "session_recordings_deleted_start_idx" ON "session_recordings" ("team_id", "start_time") WHERE "deleted_at" IS NOT NULL`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."session_recordings_deleted_start_idx"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP CONSTRAINT "projects_recording_retention_check"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "session_recording_retention_period_days"`);
    }

}
