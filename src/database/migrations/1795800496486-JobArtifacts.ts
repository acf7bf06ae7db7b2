import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A screenshot job's result artifacts in one JSONB column, `artifacts`, keyed by the artifacts table's
 * kinds (src/results/artifacts.ts): `image` (was `result_file`), `thumbnail` (`thumbnail_file`),
 * `extracted` and `storage` (the columns of those names); an artifact the job lacks is absent (`{}` for
 * none). A new artifact is then a key, not a column. The expiry index of the housekeeping sweep covers
 * the jobs with any artifact whose files were not deleted yet.
 */
export class JobArtifacts1795800496486 implements MigrationInterface {
  name = 'JobArtifacts1795800496486';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" ADD "artifacts" jsonb NOT NULL DEFAULT '{}'`);
    // Key by key (not jsonb_strip_nulls, which would also drop the nulls inside `extracted` and `storage`).
    await queryRunner.query(`
            UPDATE "screenshot_jobs" SET "artifacts" =
                CASE WHEN "result_file" IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('image', "result_file") END
                || CASE WHEN "thumbnail_file" IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('thumbnail', "thumbnail_file") END
                || CASE WHEN "extracted" IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('extracted', "extracted") END
                || CASE WHEN "storage" IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('storage', "storage") END
            WHERE "result_file" IS NOT NULL OR "thumbnail_file" IS NOT NULL OR "extracted" IS NOT NULL OR "storage" IS NOT NULL
        `);
    await queryRunner.query(`DROP INDEX "public"."IDX_screenshot_jobs_result_expiry"`);
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            DROP COLUMN "result_file", DROP COLUMN "thumbnail_file", DROP COLUMN "extracted", DROP COLUMN "storage"
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_result_expiry" ON "screenshot_jobs" ("completed_at")
            WHERE "artifacts" <> '{}'::jsonb AND "result_deleted_at" IS NULL
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "screenshot_jobs"
            ADD "result_file" character varying(64), ADD "thumbnail_file" character varying(64), ADD "extracted" jsonb, ADD "storage" jsonb
        `);
    await queryRunner.query(`
            UPDATE "screenshot_jobs" SET "result_file" = "artifacts"->>'image', "thumbnail_file" = "artifacts"->>'thumbnail',
                "extracted" = "artifacts"->'extracted', "storage" = "artifacts"->'storage'
            WHERE "artifacts" <> '{}'::jsonb
        `);
    await queryRunner.query(`DROP INDEX "public"."IDX_screenshot_jobs_result_expiry"`);
    await queryRunner.query(`ALTER TABLE "screenshot_jobs" DROP COLUMN "artifacts"`);
    await queryRunner.query(`
            CREATE INDEX "IDX_screenshot_jobs_result_expiry" ON "screenshot_jobs" ("completed_at")
            WHERE "result_file" IS NOT NULL AND "result_deleted_at" IS NULL
        `);
  }
}
