import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Written by hand (declared with synchronize: false on the entity): the listed recordings of a project by
 * session id, with their start (INCLUDE), so the recordings list filtered by an event finds the recordings of the
 * sessions that had it (and counts them) by probing this index with those session ids, an index-only scan that
 * follows the number of such sessions, rather than matching every recording of the project against them.
 */
export class RecordingsSessionFilterIndex1795941230000 implements MigrationInterface {
    name = 'RecordingsSessionFilterIndex1795941230000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE INDEX "session_recordings_team_session_live_idx" ON "session_recordings" ("team_id", "session_id") INCLUDE ("start_time") WHERE "deleted_at" IS NULL`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."session_recordings_team_session_live_idx"`);
    }

}
