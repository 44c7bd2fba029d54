import { MigrationInterface, QueryRunner } from "typeorm";

export class SessionSnapshotBytes1795469021029 implements MigrationInterface {
    name = 'SessionSnapshotBytes1795469021029'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recordings" ADD "snapshot_bytes" bigint NOT NULL DEFAULT '0'`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recordings" DROP COLUMN "snapshot_bytes"`);
    }

}
