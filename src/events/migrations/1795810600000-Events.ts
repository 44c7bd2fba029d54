import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The `events` table, written by hand: PostgreSQL declarative partitioning by day on `timestamp`, which TypeORM
 * does not model (the table has no entity, so the drift check does not compare it; docs/decisions.md §13). Only
 * the parent and its indexes are created here; the day partitions, each with its unique (team_id, uuid) index,
 * are created by the service (EventPartitionsRepository.createPartition). Also the projects' capture settings.
 */
export class Events1795810600000 implements MigrationInterface {
    name = 'Events1795810600000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE TABLE "events" (
            "uuid" uuid NOT NULL,
            "event" varchar(200) NOT NULL,
            "properties" jsonb NOT NULL DEFAULT '{}'::jsonb,
            "timestamp" timestamptz NOT NULL,
            "created_at" timestamptz NOT NULL DEFAULT now(),
            "team_id" integer NOT NULL,
            "distinct_id" varchar(200) NOT NULL,
            "person_id" uuid,
            "elements_chain" text NOT NULL DEFAULT '',
            "session_id" varchar(70),
            "window_id" varchar(70),
            "set" jsonb,
            "set_once" jsonb,
            "inserted_xid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
            CONSTRAINT "events_team_fk" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE
        ) PARTITION BY RANGE ("timestamp")`);
        await queryRunner.query(`CREATE INDEX "events_team_timestamp_idx" ON "events" ("team_id", "timestamp")`);
        await queryRunner.query(`CREATE INDEX "events_team_distinct_id_timestamp_idx" ON "events" ("team_id", "distinct_id", "timestamp")`);
        await queryRunner.query(`CREATE INDEX "events_team_session_timestamp_idx" ON "events" ("team_id", "session_id", "timestamp") WHERE "session_id" IS NOT NULL`);
        await queryRunner.query(`CREATE INDEX "events_team_event_timestamp_idx" ON "events" ("team_id", "event", "timestamp")`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "anonymize_ips" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "autocapture_opt_out" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "autocapture_exceptions_opt_in" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "capture_console_log_opt_in" boolean NOT NULL DEFAULT true`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "capture_performance_opt_in" boolean NOT NULL DEFAULT true`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "heatmaps_opt_in" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`ALTER TABLE "projects" ADD "events_retention_period_days" integer`);
        await queryRunner.query(`ALTER TABLE "projects" ADD CONSTRAINT "projects_events_retention_check" CHECK ("events_retention_period_days" BETWEEN 1 AND 3650)`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "projects" DROP CONSTRAINT "projects_events_retention_check"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "events_retention_period_days"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "heatmaps_opt_in"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "capture_performance_opt_in"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "capture_console_log_opt_in"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "autocapture_exceptions_opt_in"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "autocapture_opt_out"`);
        await queryRunner.query(`ALTER TABLE "projects" DROP COLUMN "anonymize_ips"`);
        // Drops every day partition with it.
        await queryRunner.query(`DROP TABLE "events"`);
    }

}
