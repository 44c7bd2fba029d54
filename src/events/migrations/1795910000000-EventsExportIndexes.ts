import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * What the events batch export reads by (docs/batch-exports.md, "Late commits"), written by hand as the
 * events table is (no entity): the insert time of a project's events, and their inserting transaction's id as
 * the bigint the runs' watermark is stored as. Created on the partitioned parent, so every day partition,
 * present or created later, gets them.
 */
export class EventsExportIndexes1795910000000 implements MigrationInterface {
    name = 'EventsExportIndexes1795910000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE INDEX "events_team_created_at_idx" ON "events" ("team_id", "created_at")`);
        await queryRunner.query(`CREATE INDEX "events_team_inserted_xid_idx" ON "events" ("team_id", (("inserted_xid"::text)::bigint))`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`DROP INDEX "events_team_inserted_xid_idx"`);
        await queryRunner.query(`DROP INDEX "events_team_created_at_idx"`);
    }

}
