import { MigrationInterface, QueryRunner } from "typeorm";

export class MembersInvites1795241523230 implements MigrationInterface {
    name = 'MembersInvites1795241523230'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE TABLE "organization_invites" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "target_email" character varying(254) NOT NULL, "first_name" character varying(30) NOT NULL DEFAULT '', "level" smallint NOT NULL DEFAULT '1', "message" character varying(1000), "private_project_access" jsonb NOT NULL DEFAULT '[]', "send_email" boolean NOT NULL DEFAULT true, "emailing_attempt_made" boolean NOT NULL DEFAULT false, "created_by_id" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "organization_invites_level_check" CHECK ("level" IN (1, 8, 15)), CONSTRAINT "PK_e0799bee14bf23b82851d55fd05" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "organization_invites_organization_created_idx" ON "organization_invites"  ("organization_id", "created_at") `);
        // One invite per address and organization, any case (declared with synchronize: false on the entity).
        await queryRunner.query(`CREATE UNIQUE INDEX "organization_invites_organization_email_key" ON "organization_invites" ("organization_id", lower("target_email"))`);
        await queryRunner.query(`CREATE TABLE "membership_project_access" ("membership_id" uuid NOT NULL, "project_id" integer NOT NULL, "level" character varying(8) NOT NULL, CONSTRAINT "membership_project_access_level_check" CHECK ("level" IN ('member', 'admin')), CONSTRAINT "PK_382940c3fb330841f49ae997c1a" PRIMARY KEY ("membership_id", "project_id"))`);
        await queryRunner.query(`CREATE INDEX "membership_project_access_project_idx" ON "membership_project_access"  ("project_id") `);
        await queryRunner.query(`ALTER TABLE "organization_invites" ADD CONSTRAINT "FK_86ee44dc17238efe40601b14540" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "organization_invites" ADD CONSTRAINT "FK_61a2c0f41e2772eee0118c28d64" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "membership_project_access" ADD CONSTRAINT "FK_66d3908f9d65e50e9250f173071" FOREIGN KEY ("membership_id") REFERENCES "organization_memberships"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "membership_project_access" ADD CONSTRAINT "FK_9544b9ea17933329ce33aeb85d2" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "membership_project_access" DROP CONSTRAINT "FK_9544b9ea17933329ce33aeb85d2"`);
        await queryRunner.query(`ALTER TABLE "membership_project_access" DROP CONSTRAINT "FK_66d3908f9d65e50e9250f173071"`);
        await queryRunner.query(`ALTER TABLE "organization_invites" DROP CONSTRAINT "FK_61a2c0f41e2772eee0118c28d64"`);
        await queryRunner.query(`ALTER TABLE "organization_invites" DROP CONSTRAINT "FK_86ee44dc17238efe40601b14540"`);
        await queryRunner.query(`DROP INDEX "public"."membership_project_access_project_idx"`);
        await queryRunner.query(`DROP TABLE "membership_project_access"`);
        await queryRunner.query(`DROP INDEX "public"."organization_invites_organization_email_key"`);
        await queryRunner.query(`DROP INDEX "public"."organization_invites_organization_created_idx"`);
        await queryRunner.query(`DROP TABLE "organization_invites"`);
    }

}
