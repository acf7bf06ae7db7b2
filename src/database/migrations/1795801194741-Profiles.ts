import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Browser profiles (CONTRACT.md, "Browser profiles (logged-in captures)"): saved browser states,
 * sealed, bound to their domains; and a run's `saveProfile` with the profile it saved into.
 */
export class Profiles1795801194741 implements MigrationInterface {
  name = 'Profiles1795801194741';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "profiles" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "name" character varying(100) NOT NULL,
                "allowed_domains" jsonb NOT NULL,
                "state_sealed" text NOT NULL,
                "cookie_count" integer NOT NULL,
                "origin_count" integer NOT NULL,
                "size_bytes" integer NOT NULL,
                "state_version" integer NOT NULL DEFAULT '1',
                "expired_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "last_used_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_8e520eb4da7dc01d0e190447c8e" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_9120c60f5c546096ab89ee6e08" ON "profiles" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "runs"
            ADD "save_profile" jsonb
        `);
    await queryRunner.query(`
            ALTER TABLE "runs"
            ADD "saved_profile_id" character varying(40)
        `);
    await queryRunner.query(`
            ALTER TABLE "profiles"
            ADD CONSTRAINT "FK_48f07a756b8f321aa99b06aee11" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "profiles" DROP CONSTRAINT "FK_48f07a756b8f321aa99b06aee11"
        `);
    await queryRunner.query(`
            ALTER TABLE "runs" DROP COLUMN "saved_profile_id"
        `);
    await queryRunner.query(`
            ALTER TABLE "runs" DROP COLUMN "save_profile"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_9120c60f5c546096ab89ee6e08"
        `);
    await queryRunner.query(`
            DROP TABLE "profiles"
        `);
  }
}
