import { MigrationInterface, QueryRunner } from "typeorm";

export class SessionRecordings1795243860032 implements MigrationInterface {
    name = 'SessionRecordings1795243860032'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`CREATE TABLE "persons" ("id" SERIAL NOT NULL, "uuid" uuid NOT NULL DEFAULT gen_random_uuid(), "team_id" integer NOT NULL, "properties" jsonb NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_df86913f6de25e60e6346dcf87a" UNIQUE ("uuid"), CONSTRAINT "PK_74278d8812a049233ce41440ac7" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "persons_team_idx" ON "persons"  ("team_id", "id") `);
        await queryRunner.query(`CREATE TABLE "person_distinct_ids" ("id" BIGSERIAL NOT NULL, "team_id" integer NOT NULL, "distinct_id" character varying(200) NOT NULL, "person_id" integer NOT NULL, CONSTRAINT "PK_519b90fe02a3a35aa83e12cb5b9" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "person_distinct_ids_person_idx" ON "person_distinct_ids"  ("person_id", "id") `);
        await queryRunner.query(`CREATE UNIQUE INDEX "person_distinct_ids_team_distinct_id_key" ON "person_distinct_ids"  ("team_id", "distinct_id") `);
        await queryRunner.query(`CREATE TABLE "session_recording_counts" ("team_id" integer NOT NULL, "recordings" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_b6ea095a8970759f615e7dda455" PRIMARY KEY ("team_id"))`);
        await queryRunner.query(`CREATE TABLE "session_recordings" ("team_id" integer NOT NULL, "session_id" character varying(70) COLLATE "C" NOT NULL, "distinct_id" character varying(200) NOT NULL, "person_id" integer, "start_time" TIMESTAMP WITH TIME ZONE NOT NULL, "end_time" TIMESTAMP WITH TIME ZONE NOT NULL, "click_count" integer NOT NULL DEFAULT '0', "keypress_count" integer NOT NULL DEFAULT '0', "mouse_activity_count" integer NOT NULL DEFAULT '0', "console_log_count" integer NOT NULL DEFAULT '0', "console_warn_count" integer NOT NULL DEFAULT '0', "console_error_count" integer NOT NULL DEFAULT '0', "active_ms" bigint NOT NULL DEFAULT '0', "event_count" integer NOT NULL DEFAULT '0', "start_url" text, "start_url_time" TIMESTAMP WITH TIME ZONE, "snapshot_source" character varying(8) NOT NULL DEFAULT 'web', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_event_received_at" TIMESTAMP WITH TIME ZONE NOT NULL, "deleted_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "session_recordings_snapshot_source_check" CHECK ("snapshot_source" IN ('web', 'mobile')), CONSTRAINT "PK_aa71122ae3fd0046bba99a1090d" PRIMARY KEY ("team_id", "session_id"))`);
        await queryRunner.query(`CREATE TABLE "session_recording_event_keys" ("team_id" integer NOT NULL, "session_id" character varying(70) COLLATE "C" NOT NULL, "event_key" character varying(100) NOT NULL, CONSTRAINT "PK_c0df76b66d41010ddf897881022" PRIMARY KEY ("team_id", "session_id", "event_key"))`);
        await queryRunner.query(`CREATE TABLE "session_recording_sharing" ("team_id" integer NOT NULL, "session_id" character varying(70) COLLATE "C" NOT NULL, "access_token" character varying(64) NOT NULL, "enabled" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "UQ_7575190643ef4dd0f0065122287" UNIQUE ("access_token"), CONSTRAINT "PK_d87014b5bcdce57a2931df92c76" PRIMARY KEY ("team_id", "session_id"))`);
        await queryRunner.query(`CREATE TABLE "session_recording_snapshots" ("id" BIGSERIAL NOT NULL, "team_id" integer NOT NULL, "session_id" character varying(70) COLLATE "C" NOT NULL, "window_id" character varying(70) NOT NULL, "first_timestamp" TIMESTAMP WITH TIME ZONE NOT NULL, "last_timestamp" TIMESTAMP WITH TIME ZONE NOT NULL, "event_count" integer NOT NULL, "data" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_48d60f444cc2221077460c56de7" PRIMARY KEY ("id"))`);
        await queryRunner.query(`CREATE INDEX "session_recording_snapshots_session_idx" ON "session_recording_snapshots"  ("team_id", "session_id", "first_timestamp", "id") `);
        await queryRunner.query(`CREATE TABLE "session_recording_views" ("team_id" integer NOT NULL, "session_id" character varying(70) COLLATE "C" NOT NULL, "user_id" integer NOT NULL, "viewed_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_41c1f9e2389f468f118a05891fb" PRIMARY KEY ("team_id", "session_id", "user_id"))`);
        await queryRunner.query(`CREATE INDEX "session_recording_views_user_idx" ON "session_recording_views"  ("user_id") `);
        // Written by hand (declared with synchronize: false on the entity): descending list order and filters over
        // the recordings that are not deleted.
        await queryRunner.query(`CREATE INDEX "session_recordings_team_start_idx" ON "session_recordings" ("team_id", "start_time" DESC, "session_id") WHERE "deleted_at" IS NULL`);
        await queryRunner.query(`CREATE INDEX "session_recordings_team_distinct_id_start_idx" ON "session_recordings" ("team_id", "distinct_id", "start_time" DESC, "session_id") WHERE "deleted_at" IS NULL`);
        await queryRunner.query(`CREATE INDEX "session_recordings_person_start_idx" ON "session_recordings" ("person_id", "start_time" DESC, "session_id")`);
        // Written by hand: session_recording_counts holds the number of recordings per project that are not deleted.
        // Inserts and deletes are counted per statement (a bulk insert pays once), soft deletes per row.
        await queryRunner.query(`CREATE FUNCTION "session_recording_counts_on_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO session_recording_counts AS c (team_id, recordings)
  SELECT team_id, count(*) FROM new_rows WHERE deleted_at IS NULL GROUP BY team_id
  ON CONFLICT (team_id) DO UPDATE SET recordings = c.recordings + excluded.recordings;
  RETURN NULL;
END $$`);
        await queryRunner.query(`CREATE TRIGGER "session_recordings_count_insert" AFTER INSERT ON "session_recordings" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "session_recording_counts_on_insert"()`);
        await queryRunner.query(`CREATE FUNCTION "session_recording_counts_on_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_recording_counts c SET recordings = c.recordings - d.n
    FROM (SELECT team_id, count(*) AS n FROM old_rows WHERE deleted_at IS NULL GROUP BY team_id) d
   WHERE c.team_id = d.team_id;
  RETURN NULL;
END $$`);
        await queryRunner.query(`CREATE TRIGGER "session_recordings_count_delete" AFTER DELETE ON "session_recordings" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "session_recording_counts_on_delete"()`);
        await queryRunner.query(`CREATE FUNCTION "session_recording_counts_on_soft_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO session_recording_counts AS c (team_id, recordings)
  VALUES (NEW.team_id, CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE -1 END)
  ON CONFLICT (team_id) DO UPDATE SET recordings = c.recordings + excluded.recordings;
  RETURN NULL;
END $$`);
        await queryRunner.query(`CREATE TRIGGER "session_recordings_count_soft_delete" AFTER UPDATE OF "deleted_at" ON "session_recordings" FOR EACH ROW WHEN ((OLD."deleted_at" IS NULL) <> (NEW."deleted_at" IS NULL)) EXECUTE FUNCTION "session_recording_counts_on_soft_delete"()`);
        await queryRunner.query(`ALTER TABLE "persons" ADD CONSTRAINT "FK_cae0ab5099afdd918e514fabdd2" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "person_distinct_ids" ADD CONSTRAINT "FK_6211f3913a9fbf91812e57fbb4d" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "person_distinct_ids" ADD CONSTRAINT "FK_ec0888a2fdba61e4b8a285b36cf" FOREIGN KEY ("person_id") REFERENCES "persons"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_counts" ADD CONSTRAINT "FK_b6ea095a8970759f615e7dda455" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recordings" ADD CONSTRAINT "FK_c93d85ee2b52ee115c9613982d0" FOREIGN KEY ("team_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recordings" ADD CONSTRAINT "FK_d4984ffd26dea2cc1eccd19ad38" FOREIGN KEY ("person_id") REFERENCES "persons"("id") ON DELETE SET NULL ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_event_keys" ADD CONSTRAINT "FK_4c514f447eaa3569f435892b9f5" FOREIGN KEY ("team_id", "session_id") REFERENCES "session_recordings"("team_id","session_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_sharing" ADD CONSTRAINT "FK_d87014b5bcdce57a2931df92c76" FOREIGN KEY ("team_id", "session_id") REFERENCES "session_recordings"("team_id","session_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" ADD CONSTRAINT "FK_f5f174e8218e4c0cfc80f1b83cd" FOREIGN KEY ("team_id", "session_id") REFERENCES "session_recordings"("team_id","session_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_views" ADD CONSTRAINT "FK_94f9a1d59a3db923bc7d3ac8bf4" FOREIGN KEY ("team_id", "session_id") REFERENCES "session_recordings"("team_id","session_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
        await queryRunner.query(`ALTER TABLE "session_recording_views" ADD CONSTRAINT "FK_cd0459d0bb105c4bb2173318a8c" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`ALTER TABLE "session_recording_views" DROP CONSTRAINT "FK_cd0459d0bb105c4bb2173318a8c"`);
        await queryRunner.query(`ALTER TABLE "session_recording_views" DROP CONSTRAINT "FK_94f9a1d59a3db923bc7d3ac8bf4"`);
        await queryRunner.query(`ALTER TABLE "session_recording_snapshots" DROP CONSTRAINT "FK_f5f174e8218e4c0cfc80f1b83cd"`);
        await queryRunner.query(`ALTER TABLE "session_recording_sharing" DROP CONSTRAINT "FK_d87014b5bcdce57a2931df92c76"`);
        await queryRunner.query(`ALTER TABLE "session_recording_event_keys" DROP CONSTRAINT "FK_4c514f447eaa3569f435892b9f5"`);
        await queryRunner.query(`ALTER TABLE "session_recordings" DROP CONSTRAINT "FK_d4984ffd26dea2cc1eccd19ad38"`);
        await queryRunner.query(`ALTER TABLE "session_recordings" DROP CONSTRAINT "FK_c93d85ee2b52ee115c9613982d0"`);
        await queryRunner.query(`ALTER TABLE "session_recording_counts" DROP CONSTRAINT "FK_b6ea095a8970759f615e7dda455"`);
        await queryRunner.query(`ALTER TABLE "person_distinct_ids" DROP CONSTRAINT "FK_ec0888a2fdba61e4b8a285b36cf"`);
        await queryRunner.query(`ALTER TABLE "person_distinct_ids" DROP CONSTRAINT "FK_6211f3913a9fbf91812e57fbb4d"`);
        await queryRunner.query(`ALTER TABLE "persons" DROP CONSTRAINT "FK_cae0ab5099afdd918e514fabdd2"`);
        await queryRunner.query(`DROP TRIGGER "session_recordings_count_soft_delete" ON "session_recordings"`);
        await queryRunner.query(`DROP FUNCTION "session_recording_counts_on_soft_delete"()`);
        await queryRunner.query(`DROP TRIGGER "session_recordings_count_delete" ON "session_recordings"`);
        await queryRunner.query(`DROP FUNCTION "session_recording_counts_on_delete"()`);
        await queryRunner.query(`DROP TRIGGER "session_recordings_count_insert" ON "session_recordings"`);
        await queryRunner.query(`DROP FUNCTION "session_recording_counts_on_insert"()`);
        await queryRunner.query(`DROP INDEX "public"."session_recordings_person_start_idx"`);
        await queryRunner.query(`DROP INDEX "public"."session_recordings_team_distinct_id_start_idx"`);
        await queryRunner.query(`DROP INDEX "public"."session_recordings_team_start_idx"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_views_user_idx"`);
        await queryRunner.query(`DROP TABLE "session_recording_views"`);
        await queryRunner.query(`DROP INDEX "public"."session_recording_snapshots_session_idx"`);
        await queryRunner.query(`DROP TABLE "session_recording_snapshots"`);
        await queryRunner.query(`DROP TABLE "session_recording_sharing"`);
        await queryRunner.query(`DROP TABLE "session_recording_event_keys"`);
        await queryRunner.query(`DROP TABLE "session_recordings"`);
        await queryRunner.query(`DROP TABLE "session_recording_counts"`);
        await queryRunner.query(`DROP INDEX "public"."person_distinct_ids_team_distinct_id_key"`);
        await queryRunner.query(`DROP INDEX "public"."person_distinct_ids_person_idx"`);
        await queryRunner.query(`DROP TABLE "person_distinct_ids"`);
        await queryRunner.query(`DROP INDEX "public"."persons_team_idx"`);
        await queryRunner.query(`DROP TABLE "persons"`);
    }

}
