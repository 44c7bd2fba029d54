import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The project_secret_api_keys table (ProjectSecretApiKeyEntity): PostHog's project secret API keys, `phs_…`
 * secrets of a project stored as their SHA-256 digest, at most 10 a project (checked by the service), labels
 * unique within a project.
 */
export class ProjectSecretApiKeys1796000600000 implements MigrationInterface {
  name = 'ProjectSecretApiKeys1796000600000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "project_secret_api_keys" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "project_id" integer NOT NULL, "label" character varying(40) NOT NULL, "secure_value" character(64) NOT NULL, "mask_value" character varying(16) NOT NULL, "scopes" text array NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_by_id" integer, "last_used_at" TIMESTAMP WITH TIME ZONE, "last_rolled_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "project_secret_api_keys_project_label_key" UNIQUE ("project_id", "label"), CONSTRAINT "project_secret_api_keys_scopes_check" CHECK (cardinality("scopes") > 0), CONSTRAINT "project_secret_api_keys_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "project_secret_api_keys_secure_value_key" ON "project_secret_api_keys" ("secure_value") `,
    );
    await queryRunner.query(
      `CREATE INDEX "project_secret_api_keys_project_idx" ON "project_secret_api_keys" ("project_id", "created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "project_secret_api_keys" ADD CONSTRAINT "project_secret_api_keys_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_secret_api_keys" ADD CONSTRAINT "project_secret_api_keys_created_by_id_fkey" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "project_secret_api_keys" DROP CONSTRAINT "project_secret_api_keys_created_by_id_fkey"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_secret_api_keys" DROP CONSTRAINT "project_secret_api_keys_project_id_fkey"`,
    );
    await queryRunner.query(`DROP INDEX "public"."project_secret_api_keys_project_idx"`);
    await queryRunner.query(`DROP INDEX "public"."project_secret_api_keys_secure_value_key"`);
    await queryRunner.query(`DROP TABLE "project_secret_api_keys"`);
  }
}
