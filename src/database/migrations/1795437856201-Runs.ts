import { MigrationInterface, QueryRunner } from 'typeorm';

export class Runs1795437856201 implements MigrationInterface {
  name = 'Runs1795437856201';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "runs" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "api_key_id" character varying(40) NOT NULL,
                "status" character varying(16) NOT NULL,
                "url" text NOT NULL,
                "options" jsonb NOT NULL,
                "video" boolean NOT NULL,
                "timeout_ms" integer NOT NULL,
                "steps" jsonb NOT NULL,
                "step_results" jsonb NOT NULL DEFAULT '[]',
                "final_url" text,
                "page_title" text,
                "video_file" character varying(64),
                "console_error_count" integer NOT NULL DEFAULT '0',
                "network_error_count" integer NOT NULL DEFAULT '0',
                "console_errors" jsonb NOT NULL DEFAULT '[]',
                "network_errors" jsonb NOT NULL DEFAULT '[]',
                "finalization_error" text,
                "failure" jsonb,
                "attempts" integer NOT NULL DEFAULT '0',
                "cancel_requested_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "started_at" TIMESTAMP WITH TIME ZONE,
                "completed_at" TIMESTAMP WITH TIME ZONE,
                "results_deleted_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_46d6a1e257c38ba58f1a3c30836" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_e6b9f484368df07d812c9b6654" ON "runs" ("api_key_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_960d03633e2a14a4bdf668aa1e" ON "runs" ("status")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_6ea6233a23dade4f601b3f9882" ON "runs" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_runs_open_by_account" ON "runs" ("account_id")
            WHERE "status" IN ('pending', 'running')
        `);
    await queryRunner.query(`
            ALTER TABLE "runs"
            ADD CONSTRAINT "FK_38b9fe460b36f9c989366a6bb18" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "runs"
            ADD CONSTRAINT "FK_e6b9f484368df07d812c9b66541" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "runs" DROP CONSTRAINT "FK_e6b9f484368df07d812c9b66541"
        `);
    await queryRunner.query(`
            ALTER TABLE "runs" DROP CONSTRAINT "FK_38b9fe460b36f9c989366a6bb18"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_runs_open_by_account"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_6ea6233a23dade4f601b3f9882"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_960d03633e2a14a4bdf668aa1e"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_e6b9f484368df07d812c9b6654"
        `);
    await queryRunner.query(`
            DROP TABLE "runs"
        `);
  }
}
