import { MigrationInterface, QueryRunner } from "typeorm";

export class NullableOrganizationSettings1795500000000 implements MigrationInterface {
    name = 'NullableOrganizationSettings1795500000000'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "organizations" ALTER COLUMN "enforce_2fa" DROP NOT NULL`);
        await queryRunner.query(`ALTER TABLE "organizations" ALTER COLUMN "members_can_invite" DROP NOT NULL`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`UPDATE "organizations" SET "members_can_invite" = false WHERE "members_can_invite" IS NULL`);
        await queryRunner.query(`UPDATE "organizations" SET "enforce_2fa" = false WHERE "enforce_2fa" IS NULL`);
        await queryRunner.query(`ALTER TABLE "organizations" ALTER COLUMN "members_can_invite" SET NOT NULL`);
        await queryRunner.query(`ALTER TABLE "organizations" ALTER COLUMN "enforce_2fa" SET NOT NULL`);
    }

}
