import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Recording access rules (RecordingAccessRuleEntity) and the roles each lets watch what it matches
 * (RecordingAccessRuleRoleEntity). Both go with their project, rule and role.
 */
export class RecordingAccessRules1796000400000 implements MigrationInterface {
  name = 'RecordingAccessRules1796000400000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "recording_access_rules" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "team_id" integer NOT NULL, "kind" character varying(20) NOT NULL, "url_pattern" character varying(500), "property_key" character varying(200), "property_operator" character varying(16), "property_value" character varying(1000), "created_by_id" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "recording_access_rules_match_check" CHECK (("kind" = 'start_url' AND "url_pattern" IS NOT NULL AND "property_key" IS NULL AND "property_operator" IS NULL AND "property_value" IS NULL) OR ("kind" = 'person_property' AND "url_pattern" IS NULL AND "property_key" IS NOT NULL AND "property_operator" IN ('exact', 'is_not', 'icontains') AND "property_value" IS NOT NULL)), CONSTRAINT "recording_access_rules_kind_check" CHECK ("kind" IN ('start_url', 'person_property')), CONSTRAINT "recording_access_rules_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "recording_access_rules_team_idx" ON "recording_access_rules" ("team_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "recording_access_rule_roles" ("rule_id" uuid NOT NULL, "role_id" uuid NOT NULL, CONSTRAINT "recording_access_rule_roles_pkey" PRIMARY KEY ("rule_id", "role_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "recording_access_rule_roles_role_idx" ON "recording_access_rule_roles" ("role_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "recording_access_rules" ADD CONSTRAINT "recording_access_rules_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "recording_access_rules" ADD CONSTRAINT "recording_access_rules_created_by_id_fkey" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "recording_access_rule_roles" ADD CONSTRAINT "recording_access_rule_roles_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "recording_access_rules"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "recording_access_rule_roles" ADD CONSTRAINT "recording_access_rule_roles_role_id_fkey" FOREIGN KEY ("role_id") REFERENCES "roles"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "recording_access_rule_roles"`);
    await queryRunner.query(`DROP TABLE "recording_access_rules"`);
  }
}
