import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A role provisioned as a SCIM Group keeps the identity provider's `externalId` (Entra and Okta send it). */
export class RoleScimExternalId1797300000001 implements MigrationInterface {
  name = 'RoleScimExternalId1797300000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "roles" ADD "scim_external_id" character varying(255)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "roles" DROP COLUMN "scim_external_id"`);
  }
}
