import { MigrationInterface, QueryRunner } from 'typeorm';

export class Domains1795241288204 implements MigrationInterface {
  name = 'Domains1795241288204';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "organization_domains" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "domain" character varying(253) COLLATE "C" NOT NULL, "verification_challenge" character varying(128) NOT NULL, "verified_at" TIMESTAMP WITH TIME ZONE, "jit_provisioning_enabled" boolean NOT NULL DEFAULT false, "sso_enforcement" character varying(28) NOT NULL DEFAULT '', "saml_entity_id" character varying(512) NOT NULL DEFAULT '', "saml_acs_url" character varying(512) NOT NULL DEFAULT '', "saml_x509_cert" text NOT NULL DEFAULT '', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "organization_domains_domain_key" UNIQUE ("domain"), CONSTRAINT "organization_domains_sso_enforcement_check" CHECK ("sso_enforcement" IN ('', 'google-oauth2', 'github', 'gitlab', 'saml')), CONSTRAINT "organization_domains_domain_lower_check" CHECK ("domain" = lower("domain")), CONSTRAINT "PK_66c1149e9a4faf8d657161b263f" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "organization_domains_organization_idx" ON "organization_domains"  ("organization_id", "domain") `,
    );
    await queryRunner.query(
      `ALTER TABLE "organization_domains" ADD CONSTRAINT "FK_a21225185191ef9e3772dc04e8f" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "organization_domains" DROP CONSTRAINT "FK_a21225185191ef9e3772dc04e8f"`,
    );
    await queryRunner.query(`DROP INDEX "public"."organization_domains_organization_idx"`);
    await queryRunner.query(`DROP TABLE "organization_domains"`);
  }
}
