import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Project secret API tokens (`phs_` + 43 url-safe characters, 256 bits before the fixed bits of two v4 UUIDs):
 * every existing project gets one.
 */
export class ProjectSecretApiToken1795970000000 implements MigrationInterface {
    name = 'ProjectSecretApiToken1795970000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" ADD "secret_api_token" character varying(64)`);
        await queryRunner.query(`UPDATE "projects" SET "secret_api_token" = 'phs_' || rtrim(translate(encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'), '+/', '-_'), '=')`);
        await queryRunner.query(`ALTER TABLE "projects" ALTER COLUMN "secret_api_token" SET NOT NULL`);
        await queryRunner.query(`ALTER TABLE "projects" ADD CONSTRAINT "UQ_5626e9f59977b6a6925e3295df3" UNIQUE ("secret_api_token")`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "secret_api_token_backup" character varying(64)`);
        await queryRunner.query(`ALTER TABLE "projects" ADD CONSTRAINT "UQ_b9aa88506b61f26573c4de02461" UNIQUE ("secret_api_token_backup")`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" DROP CONSTRAINT "UQ_b9aa88506b61f26573c4de02461"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "secret_api_token_backup"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP CONSTRAINT "UQ_5626e9f59977b6a6925e3295df3"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "secret_api_token"`);
    }

}
