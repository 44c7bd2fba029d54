import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plugin tenancy: organizations are created with `plugins_access_level` 6 (install) instead of 9 (root), and a
 * plugin record's deletion no longer cascades to the configs other organizations' projects hold of it.
 *
 * Existing organizations were all created with 9, which nobody chose. They drop to 6, except those that own a
 * global record today: they keep 9, so they can still manage what they published. The operator raises any other
 * organization with `node dist/cli.js orgs set-plugins-access --org ID --level 9`. `down` restores the default
 * and the cascade but not the levels (it cannot know which were lowered here).
 */
export class PluginTenancy1795467468180 implements MigrationInterface {
  name = 'PluginTenancy1795467468180';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "plugin_configs" DROP CONSTRAINT "FK_a117c2cb460725a85ce6ab67c6d"`);
    await queryRunner.query(`ALTER TABLE "organizations" ALTER COLUMN "plugins_access_level" SET DEFAULT '6'`);
    await queryRunner.query(
      `UPDATE "organizations" o SET "plugins_access_level" = 6
        WHERE o."plugins_access_level" = 9
          AND NOT EXISTS (SELECT 1 FROM "plugins" p WHERE p."organization_id" = o."id" AND p."is_global")`,
    );
    await queryRunner.query(
      `ALTER TABLE "plugin_configs" ADD CONSTRAINT "plugin_configs_plugin_id_fkey" FOREIGN KEY ("plugin_id") REFERENCES "plugins"("id") ON DELETE NO ACTION ON UPDATE NO ACTION DEFERRABLE INITIALLY DEFERRED`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "plugin_configs" DROP CONSTRAINT "plugin_configs_plugin_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "organizations" ALTER COLUMN "plugins_access_level" SET DEFAULT '9'`);
    await queryRunner.query(
      `ALTER TABLE "plugin_configs" ADD CONSTRAINT "FK_a117c2cb460725a85ce6ab67c6d" FOREIGN KEY ("plugin_id") REFERENCES "plugins"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }
}
