import { MigrationInterface, QueryRunner } from "typeorm";

export class RecordingPackedObjects1795900000000 implements MigrationInterface {
    name = 'RecordingPackedObjects1795900000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_object_key_idx"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD "object_offset" bigint`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD "object_length" integer`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP CONSTRAINT "session_recording_snapshots_stored_check"`);
        await queryRunner.query(`CREATE INDEX "session_recording_snapshots_buffered_idx" ON "session_recording_snapshots" ("id") WHERE "data" IS NULL AND "object_key" IS NULL`);
        // The bytes of chunks waiting to be packed, partitioned by hour of capture: a partition whose chunks are
        // all packed (or deleted) is dropped whole. The hourly partitions are created ahead by the service; the
        // default one takes what arrives outside them.
        await queryRunner.query(`CREATE TABLE "session_recording_chunk_buffer" ("snapshot_id" bigint NOT NULL, "created_at" timestamptz NOT NULL, "data" bytea NOT NULL, PRIMARY KEY ("created_at", "snapshot_id")) PARTITION BY RANGE ("created_at")`);
        await queryRunner.query(`CREATE TABLE "session_recording_chunk_buffer_default" PARTITION OF "session_recording_chunk_buffer" DEFAULT`);
        await queryRunner.query(`CREATE INDEX "session_recording_snapshots_object_key_idx" ON "session_recording_snapshots" ("object_key") WHERE "object_key" IS NOT NULL`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD CONSTRAINT "session_recording_snapshots_range_check" CHECK (("object_offset" IS NULL) = ("object_length" IS NULL) AND ("object_offset" IS NULL OR "object_key" IS NOT NULL))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP CONSTRAINT "session_recording_snapshots_range_check"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_object_key_idx"`);
        await queryRunner.query(`DROP TABLE "session_recording_chunk_buffer"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_buffered_idx"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD CONSTRAINT "session_recording_snapshots_stored_check" CHECK ("data" IS NOT NULL OR "object_key" IS NOT NULL)`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP COLUMN "object_length"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP COLUMN "object_offset"`);
        await queryRunner.query(`CREATE UNIQUE INDEX "session_recording_snapshots_object_key_idx" ON "session_recording_snapshots" ("object_key") WHERE "object_key" IS NOT NULL`);
    }

}
