import { MigrationInterface, QueryRunner } from "typeorm";

export class OrganizationSettings1795467478000 implements MigrationInterface {
    name = 'OrganizationSettings1795467478000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "organizations" ADD "members_can_invite" boolean NOT NULL DEFAULT true`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD "members_can_use_personal_api_keys" boolean NOT NULL DEFAULT true`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD "allow_publicly_shared_resources" boolean NOT NULL DEFAULT true`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD "is_ai_data_processing_approved" boolean`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD "default_anonymize_ips" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD "default_experiment_stats_method" character varying(20) DEFAULT 'bayesian'`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD CONSTRAINT "organizations_default_experiment_stats_method_check" CHECK ("default_experiment_stats_method" IN ('bayesian', 'frequentist'))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "organizations" DROP CONSTRAINT "organizations_default_experiment_stats_method_check"`);
        await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "default_experiment_stats_method"`);
        await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "default_anonymize_ips"`);
        await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "is_ai_data_processing_approved"`);
        await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "allow_publicly_shared_resources"`);
        await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "members_can_use_personal_api_keys"`);
        await queryRunner.query(`ALTER TABLE "organizations" DROP COLUMN "members_can_invite"`);
    }

}
