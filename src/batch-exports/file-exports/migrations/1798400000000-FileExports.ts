import { MigrationInterface, QueryRunner } from 'typeorm';

/** On-demand file exports (PostHog's exports API for the export models): the request, its progress and its file. */
export class FileExports1798400000000 implements MigrationInterface {
  name = 'FileExports1798400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "file_exports" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "team_id" integer NOT NULL, "created_by_id" integer, "model" character varying(16) NOT NULL, "format" character varying(16) NOT NULL, "start_at" TIMESTAMP WITH TIME ZONE NOT NULL, "end_at" TIMESTAMP WITH TIME ZONE NOT NULL, "status" character varying(16) NOT NULL, "row_count" bigint, "bytes" bigint, "object_key" text, "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "finished_at" TIMESTAMP WITH TIME ZONE, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "file_exports_model_check" CHECK ("model" IN ('events', 'persons', 'sessions')), CONSTRAINT "file_exports_format_check" CHECK ("format" IN ('JSONLines', 'Parquet')), CONSTRAINT "file_exports_status_check" CHECK ("status" IN ('Pending', 'Running', 'Complete', 'Failed', 'Cancelled')), CONSTRAINT "file_exports_range_check" CHECK ("start_at" < "end_at"), CONSTRAINT "file_exports_pkey" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "file_exports_team_created_idx" ON "file_exports" ("team_id", "created_at") `,
    );
    await queryRunner.query(`CREATE INDEX "file_exports_expires_idx" ON "file_exports" ("expires_at") `);
    await queryRunner.query(
      `ALTER TABLE "file_exports" ADD CONSTRAINT "file_exports_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "file_exports" ADD CONSTRAINT "file_exports_created_by_id_fkey" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "file_exports" DROP CONSTRAINT "file_exports_created_by_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "file_exports" DROP CONSTRAINT "file_exports_team_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."file_exports_expires_idx"`);
    await queryRunner.query(`DROP INDEX "public"."file_exports_team_created_idx"`);
    await queryRunner.query(`DROP TABLE "file_exports"`);
  }
}
