import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Told when an export breaks: the export's signed notification webhook (URL and write-only secret), when its
 * admins were last e-mailed about a failure (the daily limit, shared by every replica), and the end of the newest
 * interval it completed (the lag metric), filled in from the runs completed so far.
 */
export class ExportNotifications1798200000000 implements MigrationInterface {
    name = 'ExportNotifications1798200000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "notification_webhook_url" text`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "notification_webhook_secret" text`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "failure_emailed_at" TIMESTAMP WITH TIME ZONE`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD "last_completed_interval_end" TIMESTAMP WITH TIME ZONE`);
        await queryRunner.query(`ALTER TABLE "batch_exports" ADD CONSTRAINT "batch_exports_notification_webhook_secret_check" CHECK ("notification_webhook_url" IS NULL OR "notification_webhook_secret" IS NOT NULL)`);
        await queryRunner.query(`UPDATE "batch_exports" e SET "last_completed_interval_end" = c.last_end
            FROM (SELECT batch_export_id, max(data_interval_end) AS last_end FROM "batch_export_runs"
                   WHERE status = 'Completed' GROUP BY batch_export_id) c
           WHERE c.batch_export_id = e.id`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP CONSTRAINT "batch_exports_notification_webhook_secret_check"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "last_completed_interval_end"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "failure_emailed_at"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "notification_webhook_secret"`);
        await queryRunner.query(`ALTER TABLE "batch_exports" DROP COLUMN "notification_webhook_url"`);
    }
}
