import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who created each batch export (the user of the creating key): the user its runs count against in the workers'
 * fair sharing. Existing exports have none (their organization's owner stands for it); a deleted user leaves null.
 */
export class BatchExportCreatedBy1795941684165 implements MigrationInterface {
  name = 'BatchExportCreatedBy1795941684165';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "batch_exports" ADD "created_by_id" integer`);
    await queryRunner.query(
      `ALTER TABLE "batch_exports" ADD CONSTRAINT "FK_2417b1e4028c8fe11113b23b34b" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "FK_2417b1e4028c8fe11113b23b34b"`);
    await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "created_by_id"`);
  }
}
