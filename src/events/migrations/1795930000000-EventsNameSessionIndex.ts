import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Written by hand, as the events table is (no entity): the project's events by name and time now hold their
 * session id too (INCLUDE), so the recordings list filtered by an event reads the sessions that had it from this
 * index alone (an index-only scan of each day partition) rather than fetching every such event's row. Created on
 * the partitioned parent (every day partition, present or created later, gets it) before the index it replaces
 * is dropped.
 */
export class EventsNameSessionIndex1795930000000 implements MigrationInterface {
    name = 'EventsNameSessionIndex1795930000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE INDEX "events_team_event_timestamp_session_idx" ON "events" ("team_id", "event", "timestamp") INCLUDE ("session_id")`);
        await queryRunner.query(`DROP INDEX "events_team_event_timestamp_idx"`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE INDEX "events_team_event_timestamp_idx" ON "events" ("team_id", "event", "timestamp")`);
        await queryRunner.query(`DROP INDEX "events_team_event_timestamp_session_idx"`);
    }

}
