import { MigrationInterface, QueryRunner } from "typeorm";

export class BlankExperimentStatsMethod1795948000000 implements MigrationInterface {
    name = 'BlankExperimentStatsMethod1795948000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "organizations" DROP CONSTRAINT "organizations_default_experiment_stats_method_check"`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD CONSTRAINT "organizations_default_experiment_stats_method_check" CHECK ("default_experiment_stats_method" IN ('bayesian', 'frequentist', ''))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "organizations" DROP CONSTRAINT "organizations_default_experiment_stats_method_check"`);
        await queryRunner.query(`UPDATE "organizations" SET "default_experiment_stats_method" = NULL WHERE "default_experiment_stats_method" = ''`);
        await queryRunner.query(`ALTER TABLE "organizations" ADD CONSTRAINT "organizations_default_experiment_stats_method_check" CHECK ("default_experiment_stats_method" IN ('bayesian', 'frequentist'))`);
    }

}
