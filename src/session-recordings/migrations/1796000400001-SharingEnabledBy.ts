import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who enabled a recording's sharing or issued its current link (`session_recording_sharing.enabled_by_id`): a
 * shared link shows the recording while the recording access rules let that user watch it. Existing links have
 * none: they keep working for recordings no rule restricts.
 */
export class SharingEnabledBy1796000400001 implements MigrationInterface {
  name = 'SharingEnabledBy1796000400001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "session_recording_sharing" ADD "enabled_by_id" integer`);
    await queryRunner.query(
      `ALTER TABLE "session_recording_sharing" ADD CONSTRAINT "session_recording_sharing_enabled_by_id_fkey" FOREIGN KEY ("enabled_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "session_recording_sharing" DROP CONSTRAINT "session_recording_sharing_enabled_by_id_fkey"`,
    );
    await queryRunner.query(`ALTER TABLE "session_recording_sharing" DROP COLUMN "enabled_by_id"`);
  }
}
