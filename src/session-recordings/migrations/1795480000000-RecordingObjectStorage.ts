import { MigrationInterface, QueryRunner } from "typeorm";

export class RecordingObjectStorage1795480000000 implements MigrationInterface {
    name = 'RecordingObjectStorage1795480000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD "object_key" character varying(1024)`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ALTER COLUMN "data" DROP NOT NULL`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD CONSTRAINT "session_recording_snapshots_stored_check" CHECK ("data" IS NOT NULL OR "object_key" IS NOT NULL)`);
        await queryRunner.query(`CREATE UNIQUE INDEX "session_recording_snapshots_object_key_idx" ON "session_recording_snapshots" ("object_key") WHERE "object_key" IS NOT NULL`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_object_key_idx"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP CONSTRAINT "session_recording_snapshots_stored_check"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ALTER COLUMN "data" SET NOT NULL`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP COLUMN "object_key"`);
    }

}
