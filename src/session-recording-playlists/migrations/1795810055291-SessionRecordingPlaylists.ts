import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Saved views of a project's recordings (PostHog's session recording playlists) and the recordings pinned to
 * them; a pin goes with its recording when the purge deletes it.
 */
export class SessionRecordingPlaylists1795810055291 implements MigrationInterface {
    name = 'SessionRecordingPlaylists1795810055291'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE TABLE "session_recording_playlists" ("id" SERIAL NOT NULL, "team_id" integer NOT NULL, "short_id" character varying(12) COLLATE "C" NOT NULL, "name" character varying(400), "derived_name" character varying(400), "description" text NOT NULL DEFAULT '', "pinned" boolean NOT NULL DEFAULT false, "deleted" boolean NOT NULL DEFAULT false, "filters" jsonb NOT NULL DEFAULT '{}', "created_by_id" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_modified_by_id" integer, "last_modified_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "session_recording_playlists_team_short_id_key" UNIQUE ("team_id", "short_id"), CONSTRAINT "PK_4ac43c983aa22bfdf32969d4724" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "session_recording_playlists_team_modified_idx" ON "session_recording_playlists"  ("team_id", "last_modified_at") `);
        await queryRunner.query(`CREATE TABLE "session_recording_playlist_items" ("playlist_id" integer NOT NULL, "session_id" character varying(70) COLLATE "C" NOT NULL, "team_id" integer NOT NULL, "added_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_97f37196a3ccca1a3d6c975a217" PRIMARY KEY ("playlist_id", "session_id"))`);
        await queryRunner.query(`CREATE INDEX "session_recording_playlist_items_recording_idx" ON "session_recording_playlist_items"  ("team_id", "session_id") `);
        await queryRunner.query(`ALTER TABLE "session_recording_playlists" ADD CONSTRAINT "FK_8b1a10989ba9b0b9c68ee1dab52" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlists" ADD CONSTRAINT "FK_e8f41bf5b60502882f86ed1c970" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlists" ADD CONSTRAINT "FK_5f92ca88a855898e5dd6077bc80" FOREIGN KEY ("last_modified_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlist_items" ADD CONSTRAINT "FK_d796591fa17e06dea3f8ce02b26" FOREIGN KEY ("playlist_id") REFERENCES "session_recording_playlists"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlist_items" ADD CONSTRAINT "FK_9200b26a4ee37b49f987e3ab998" FOREIGN KEY ("team_id", "session_id") REFERENCES "session_recordings"("team_id","session_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_playlist_items" DROP CONSTRAINT "FK_9200b26a4ee37b49f987e3ab998"`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlist_items" DROP CONSTRAINT "FK_d796591fa17e06dea3f8ce02b26"`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlists" DROP CONSTRAINT "FK_5f92ca88a855898e5dd6077bc80"`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlists" DROP CONSTRAINT "FK_e8f41bf5b60502882f86ed1c970"`);
        await queryRunner.query(`ALTER TABLE "session_recording_playlists" DROP CONSTRAINT "FK_8b1a10989ba9b0b9c68ee1dab52"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_playlist_items_recording_idx"`);
        await queryRunner.query(`DROP TABLE "session_recording_playlist_items"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_playlists_team_modified_idx"`);
        await queryRunner.query(`DROP TABLE "session_recording_playlists"`);
    }

}
