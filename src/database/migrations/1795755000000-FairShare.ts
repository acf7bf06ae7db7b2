import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair share across accounts (CONTRACT.md, "Tenancy: fair share and isolation"; docs/durability.md,
 * "Fair share"):
 * - `screenshot_jobs.queue_class`: 0 interactive, 1 standard, 2 batch (decided where the work is
 *   accepted), and `claimed_by`: the id of the queue entry that claimed the job (a redelivered entry
 *   takes the same job again);
 * - an index of the pending jobs by account, class and age (the claim's order, and the loose index scan
 *   that lists the accounts with queued work), one of the processing jobs by account
 *   (`ACCOUNT_MAX_RUNNING`), one by claiming entry, and one of the ended jobs by end time (the
 *   throughput behind `Retry-After`, src/acceptance/capture-backlog.ts);
 * - `account_turns`: when each account was last served a capture (round robin over accounts).
 */
export class FairShare1795755000000 implements MigrationInterface {
  name = 'FairShare1795755000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" ADD "queue_class" smallint NOT NULL DEFAULT '1'
        `);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs" ADD "claimed_by" character varying(40)
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_queued" ON "screenshot_jobs" ("account_id", "queue_class", "created_at", "id")
            WHERE status = 'pending'
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_running" ON "screenshot_jobs" ("account_id")
            WHERE status = 'processing'
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_claimed_by" ON "screenshot_jobs" ("claimed_by")
            WHERE status = 'processing'
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_completed_at" ON "screenshot_jobs" ("completed_at")
            WHERE completed_at IS NOT NULL
        `);
    await queryRunner.query(`
            CREATE TABLE "account_turns" (
                "account_id" character varying(40) NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
                "served_at" timestamp with time zone NOT NULL,
                CONSTRAINT "PK_account_turns" PRIMARY KEY ("account_id")
            )
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "account_turns"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_screenshot_jobs_completed_at"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_screenshot_jobs_claimed_by"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_screenshot_jobs_running"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_screenshot_jobs_queued"`);
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "claimed_by"`);
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "queue_class"`);
  }
}
