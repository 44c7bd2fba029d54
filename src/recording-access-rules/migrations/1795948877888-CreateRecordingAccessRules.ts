import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The recording_access_rules table (RecordingAccessRuleEntity). */
export class CreateRecordingAccessRules1795948877888 implements MigrationInterface {
  name = 'CreateRecordingAccessRules1795948877888';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "recording_access_rules" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "project_id" integer NOT NULL, "name" character varying(200) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "recording_access_rules_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "recording_access_rules_project_idx" ON "recording_access_rules" ("project_id", "created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "recording_access_rules" ADD CONSTRAINT "recording_access_rules_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "recording_access_rules" DROP CONSTRAINT "recording_access_rules_project_id_fkey"`,
    );
    await queryRunner.query(`DROP INDEX "public"."recording_access_rules_project_idx"`);
    await queryRunner.query(`DROP TABLE "recording_access_rules"`);
  }
}
