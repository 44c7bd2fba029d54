import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which project each sharing token was issued in (`session_recording_sharing_tokens`), filled from the current
 * tokens: the shared-link route finds the project by the token here, then reads the sharing naming the project
 * (routed to one shard on Citus).
 */
export class SharingTokens1797800000000 implements MigrationInterface {
  name = 'SharingTokens1797800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "session_recording_sharing_tokens" ("access_token" character varying(64) NOT NULL, "team_id" integer NOT NULL, CONSTRAINT "session_recording_sharing_tokens_pkey" PRIMARY KEY ("access_token"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "session_recording_sharing_tokens" ADD CONSTRAINT "session_recording_sharing_tokens_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `INSERT INTO "session_recording_sharing_tokens" ("access_token", "team_id")
       SELECT "access_token", "team_id" FROM "session_recording_sharing"
       ON CONFLICT DO NOTHING`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "session_recording_sharing_tokens"`);
  }
}
