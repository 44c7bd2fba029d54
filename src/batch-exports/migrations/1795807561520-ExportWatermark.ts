import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The watermark of scheduled batch exports (docs/batch-exports.md, "Late commits"): every write of an exported
 * table stamps the row with its transaction id (`write_xid`, by the generic trigger function
 * `export_write_xid()`), and scheduled runs keep the range of transaction ids they read
 * (`read_xid_from`, `read_xid_to`). Session recordings get a `version` raised on every change, which the
 * sessions export merges on.
 */
export class ExportWatermark1795807561520 implements MigrationInterface {
    name = 'ExportWatermark1795807561520'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_export_runs" ADD "read_xid_from" bigint`);
        await queryRunner.query(`ALTER TABLE "batch_export_runs" ADD "read_xid_to" bigint`);
        await queryRunner.query(`ALTER TABLE "persons" ADD "write_xid" bigint NOT NULL DEFAULT '0'`);
        await queryRunner.query(`ALTER TABLE "person_distinct_ids" ADD "write_xid" bigint NOT NULL DEFAULT '0'`);
        await queryRunner.query(`ALTER TABLE "session_recordings" ADD "version" bigint NOT NULL DEFAULT '1'`);
        await queryRunner.query(`ALTER TABLE "session_recordings" ADD "write_xid" bigint NOT NULL DEFAULT '0'`);
        await queryRunner.query(`CREATE INDEX "persons_team_write_xid_idx" ON "persons"  ("team_id", "write_xid") `);
        await queryRunner.query(`CREATE INDEX "person_distinct_ids_team_write_xid_idx" ON "person_distinct_ids"  ("team_id", "write_xid") `);
        await queryRunner.query(`CREATE INDEX "session_recordings_team_write_xid_idx" ON "session_recordings"  ("team_id", "write_xid") `);
        // One trigger function for every exported table: the row's last writing transaction (xid8, as bigint).
        await queryRunner.query(`
          CREATE FUNCTION export_write_xid() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            NEW.write_xid := pg_current_xact_id()::text::bigint;
            RETURN NEW;
          END $$`);
        await queryRunner.query(`
          CREATE FUNCTION session_recordings_touch() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            NEW.version := OLD.version + 1;
            RETURN NEW;
          END $$`);
        // BEFORE triggers fire in name order: `*_touch` (version, updated_at) before `*_write_xid`, whose
        // condition sees what they changed. Rows written before this migration keep 0: committed long ago.
        await queryRunner.query(`CREATE TRIGGER session_recordings_touch BEFORE UPDATE ON session_recordings FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION session_recordings_touch()`);
        // Stamped on insert, and on an update that changed what the export reads: a recording's version, a
        // person's or distinct id's change time (raised by their own triggers only on real changes).
        for (const [table, changed] of [
            ['session_recordings', 'version'],
            ['persons', 'updated_at'],
            ['person_distinct_ids', 'updated_at'],
        ]) {
            await queryRunner.query(`CREATE TRIGGER ${table}_write_xid_on_insert BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION export_write_xid()`);
            await queryRunner.query(`CREATE TRIGGER ${table}_write_xid BEFORE UPDATE ON ${table} FOR EACH ROW WHEN (OLD.${changed} IS DISTINCT FROM NEW.${changed}) EXECUTE FUNCTION export_write_xid()`);
        }
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        for (const table of ['person_distinct_ids', 'persons', 'session_recordings']) {
            await queryRunner.query(`DROP TRIGGER ${table}_write_xid ON ${table}`);
            await queryRunner.query(`DROP TRIGGER ${table}_write_xid_on_insert ON ${table}`);
        }
        await queryRunner.query(`DROP TRIGGER session_recordings_touch ON session_recordings`);
        await queryRunner.query(`DROP FUNCTION session_recordings_touch()`);
        await queryRunner.query(`DROP FUNCTION export_write_xid()`);
        await queryRunner.query(`DROP INDEX "public"."session_recordings_team_write_xid_idx"`);
        await queryRunner.query(`DROP INDEX "public"."person_distinct_ids_team_write_xid_idx"`);
        await queryRunner.query(`DROP INDEX "public"."persons_team_write_xid_idx"`);
        await queryRunner.query(`ALTER TABLE "session_recordings" DROP COLUMN "write_xid"`);
        await queryRunner.query(`ALTER TABLE "session_recordings" DROP COLUMN "version"`);
        await queryRunner.query(`ALTER TABLE "person_distinct_ids" DROP COLUMN "write_xid"`);
        await queryRunner.query(`ALTER TABLE "persons" DROP COLUMN "write_xid"`);
        await queryRunner.query(`ALTER TABLE "batch_export_runs" DROP COLUMN "read_xid_to"`);
        await queryRunner.query(`ALTER TABLE "batch_export_runs" DROP COLUMN "read_xid_from"`);
    }

}
