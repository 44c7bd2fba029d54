import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Written by hand (declared with synchronize: false on the entity): the listed recordings of a person, by
 * project, so the recordings list filtered by person properties finds its recordings (their start and session
 * id: the page's keys and the count) from this index alone (an index-only scan per matching person) instead of
 * reading every recording row of those persons.
 */
export class RecordingsPersonFilterIndex1795920000000 implements MigrationInterface {
    name = 'RecordingsPersonFilterIndex1795920000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE INDEX "session_recordings_team_person_start_idx" ON "session_recordings" ("team_id", "person_id", "start_time", "session_id") WHERE "deleted_at" IS NULL`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "public"."session_recordings_team_person_start_idx"`);
    }

}
