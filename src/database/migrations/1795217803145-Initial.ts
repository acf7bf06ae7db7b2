import { MigrationInterface, QueryRunner } from 'typeorm';

export class Initial1795217803145 implements MigrationInterface {
  name = 'Initial1795217803145';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "accounts" (
                "id" character varying(40) NOT NULL,
                "email" character varying(320) NOT NULL,
                "plan" character varying(16) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_ee66de6cdc53993296d1ceb8aa0" UNIQUE ("email"),
                CONSTRAINT "PK_5a7a02c20412299d198e097a8fe" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "api_keys" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "name" character varying(100),
                "prefix" character varying(20) NOT NULL,
                "secret_hash" character(64) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "revoked_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "UQ_fef9aa4a1cf4f8c063ac5d75f2e" UNIQUE ("secret_hash"),
                CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_decaf331589778e33441b2a8d9" ON "api_keys" ("account_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "events" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "type" character varying(64) NOT NULL,
                "data" jsonb NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_40731c7151fe4be3116e45ddf73" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_f225ffb3469dfad0b61894f0d4" ON "events" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "screenshot_jobs" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "api_key_id" character varying(40) NOT NULL,
                "status" character varying(16) NOT NULL,
                "target_url" text NOT NULL,
                "width" integer NOT NULL,
                "height" integer NOT NULL,
                "full_page" boolean NOT NULL,
                "format" character varying(8) NOT NULL,
                "delay_ms" integer NOT NULL,
                "result_file" character varying(64),
                "error" text,
                "attempts" integer NOT NULL DEFAULT '0',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "started_at" TIMESTAMP WITH TIME ZONE,
                "completed_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_d05a155d9c66ed6bd7f0bcc5baf" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_80e1ab1b010180149d5d6f6982" ON "screenshot_jobs" ("api_key_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_9dd0714495ae4ffcaf1ebd76d4" ON "screenshot_jobs" ("status")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_1bcf7ecfe213e586a5cd5d0d9a" ON "screenshot_jobs" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "api_keys"
            ADD CONSTRAINT "FK_decaf331589778e33441b2a8d9e" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD CONSTRAINT "FK_2cf6018ee6c60353f2bffeee05a" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD CONSTRAINT "FK_80e1ab1b010180149d5d6f69829" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP CONSTRAINT "FK_80e1ab1b010180149d5d6f69829"
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP CONSTRAINT "FK_2cf6018ee6c60353f2bffeee05a"
        `);
    await queryRunner.query(`
            ALTER TABLE "api_keys" DROP CONSTRAINT "FK_decaf331589778e33441b2a8d9e"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_1bcf7ecfe213e586a5cd5d0d9a"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_9dd0714495ae4ffcaf1ebd76d4"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_80e1ab1b010180149d5d6f6982"
        `);
    await queryRunner.query(`
            DROP TABLE "screenshot_jobs"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_f225ffb3469dfad0b61894f0d4"
        `);
    await queryRunner.query(`
            DROP TABLE "events"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_decaf331589778e33441b2a8d9"
        `);
    await queryRunner.query(`
            DROP TABLE "api_keys"
        `);
    await queryRunner.query(`
            DROP TABLE "accounts"
        `);
  }
}
