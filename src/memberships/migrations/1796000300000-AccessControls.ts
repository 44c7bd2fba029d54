import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Access controls (AccessControlEntity, PostHog's `ee_accesscontrol`): who may see what of a project, at the
 * project, resource and object levels. The unique key treats NULLs as equal (one default rule per target), so it
 * is written by hand (declared with synchronize: false on the entity). The project access an invite granted
 * (`membership_project_access`) becomes project-level rules of the member, and that table goes.
 */
export class AccessControls1796000300000 implements MigrationInterface {
  name = 'AccessControls1796000300000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "access_controls" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "team_id" integer NOT NULL, "resource" character varying(32) NOT NULL, "resource_id" character varying(36), "access_level" character varying(32) NOT NULL, "organization_member_id" uuid, "role_id" uuid, "created_by_id" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "access_controls_one_subject_check" CHECK ("organization_member_id" IS NULL OR "role_id" IS NULL), CONSTRAINT "access_controls_level_check" CHECK ("access_level" IN ('none', 'member', 'admin', 'viewer', 'editor', 'manager')), CONSTRAINT "access_controls_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "access_controls_target_key" ON "access_controls" ("team_id", "resource", "resource_id", "organization_member_id", "role_id") NULLS NOT DISTINCT`,
    );
    await queryRunner.query(
      `CREATE INDEX "access_controls_member_idx" ON "access_controls" ("organization_member_id", "team_id") WHERE "organization_member_id" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "access_controls_default_idx" ON "access_controls" ("team_id") WHERE "organization_member_id" IS NULL AND "role_id" IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "access_controls_role_idx" ON "access_controls" ("role_id", "team_id") WHERE "role_id" IS NOT NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_controls" ADD CONSTRAINT "access_controls_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_controls" ADD CONSTRAINT "access_controls_organization_member_id_fkey" FOREIGN KEY ("organization_member_id") REFERENCES "organization_memberships"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_controls" ADD CONSTRAINT "access_controls_role_id_fkey" FOREIGN KEY ("role_id") REFERENCES "roles"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_controls" ADD CONSTRAINT "access_controls_created_by_id_fkey" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    // What invites granted becomes the member's project-level rules.
    await queryRunner.query(
      `INSERT INTO "access_controls" ("team_id", "resource", "resource_id", "access_level", "organization_member_id")
       SELECT a.project_id, 'project', a.project_id::text, a.level, a.membership_id FROM "membership_project_access" a`,
    );
    await queryRunner.query(`DROP TABLE "membership_project_access"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "membership_project_access" ("membership_id" uuid NOT NULL, "project_id" integer NOT NULL, "level" character varying(8) NOT NULL, CONSTRAINT "membership_project_access_level_check" CHECK ("level" IN ('member', 'admin')), CONSTRAINT "PK_382940c3fb330841f49ae997c1a" PRIMARY KEY ("membership_id", "project_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "membership_project_access_project_idx" ON "membership_project_access"  ("project_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "membership_project_access" ADD CONSTRAINT "FK_66d3908f9d65e50e9250f173071" FOREIGN KEY ("membership_id") REFERENCES "organization_memberships"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "membership_project_access" ADD CONSTRAINT "FK_9544b9ea17933329ce33aeb85d2" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `INSERT INTO "membership_project_access" ("membership_id", "project_id", "level")
       SELECT a.organization_member_id, a.team_id, a.access_level FROM "access_controls" a
        WHERE a.resource = 'project' AND a.resource_id = a.team_id::text AND a.organization_member_id IS NOT NULL
          AND a.access_level IN ('member', 'admin')`,
    );
    await queryRunner.query(`DROP TABLE "access_controls"`);
  }
}
