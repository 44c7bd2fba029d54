import { MigrationInterface, QueryRunner } from "typeorm";

export class SharingSettings1795467478434 implements MigrationInterface {
    name = 'SharingSettings1795467478434'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_sharing" ADD "settings" jsonb`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_sharing" DROP COLUMN "settings"`);
    }

}
