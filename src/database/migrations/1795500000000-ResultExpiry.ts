import { MigrationInterface, QueryRunner } from 'typeorm';

export class ResultExpiry1795500000000 implements MigrationInterface {
  name = 'ResultExpiry1795500000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "result_deleted_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_result_expiry" ON "screenshot_jobs" ("completed_at")
            WHERE "result_file" IS NOT NULL AND "result_deleted_at" IS NULL
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_screenshot_jobs_result_expiry"
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" DROP COLUMN "result_deleted_at"
        `);
  }
}
