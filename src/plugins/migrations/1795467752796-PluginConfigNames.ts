import { MigrationInterface, QueryRunner } from "typeorm";

export class PluginConfigNames1795467752796 implements MigrationInterface {
    name = 'PluginConfigNames1795467752796'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "plugin_configs" ADD "name" character varying(400)`);
        await queryRunner.query(`ALTER TABLE "plugin_configs" ADD "description" character varying(1000)`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "plugin_configs" DROP COLUMN "description"`);
        await queryRunner.query(`ALTER TABLE "plugin_configs" DROP COLUMN "name"`);
    }

}
