import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organization service accounts: the service_accounts table (ServiceAccountEntity) and `users.is_service_account`
 * (false for every existing user: they are people).
 */
export class ServiceAccounts1796000610000 implements MigrationInterface {
  name = 'ServiceAccounts1796000610000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "service_accounts" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "user_id" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_by_id" integer, "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "service_accounts_user_id_key" UNIQUE ("user_id"), CONSTRAINT "service_accounts_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "service_accounts_organization_idx" ON "service_accounts"  ("organization_id", "created_at") `,
    );
    await queryRunner.query(`ALTER TABLE "users" ADD "is_service_account" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `ALTER TABLE "service_accounts" ADD CONSTRAINT "service_accounts_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_accounts" ADD CONSTRAINT "service_accounts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "service_accounts" ADD CONSTRAINT "service_accounts_created_by_id_fkey" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "service_accounts" DROP CONSTRAINT "service_accounts_created_by_id_fkey"`,
    );
    await queryRunner.query(`ALTER TABLE "service_accounts" DROP CONSTRAINT "service_accounts_user_id_fkey"`);
    await queryRunner.query(
      `ALTER TABLE "service_accounts" DROP CONSTRAINT "service_accounts_organization_id_fkey"`,
    );
    await queryRunner.query(`ALTER TABLE "users" DROP COLUMN "is_service_account"`);
    await queryRunner.query(`DROP INDEX "public"."service_accounts_organization_idx"`);
    await queryRunner.query(`DROP TABLE "service_accounts"`);
  }
}
