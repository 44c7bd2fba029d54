import type { MigrationInterface, QueryRunner } from 'typeorm';

export class RecordingKeys1795940000000 implements MigrationInterface {
    name = 'RecordingKeys1795940000000';

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE TABLE "session_recording_keys" ("team_id" integer NOT NULL, "session_id" character varying(70) COLLATE "C" NOT NULL, "wrapped_key" bytea NOT NULL, "kek_id" character varying(16) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_477621d55dde2ac72f287e580cd" PRIMARY KEY ("team_id", "session_id"))`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD "encrypted" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD CONSTRAINT "session_recording_snapshots_encrypted_check" CHECK (NOT "encrypted" OR "object_offset" IS NOT NULL)`);
        await queryRunner.query(`ALTER TABLE "session_recording_keys" ADD CONSTRAINT "FK_f9d5b40dc0ec37a8073124c5447" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_keys" DROP CONSTRAINT "FK_f9d5b40dc0ec37a8073124c5447"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP CONSTRAINT "session_recording_snapshots_encrypted_check"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP COLUMN "encrypted"`);
        await queryRunner.query(`DROP TABLE "session_recording_keys"`);
    }
}
