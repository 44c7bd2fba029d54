import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Roles of an organization (RoleEntity), their members (RoleMembershipEntity) and the organization's default
 * role (`organizations.default_role_id`). A role name is unique in its organization regardless of case.
 */
export class RolesSchema1796000200000 implements MigrationInterface {
  name = 'RolesSchema1796000200000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "roles" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "name" character varying(200) NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "created_by_id" integer, CONSTRAINT "roles_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "roles_organization_name_key" ON "roles" ("organization_id", lower("name"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "roles" ADD CONSTRAINT "roles_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "roles" ADD CONSTRAINT "roles_created_by_id_fkey" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `CREATE TABLE "role_memberships" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "role_id" uuid NOT NULL, "user_id" integer NOT NULL, "organization_member_id" uuid NOT NULL, "joined_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE DEFAULT now(), CONSTRAINT "role_memberships_role_user_key" UNIQUE ("role_id", "user_id"), CONSTRAINT "role_memberships_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "role_memberships_user_idx" ON "role_memberships" ("user_id") `);
    await queryRunner.query(
      `CREATE INDEX "role_memberships_organization_member_idx" ON "role_memberships" ("organization_member_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "role_memberships" ADD CONSTRAINT "role_memberships_role_id_fkey" FOREIGN KEY ("role_id") REFERENCES "roles"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "role_memberships" ADD CONSTRAINT "role_memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "role_memberships" ADD CONSTRAINT "role_memberships_organization_member_id_fkey" FOREIGN KEY ("organization_member_id") REFERENCES "organization_memberships"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`ALTER TABLE "organizations" ADD "default_role_id" uuid`);
    await queryRunner.query(
      `ALTER TABLE "organizations" ADD CONSTRAINT "organizations_default_role_id_fkey" FOREIGN KEY ("default_role_id") REFERENCES "roles"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "organizations" DROP CONSTRAINT "organizations_default_role_id_fkey"`,
    );
    await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "default_role_id"`);
    await queryRunner.query(`DROP TABLE "role_memberships"`);
    await queryRunner.query(`DROP TABLE "roles"`);
  }
}
