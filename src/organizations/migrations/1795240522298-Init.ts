import { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1795240522298 implements MigrationInterface {
  name = 'Init1795240522298';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "users" ("id" SERIAL NOT NULL, "uuid" uuid NOT NULL DEFAULT gen_random_uuid(), "email" character varying(254) NOT NULL, "distinct_id" character varying(200) NOT NULL, "first_name" character varying(150) NOT NULL DEFAULT '', "last_name" character varying(150) NOT NULL DEFAULT '', "is_email_verified" boolean NOT NULL DEFAULT false, "hedgehog_config" jsonb, "last_login" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_951b8f1dfc94ac1d0301a14b7e1" UNIQUE ("uuid"), CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "organizations" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "name" character varying(64) NOT NULL, "slug" character varying(48) NOT NULL, "logo_media_id" uuid, "plugins_access_level" smallint NOT NULL DEFAULT '9', "available_product_features" jsonb NOT NULL DEFAULT '[]'::jsonb, "is_member_join_email_enabled" boolean NOT NULL DEFAULT true, "enforce_2fa" boolean NOT NULL DEFAULT false, "customer_id" character varying(200), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_963693341bd612aa01ddf3a4b68" UNIQUE ("slug"), CONSTRAINT "organizations_plugins_access_level_check" CHECK ("plugins_access_level" IN (0, 3, 6, 9)), CONSTRAINT "PK_6b031fcd0863e3f6b44230163f9" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "organization_memberships" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "user_id" integer NOT NULL, "level" smallint NOT NULL, "joined_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "organization_memberships_organization_user_key" UNIQUE ("organization_id", "user_id"), CONSTRAINT "organization_memberships_level_check" CHECK ("level" IN (1, 8, 15)), CONSTRAINT "PK_cd7be805730a4c778a5f45364af" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "organization_memberships_user_idx" ON "organization_memberships"  ("user_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "personal_api_keys" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "user_id" integer NOT NULL, "label" character varying(40) NOT NULL DEFAULT '', "secure_value" character(64) NOT NULL, "mask_value" character varying(16) NOT NULL, "scopes" text array NOT NULL, "scoped_organizations" uuid array, "scoped_teams" integer array, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_used_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "UQ_22b4c47a263e07779519a2bec47" UNIQUE ("secure_value"), CONSTRAINT "personal_api_keys_scopes_check" CHECK (cardinality("scopes") > 0), CONSTRAINT "PK_9bbc11381d83b5067d119e64e5d" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "personal_api_keys_user_idx" ON "personal_api_keys"  ("user_id") `);
    await queryRunner.query(
      `CREATE TABLE "projects" ("id" SERIAL NOT NULL, "uuid" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "name" character varying(200) NOT NULL, "api_token" character varying(64) NOT NULL, "timezone" character varying(64) NOT NULL DEFAULT 'UTC', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_fc9f1e64d4626f18beff534a9f3" UNIQUE ("uuid"), CONSTRAINT "UQ_3d0db402f23035853769a9e811d" UNIQUE ("api_token"), CONSTRAINT "PK_6271df0a7aed1d6c0691ce6ac50" PRIMARY KEY ("id"))`,
    );
    // E-mail addresses are unique regardless of case (not expressible as an entity index).
    await queryRunner.query(`CREATE UNIQUE INDEX "users_email_lower_key" ON "users" (lower("email"))`);
    await queryRunner.query(
      `CREATE INDEX "projects_organization_idx" ON "projects"  ("organization_id", "id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "organization_memberships" ADD CONSTRAINT "FK_86ae2efbb9ce84dd652e0c96a49" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "organization_memberships" ADD CONSTRAINT "FK_5352fc550034d507d6c76dd2901" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "personal_api_keys" ADD CONSTRAINT "FK_bafaa43119e0cb1588f22e3575f" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "projects" ADD CONSTRAINT "FK_585c8ce06628c70b70100bfb842" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "projects" DROP CONSTRAINT "FK_585c8ce06628c70b70100bfb842"`);
    await queryRunner.query(
      `ALTER TABLE "personal_api_keys" DROP CONSTRAINT "FK_bafaa43119e0cb1588f22e3575f"`,
    );
    await queryRunner.query(
      `ALTER TABLE "organization_memberships" DROP CONSTRAINT "FK_5352fc550034d507d6c76dd2901"`,
    );
    await queryRunner.query(
      `ALTER TABLE "organization_memberships" DROP CONSTRAINT "FK_86ae2efbb9ce84dd652e0c96a49"`,
    );
    await queryRunner.query(`DROP INDEX "public"."projects_organization_idx"`);
    await queryRunner.query(`DROP TABLE "projects"`);
    await queryRunner.query(`DROP INDEX "public"."personal_api_keys_user_idx"`);
    await queryRunner.query(`DROP TABLE "personal_api_keys"`);
    await queryRunner.query(`DROP INDEX "public"."organization_memberships_user_idx"`);
    await queryRunner.query(`DROP TABLE "organization_memberships"`);
    await queryRunner.query(`DROP TABLE "organizations"`);
    await queryRunner.query(`DROP INDEX "public"."users_email_lower_key"`);
    await queryRunner.query(`DROP TABLE "users"`);
  }
}
