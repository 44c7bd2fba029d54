import { MigrationInterface, QueryRunner } from "typeorm";

export class ProjectExperimentStatsMethod1795948200000 implements MigrationInterface {
    name = 'ProjectExperimentStatsMethod1795948200000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" ADD "default_experiment_stats_method" character varying(20) DEFAULT 'bayesian'`);
        await queryRunner.query(`ALTER TABLE "projects" ADD CONSTRAINT "projects_default_experiment_stats_method_check" CHECK ("default_experiment_stats_method" IN ('bayesian', 'frequentist', ''))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" DROP CONSTRAINT "projects_default_experiment_stats_method_check"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "default_experiment_stats_method"`);
    }

}
