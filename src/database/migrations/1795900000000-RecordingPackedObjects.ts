import { MigrationInterface, QueryRunner } from "typeorm";

export class RecordingPackedObjects1795900000000 implements MigrationInterface {
    name = 'RecordingPackedObjects1795900000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_object_key_idx"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD "object_offset" bigint`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD "object_length" integer`);
        await queryRunner.query(`CREATE INDEX "session_recording_snapshots_unpacked_idx" ON "session_recording_snapshots" ("id") WHERE "data" IS NOT NULL`);
        await queryRunner.query(`CREATE INDEX "session_recording_snapshots_object_key_idx" ON "session_recording_snapshots" ("object_key") WHERE "object_key" IS NOT NULL`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD CONSTRAINT "session_recording_snapshots_range_check" CHECK (("object_offset" IS NULL) = ("object_length" IS NULL) AND ("object_offset" IS NULL OR "object_key" IS NOT NULL))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP CONSTRAINT "session_recording_snapshots_range_check"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_object_key_idx"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_unpacked_idx"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP COLUMN "object_length"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP COLUMN "object_offset"`);
        await queryRunner.query(`CREATE UNIQUE INDEX "session_recording_snapshots_object_key_idx" ON "session_recording_snapshots" ("object_key") WHERE "object_key" IS NOT NULL`);
    }

}
