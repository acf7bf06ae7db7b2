import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Monitors and their checks (CONTRACT.md, "Monitors"): the durable schedule (`next_check_at`, with a
 * partial index over enabled monitors for the scheduler's due look-up) and one row per check.
 */
export class Monitors1795700000000 implements MigrationInterface {
  name = 'Monitors1795700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "monitors" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "api_key_id" character varying(40) NOT NULL,
                "url" text NOT NULL,
                "options" jsonb NOT NULL DEFAULT '{}',
                "schedule" jsonb NOT NULL,
                "diff" jsonb NOT NULL,
                "enabled" boolean NOT NULL DEFAULT true,
                "paused_reason" character varying(16),
                "description" character varying(500) NOT NULL DEFAULT '',
                "baseline_check_id" character varying(40),
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "last_check_at" TIMESTAMP WITH TIME ZONE,
                "next_check_at" TIMESTAMP WITH TIME ZONE,
                "consecutive_failures" integer NOT NULL DEFAULT '0',
                "last_change" jsonb,
                CONSTRAINT "PK_193902e2013887310490284cdbe" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_e3dd04a712e5b125a81a3753a5" ON "monitors" ("api_key_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_monitors_due" ON "monitors" ("next_check_at")
            WHERE enabled
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_71d53da5fe65dbc6346bd80f26" ON "monitors" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "monitor_checks" (
                "id" character varying(40) NOT NULL,
                "monitor_id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "job_id" character varying(40),
                "status" character varying(16) NOT NULL,
                "screenshot_file" character varying(200),
                "baseline_check_id" character varying(40),
                "baseline_file" character varying(200),
                "diff_file" character varying(200),
                "diff_ratio" double precision,
                "diff_pixels" integer,
                "regions" jsonb NOT NULL DEFAULT '[]',
                "error" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "compare_started_at" TIMESTAMP WITH TIME ZONE,
                "completed_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_25695040f44daaeee8656c5a3f0" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_1cfd5380577a5fcb3092521efc" ON "monitor_checks" ("job_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_monitor_checks_open" ON "monitor_checks" ("monitor_id")
            WHERE status = 'pending'
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_8566ad368fdc5a163659271f6b" ON "monitor_checks" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_e6654cf2a81aba43206146e022" ON "monitor_checks" ("monitor_id", "created_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "monitors"
            ADD CONSTRAINT "FK_a05ff33e7131ab0e36c5e722ffc" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "monitors"
            ADD CONSTRAINT "FK_e3dd04a712e5b125a81a3753a54" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "monitor_checks"
            ADD CONSTRAINT "FK_2c99ca96a324c7af566742d153f" FOREIGN KEY ("monitor_id") REFERENCES "monitors"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "monitor_checks" DROP CONSTRAINT "FK_2c99ca96a324c7af566742d153f"
        `);
    await queryRunner.query(`
            ALTER TABLE "monitors" DROP CONSTRAINT "FK_e3dd04a712e5b125a81a3753a54"
        `);
    await queryRunner.query(`
            ALTER TABLE "monitors" DROP CONSTRAINT "FK_a05ff33e7131ab0e36c5e722ffc"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_e6654cf2a81aba43206146e022"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_8566ad368fdc5a163659271f6b"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_monitor_checks_open"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_1cfd5380577a5fcb3092521efc"
        `);
    await queryRunner.query(`
            DROP TABLE "monitor_checks"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_71d53da5fe65dbc6346bd80f26"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_monitors_due"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_e3dd04a712e5b125a81a3753a5"
        `);
    await queryRunner.query(`
            DROP TABLE "monitors"
        `);
  }
}
