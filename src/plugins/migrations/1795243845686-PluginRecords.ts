import { MigrationInterface, QueryRunner } from "typeorm";

export class PluginRecords1795243845686 implements MigrationInterface {
    name = 'PluginRecords1795243845686'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE TABLE "plugin_activities" ("id" BIGSERIAL NOT NULL, "organization_id" uuid NOT NULL, "category" character varying(32) NOT NULL, "plugin_id" integer NOT NULL, "plugin_name" character varying(200) NOT NULL, "activity" character varying(16) NOT NULL, "user_id" integer, "user_uuid" uuid, "user_email" character varying(254), "changes" jsonb NOT NULL DEFAULT '[]', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "plugin_activities_activity_check" CHECK ("activity" IN ('created', 'updated', 'source_changed', 'upgraded', 'deleted')), CONSTRAINT "PK_3bafc9fece6a0b3ad5758d27b54" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "plugin_activities_organization_category_idx" ON "plugin_activities"  ("organization_id", "category", "created_at", "id") `);
        await queryRunner.query(`CREATE TABLE "plugins" ("id" SERIAL NOT NULL, "organization_id" uuid NOT NULL, "plugin_type" character varying(16) NOT NULL, "category" character varying(32) NOT NULL, "name" character varying(200) NOT NULL, "description" text, "url" character varying(800), "icon" character varying(800), "config_schema" jsonb NOT NULL DEFAULT '{}', "tag" character varying(200), "latest_tag" character varying(200), "latest_tag_checked_at" TIMESTAMP WITH TIME ZONE, "is_global" boolean NOT NULL DEFAULT false, "capabilities" jsonb NOT NULL DEFAULT '{}', "metrics" jsonb NOT NULL DEFAULT '{}', "public_jobs" jsonb NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "plugins_category_check" CHECK ("category" IN ('transformations', 'destinations', 'import_apps', 'frontend_apps')), CONSTRAINT "plugins_plugin_type_check" CHECK ("plugin_type" IN ('local', 'custom', 'repository', 'source', 'inline')), CONSTRAINT "PK_bb3d17826b76295957a253ba73e" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE UNIQUE INDEX "plugins_organization_url_key" ON "plugins"  ("organization_id", "url") WHERE "url" IS NOT NULL AND NOT "is_global"`);
        await queryRunner.query(`CREATE INDEX "plugins_global_category_idx" ON "plugins"  ("category", "id") WHERE "is_global"`);
        await queryRunner.query(`CREATE INDEX "plugins_organization_category_idx" ON "plugins"  ("organization_id", "category", "id") `);
        await queryRunner.query(`CREATE TABLE "plugin_configs" ("id" SERIAL NOT NULL, "team_id" integer NOT NULL, "plugin_id" integer NOT NULL, "enabled" boolean NOT NULL DEFAULT false, "order" integer NOT NULL DEFAULT '0', "config" jsonb NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_bdd4a426a59373a5783d9a65857" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "plugin_configs_plugin_idx" ON "plugin_configs"  ("plugin_id") `);
        await queryRunner.query(`CREATE INDEX "plugin_configs_team_order_idx" ON "plugin_configs"  ("team_id", "order", "id") `);
        await queryRunner.query(`CREATE UNIQUE INDEX "plugin_configs_team_plugin_key" ON "plugin_configs"  ("team_id", "plugin_id") `);
        await queryRunner.query(`CREATE TABLE "plugin_source_files" ("plugin_id" integer NOT NULL, "filename" character varying(200) NOT NULL, "source" text NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_3961ad0127289adb5dad5a52f42" PRIMARY KEY ("plugin_id", "filename"))`);
        await queryRunner.query(`ALTER TABLE "plugin_activities" ADD CONSTRAINT "FK_9dd78beb9d30105d75d667b4d55" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "plugins" ADD CONSTRAINT "FK_9bd6522b64c4b238796b898e94a" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "plugin_configs" ADD CONSTRAINT "FK_38a877214c2a45683a46fa60004" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "plugin_configs" ADD CONSTRAINT "FK_a117c2cb460725a85ce6ab67c6d" FOREIGN KEY ("plugin_id") REFERENCES "plugins"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "plugin_source_files" ADD CONSTRAINT "FK_7171568ada8c6cd0093dcf61a13" FOREIGN KEY ("plugin_id") REFERENCES "plugins"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "plugin_source_files" DROP CONSTRAINT "FK_7171568ada8c6cd0093dcf61a13"`);
        await queryRunner.query(`ALTER TABLE "plugin_configs" DROP CONSTRAINT "FK_a117c2cb460725a85ce6ab67c6d"`);
        await queryRunner.query(`ALTER TABLE "plugin_configs" DROP CONSTRAINT "FK_38a877214c2a45683a46fa60004"`);
        await queryRunner.query(`ALTER TABLE "plugins" DROP CONSTRAINT "FK_9bd6522b64c4b238796b898e94a"`);
        await queryRunner.query(`ALTER TABLE "plugin_activities" DROP CONSTRAINT "FK_9dd78beb9d30105d75d667b4d55"`);
        await queryRunner.query(`DROP TABLE "plugin_source_files"`);
        await queryRunner.query(`DROP INDEX "public"."plugin_configs_team_plugin_key"`);
        await queryRunner.query(`DROP INDEX "public"."plugin_configs_team_order_idx"`);
        await queryRunner.query(`DROP INDEX "public"."plugin_configs_plugin_idx"`);
        await queryRunner.query(`DROP TABLE "plugin_configs"`);
        await queryRunner.query(`DROP INDEX "public"."plugins_organization_category_idx"`);
        await queryRunner.query(`DROP INDEX "public"."plugins_global_category_idx"`);
        await queryRunner.query(`DROP INDEX "public"."plugins_organization_url_key"`);
        await queryRunner.query(`DROP TABLE "plugins"`);
        await queryRunner.query(`DROP INDEX "public"."plugin_activities_organization_category_idx"`);
        await queryRunner.query(`DROP TABLE "plugin_activities"`);
    }

}
