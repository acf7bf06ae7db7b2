import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Crawls (CONTRACT.md, "Crawls"; docs/crawls.md): `crawls`, their pages `crawl_pages` (one row per
 * normalised URL of a crawl: UNIQUE (crawl_id, normalised_url), so a page is never discovered twice),
 * and `screenshot_jobs.crawl_id`, the crawl a job captures a page of.
 */
export class Crawls1795800498402 implements MigrationInterface {
  name = 'Crawls1795800498402';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "crawls" (
                "id" character varying(40) NOT NULL,
                "account_id" character varying(40) NOT NULL,
                "api_key_id" character varying(40) NOT NULL,
                "status" character varying(16) NOT NULL,
                "url" text NOT NULL,
                "discover" character varying(8) NOT NULL,
                "max_pages" integer NOT NULL,
                "max_depth" integer NOT NULL,
                "include" jsonb NOT NULL,
                "exclude" jsonb NOT NULL,
                "scope" character varying(8) NOT NULL,
                "respect_robots" boolean NOT NULL,
                "capture" jsonb NOT NULL,
                "seeded_at" TIMESTAMP WITH TIME ZONE,
                "stopped_reason" character varying(16),
                "bundle_file" character varying(64),
                "bundle_deleted_at" TIMESTAMP WITH TIME ZONE,
                "error" text,
                "final_counts" jsonb,
                "cancel_requested_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "started_at" TIMESTAMP WITH TIME ZONE,
                "completed_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_a77a1e18edd38b801c3c0d82ac1" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`CREATE INDEX "IDX_4a5068f6320a5b4b5cbff44e7e" ON "crawls" ("api_key_id")`);
    await queryRunner.query(`CREATE INDEX "IDX_crawls_open" ON "crawls" ("account_id") WHERE status IN ('pending', 'running')`);
    await queryRunner.query(`CREATE INDEX "IDX_crawls_account_created" ON "crawls" ("account_id", "created_at", "id")`);
    await queryRunner.query(`
            CREATE TABLE "crawl_pages" (
                "seq" BIGSERIAL NOT NULL,
                "crawl_id" character varying(40) NOT NULL,
                "normalised_url" text NOT NULL,
                "depth" integer NOT NULL,
                "job_id" character varying(40),
                "harvested" boolean NOT NULL DEFAULT false,
                CONSTRAINT "PK_8707e8cbb82d303d6df5ba72708" PRIMARY KEY ("seq")
            )
        `);
    await queryRunner.query(
      `CREATE INDEX "IDX_crawl_pages_unharvested" ON "crawl_pages" ("crawl_id") WHERE job_id IS NOT NULL AND NOT harvested`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_crawl_pages_unqueued" ON "crawl_pages" ("crawl_id", "depth", "seq") WHERE job_id IS NULL`);
    await queryRunner.query(`CREATE UNIQUE INDEX "UQ_crawl_pages_url" ON "crawl_pages" ("crawl_id", "normalised_url")`);
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" ADD "crawl_id" character varying(40)`);
    await queryRunner.query(`CREATE INDEX "IDX_screenshot_jobs_crawl" ON "screenshot_jobs" ("crawl_id") WHERE crawl_id IS NOT NULL`);
    await queryRunner.query(`
            ALTER TABLE "crawls"
            ADD CONSTRAINT "FK_edd85b685a2a72b8c1a17c1442c" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "crawls"
            ADD CONSTRAINT "FK_4a5068f6320a5b4b5cbff44e7e5" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "crawl_pages"
            ADD CONSTRAINT "FK_56d605b9fa7840a71b3a73df4ed" FOREIGN KEY ("crawl_id") REFERENCES "crawls"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "crawl_pages" DROP CONSTRAINT "FK_56d605b9fa7840a71b3a73df4ed"`);
    await queryRunner.query(`ALTER TABLE "crawls" DROP CONSTRAINT "FK_4a5068f6320a5b4b5cbff44e7e5"`);
    await queryRunner.query(`ALTER TABLE "crawls" DROP CONSTRAINT "FK_edd85b685a2a72b8c1a17c1442c"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_screenshot_jobs_crawl"`);
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "crawl_id"`);
    await queryRunner.query(`DROP TABLE "crawl_pages"`);
    await queryRunner.query(`DROP TABLE "crawls"`);
  }
}
