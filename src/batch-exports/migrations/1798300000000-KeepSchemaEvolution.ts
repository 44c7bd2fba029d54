import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Postgres and Redshift exports add the model's missing columns to their table only with
 * `use_automatic_schema_evolution` (docs/batch-exports.md, "Destination tables"). Exports saved before it was
 * a choice were made when runs always added them: they keep doing so, with the key set in their config (shown
 * by the API, and turned off by a PATCH).
 */
export class KeepSchemaEvolution1798300000000 implements MigrationInterface {
    name = 'KeepSchemaEvolution1798300000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`UPDATE "batch_exports" SET "destination_config" = "destination_config" || '{"use_automatic_schema_evolution": true}'::jsonb WHERE "destination_type" IN ('Postgres', 'Redshift') AND NOT "destination_config" ? 'use_automatic_schema_evolution'`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        // The key is unknown before this migration: a config holding it would be refused by the next save.
        await queryRunner.query(`UPDATE "batch_exports" SET "destination_config" = "destination_config" - 'use_automatic_schema_evolution' WHERE "destination_type" IN ('Postgres', 'Redshift') AND "destination_config" ? 'use_automatic_schema_evolution'`);
    }
}
