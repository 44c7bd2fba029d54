import { MigrationInterface, QueryRunner } from "typeorm";

/**
 * `persons.is_identified`, PostHog's flag: set when an `$identify` or `$create_alias` puts a second distinct id on
 * the person. Persons that already have two or more distinct ids got them that way, so they start identified.
 */
export class PersonsIsIdentified1795962340000 implements MigrationInterface {
    name = 'PersonsIsIdentified1795962340000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "persons" ADD "is_identified" boolean NOT NULL DEFAULT false`);
        await queryRunner.query(`UPDATE "persons" p SET "is_identified" = true WHERE (SELECT count(*) FROM "person_distinct_ids" d WHERE d."person_id" = p."id") > 1`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "persons" DROP COLUMN "is_identified"`);
    }

}
