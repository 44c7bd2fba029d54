import type { MigrationInterface, QueryRunner } from 'typeorm';

/** SCIM provisioning: the identities an identity provider provisioned, and the SCIM request log. */
export class Scim1796100000001 implements MigrationInterface {
  name = 'Scim1796100000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "scim_identities" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "domain_id" uuid NOT NULL, "user_id" integer NOT NULL, "external_id" character varying(255), "display_name" character varying(255) NOT NULL DEFAULT '', "active" boolean NOT NULL DEFAULT true, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "scim_identities_organization_user_key" UNIQUE ("organization_id", "user_id"), CONSTRAINT "scim_identities_organization_external_id_key" UNIQUE ("organization_id", "external_id"), CONSTRAINT "scim_identities_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "scim_identities_domain_idx" ON "scim_identities" ("domain_id", "created_at", "id") `,
    );
    await queryRunner.query(`CREATE INDEX "scim_identities_user_idx" ON "scim_identities" ("user_id") `);
    await queryRunner.query(
      `ALTER TABLE "scim_identities" ADD CONSTRAINT "scim_identities_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "scim_identities" ADD CONSTRAINT "scim_identities_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "organization_domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "scim_identities" ADD CONSTRAINT "scim_identities_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "scim_request_logs" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "domain_id" uuid NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "method" character varying(10) NOT NULL, "path" character varying(2048) NOT NULL, "status" smallint NOT NULL, "duration_ms" integer NOT NULL, "request_headers" jsonb NOT NULL, "request_body" text, "response_body" text, CONSTRAINT "scim_request_logs_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "scim_request_logs_domain_idx" ON "scim_request_logs" ("domain_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "scim_request_logs_created_at_idx" ON "scim_request_logs" ("created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "scim_request_logs" ADD CONSTRAINT "scim_request_logs_domain_id_fkey" FOREIGN KEY ("domain_id") REFERENCES "organization_domains"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "scim_request_logs"`);
    await queryRunner.query(`DROP TABLE "scim_identities"`);
  }
}
