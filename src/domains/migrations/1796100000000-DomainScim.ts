import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SCIM provisioning on a domain: whether it is on, and the SHA-256 digest of its bearer token (the token itself is
 * shown once and never stored). One domain per digest.
 */
export class DomainScim1796100000000 implements MigrationInterface {
  name = 'DomainScim1796100000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "organization_domains" ADD "scim_enabled" boolean NOT NULL DEFAULT false`,
    );
    await queryRunner.query(`ALTER TABLE "organization_domains" ADD "scim_bearer_token_hash" character(64)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "organization_domains_scim_token_key" ON "organization_domains" ("scim_bearer_token_hash") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."organization_domains_scim_token_key"`);
    await queryRunner.query(`ALTER TABLE "organization_domains" DROP COLUMN "scim_bearer_token_hash"`);
    await queryRunner.query(`ALTER TABLE "organization_domains" DROP COLUMN "scim_enabled"`);
  }
}
