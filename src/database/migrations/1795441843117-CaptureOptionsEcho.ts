import { MigrationInterface, QueryRunner } from 'typeorm';

/** A job echoes the options it was given, says whether it came from the capture cache, and is found by its cache key. */
export class CaptureOptionsEcho1795441843117 implements MigrationInterface {
  name = 'CaptureOptionsEcho1795441843117';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "requested_options" jsonb
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "cache_key" character varying(64)
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "cached" boolean NOT NULL DEFAULT false
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_cache" ON "screenshot_jobs" ("account_id", "cache_key", "completed_at")
            WHERE "status" = 'done'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_screenshot_jobs_cache"
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP COLUMN "cached"
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP COLUMN "cache_key"
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP COLUMN "requested_options"
        `);
  }
}
