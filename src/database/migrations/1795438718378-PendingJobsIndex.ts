import { MigrationInterface, QueryRunner } from 'typeorm';

/** The open jobs of an account, counted against MAX_PENDING_JOBS_PER_ACCOUNT at every submission. */
export class PendingJobsIndex1795438718378 implements MigrationInterface {
  name = 'PendingJobsIndex1795438718378';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_open_by_account" ON "screenshot_jobs" ("account_id")
            WHERE "status" IN ('pending', 'processing')
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_screenshot_jobs_open_by_account"
        `);
  }
}
