import { MigrationInterface, QueryRunner } from 'typeorm';

/** Indexes for the reconciler (pending jobs by id) and the retention job (deliveries by age, usage by month or day). */
export class DurabilityIndexes1795442000000 implements MigrationInterface {
  name = 'DurabilityIndexes1795442000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "IDX_0cd99791966b9075c17834d1bb" ON "quota_usage" ("month")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_1c67fadc4fec2bfea8a334b1bc" ON "quota_usage_daily" ("day")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_d96057b9aa01448e8f01c607a9" ON "quota_warnings" ("month")
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_pending_id" ON "screenshot_jobs" ("id")
            WHERE status = 'pending'
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_04fa926c32b43d66134e059d76" ON "webhook_deliveries" ("created_at")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_04fa926c32b43d66134e059d76"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_screenshot_jobs_pending_id"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_d96057b9aa01448e8f01c607a9"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_1c67fadc4fec2bfea8a334b1bc"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_0cd99791966b9075c17834d1bb"
        `);
  }
}
