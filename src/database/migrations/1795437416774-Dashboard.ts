import { MigrationInterface, QueryRunner } from 'typeorm';

export class Dashboard1795437416774 implements MigrationInterface {
  name = 'Dashboard1795437416774';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "users" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "email" character varying(320) NOT NULL,
                "password_hash" text,
                "role" character varying(16) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_97672ac88f789774dd47f7c8be3" UNIQUE ("email"),
                CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_17a709b8b6146c491e6615c29d" ON "users" ("account_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "password_links" (
                "token_hash" character(64) NOT NULL,
                "user_id" character varying(40) NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "used_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_66e3415c64e32460ee0c5cb5dd1" PRIMARY KEY ("token_hash")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_5df8ca33044c0215813e3bb68b" ON "password_links" ("user_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "dashboard_sessions" (
                "id" character varying(40) NOT NULL,
                "token_hash" character(64) NOT NULL,
                "user_id" character varying(40) NOT NULL,
                "csrf_token" character varying(64) NOT NULL,
                "user_agent" character varying(256) NOT NULL,
                "ip" character varying(64) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_09c60e2bedb298d55d575d12503" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_611ce320a648a5fb2b0087bb3e" ON "dashboard_sessions" ("token_hash")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_6b6e025460444b5f7885bfb0d4" ON "dashboard_sessions" ("user_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "sign_in_failures" (
                "id" BIGSERIAL NOT NULL,
                "email" character varying(320) NOT NULL,
                "ip" character varying(64) NOT NULL,
                "failed_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_fa4e2048c06590424ef01bfd171" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_447db52ff256b75d0967275def" ON "sign_in_failures" ("failed_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_ca103121160a09aa2aa7fd8a83" ON "sign_in_failures" ("email", "ip", "failed_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "quota_usage_daily" (
                "api_key_id" character varying(40) NOT NULL,
                "day" date NOT NULL,
                "used" integer NOT NULL,
                CONSTRAINT "PK_233feb7f9af40e84c8c3375fe40" PRIMARY KEY ("api_key_id", "day")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "api_keys"
            ADD "last_used_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "users"
            ADD CONSTRAINT "FK_17a709b8b6146c491e6615c29d7" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "password_links"
            ADD CONSTRAINT "FK_5df8ca33044c0215813e3bb68be" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "dashboard_sessions"
            ADD CONSTRAINT "FK_6b6e025460444b5f7885bfb0d43" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "quota_usage_daily"
            ADD CONSTRAINT "FK_18ea0b545120e1ede2a1c72eaa2" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "quota_usage_daily" DROP CONSTRAINT "FK_18ea0b545120e1ede2a1c72eaa2"
        `);
    await queryRunner.query(`
            ALTER TABLE "dashboard_sessions" DROP CONSTRAINT "FK_6b6e025460444b5f7885bfb0d43"
        `);
    await queryRunner.query(`
            ALTER TABLE "password_links" DROP CONSTRAINT "FK_5df8ca33044c0215813e3bb68be"
        `);
    await queryRunner.query(`
            ALTER TABLE "users" DROP CONSTRAINT "FK_17a709b8b6146c491e6615c29d7"
        `);
    await queryRunner.query(`
            ALTER TABLE "api_keys" DROP COLUMN "last_used_at"
        `);
    await queryRunner.query(`
            DROP TABLE "quota_usage_daily"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_ca103121160a09aa2aa7fd8a83"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_447db52ff256b75d0967275def"
        `);
    await queryRunner.query(`
            DROP TABLE "sign_in_failures"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_6b6e025460444b5f7885bfb0d4"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_611ce320a648a5fb2b0087bb3e"
        `);
    await queryRunner.query(`
            DROP TABLE "dashboard_sessions"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_5df8ca33044c0215813e3bb68b"
        `);
    await queryRunner.query(`
            DROP TABLE "password_links"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_17a709b8b6146c491e6615c29d"
        `);
    await queryRunner.query(`
            DROP TABLE "users"
        `);
  }
}
