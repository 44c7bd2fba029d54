import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * PostHog's `ingested_event` of a project: set by the insert of its first analytics events, and here for the
 * projects that already have some.
 */
export class IngestedEvent1795927270000 implements MigrationInterface {
  name = 'IngestedEvent1795927270000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "projects" ADD "ingested_event" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `UPDATE "projects" p SET "ingested_event" = true WHERE EXISTS (SELECT 1 FROM "events" e WHERE e."team_id" = p."id")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "ingested_event"`);
  }
}
